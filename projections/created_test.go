package projections

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

// TestDecodeCreated: what the threads and runs folds take from a run_created payload, read once.
func TestDecodeCreated(t *testing.T) {
	at := engine.At(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	const current = `{"run":{"run_id":"r1","thread_id":"t1","assistant_id":"a1","created_at":"2026-11-28T11:00:00.000000+00:00",` +
		`"updated_at":"2026-11-28T11:00:00.000000+00:00","status":"pending","kwargs":{"config":{"configurable":{"graph_id":"echo"}},"input":{"x":1}}},` +
		`"thread_config":{"k":"v"}}`
	tests := []struct {
		name, data string
		wantRaw    string // "" : not checked
		wantGraph  string
		wantErr    bool
	}{
		{name: "a record of this build is kept as it came", data: current,
			wantRaw:   `{"run_id":"r1","thread_id":"t1","assistant_id":"a1","created_at":"2026-11-28T11:00:00.000000+00:00","updated_at":"2026-11-28T11:00:00.000000+00:00","status":"pending","kwargs":{"config":{"configurable":{"graph_id":"echo"}},"input":{"x":1}}}`,
			wantGraph: "echo"},
		{name: "an older record is completed", data: `{"run":{"run_id":"r1","assistant_id":"a1","kwargs":{"config":{"configurable":{"graph_id":"echo"}}}}}`,
			wantGraph: "echo"},
		{name: "a config that is no object is read whole", data: `{"run":{"run_id":"r1","assistant_id":"a1","kwargs":{"config":{"configurable":"x"}}}}`},
		{name: "without run_id", data: `{"run":{"assistant_id":"a1"}}`, wantErr: true},
		{name: "not JSON", data: `{"run":`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := decodeCreated([]byte(tt.data), "t1", at)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if tt.wantRaw != "" && string(c.Raw) != tt.wantRaw {
				t.Errorf("record\n%s\nwant\n%s", c.Raw, tt.wantRaw)
			}
			var rec engine.RunRecord
			if err := json.Unmarshal(c.Raw, &rec); err != nil {
				t.Fatalf("record %s: %v", c.Raw, err)
			}
			if rec.RunID != "r1" || rec.ThreadID != "t1" || rec.Status != engine.RunPending || rec.CreatedAt.IsZero() ||
				!rec.UpdatedAt.Equal(rec.CreatedAt.Time) || c.ID != "r1" || c.State.Status != engine.RunPending {
				t.Errorf("record %s, state %+v", c.Raw, c.State)
			}
			if c.Graph.RunID != "r1" || c.Graph.AssistantID != "a1" || c.Graph.GraphID != tt.wantGraph {
				t.Errorf("graph %+v, want graph id %q", c.Graph, tt.wantGraph)
			}
		})
	}
}

// FuzzDecodeCreated: any payload is read or refused, never a panic, and what is read is a record
// of the thread, pending, with an id.
func FuzzDecodeCreated(f *testing.F) {
	f.Add([]byte(`{"run":{"run_id":"r1","thread_id":"t1","status":"pending","kwargs":{"config":{"configurable":{"graph_id":"echo"}}}},"thread_config":{}}`))
	f.Add([]byte(`{"run":{"run_id":"r1","kwargs":{"config":null}}}`))
	f.Add([]byte(`{"run":null}`))
	at := engine.At(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decodeCreated(data, "t1", at)
		if err != nil {
			return
		}
		var head struct {
			RunID    string `json:"run_id"`
			ThreadID string `json:"thread_id"`
			Status   string `json:"status"`
		}
		if c.ID == "" || c.State.Status != engine.RunPending || decodeJSON(c.Raw, &head) != nil ||
			head.RunID != c.ID || head.ThreadID != "t1" || head.Status != engine.RunPending {
			t.Fatalf("%s read as %+v (record %s)", data, c, c.Raw)
		}
	})
}
