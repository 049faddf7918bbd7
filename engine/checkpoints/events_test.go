package checkpoints_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/checkpoints"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
)

func TestCheckpointData(t *testing.T) {
	cp := newCP(map[string]string{"a": `1`, "b": `[2]`}, map[string]int64{"a": 3, "b": 1, "gone": 2})
	parent := &graph.Ref{ThreadID: "t", ID: "p"}
	tests := []struct {
		name    string
		changed []string
		full    bool
		want    string
	}{
		{"full: every channel with a value", nil, true, `{"a":{"version":3,"value":1},"b":{"version":1,"value":[2]}}`},
		{"diff: the changed ones, a removed value as a bare version", []string{"a", "gone"}, false, `{"a":{"version":3,"value":1},"gone":{"version":2}}`},
		{"diff: nothing changed", nil, false, `{}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := checkpoints.CheckpointData(graph.Ref{ThreadID: "t", NS: "n", ID: cp.ID}, cp, map[string]any{"step": 1}, parent, tc.changed, tc.full)
			if err != nil {
				t.Fatal(err)
			}
			blobs, _ := json.Marshal(d.Blobs)
			if string(blobs) != tc.want || d.Full != tc.full || d.NS != "n" || d.Parent.ID != "p" || string(d.Metadata) != `{"step":1}` {
				t.Fatalf("blobs %s full %v ns %q parent %+v md %s", blobs, d.Full, d.NS, d.Parent, d.Metadata)
			}
		})
	}
	if _, err := checkpoints.CheckpointData(graph.Ref{ThreadID: "t", ID: "other"}, cp, nil, nil, nil, true); err == nil {
		t.Fatal("a ref naming another checkpoint was accepted")
	}
	w := checkpoints.WritesData(graph.Ref{ThreadID: "t", NS: "n", ID: "c"}, []graph.PendingWrite{{TaskID: "x", Channel: "a"}})
	if raw, _ := json.Marshal(w); string(raw) != `{"ns":"n","checkpoint_id":"c","writes":[{"task_id":"x","channel":"a","value":null}]}` {
		t.Fatalf("writes: %s", raw)
	}
}

func TestRethread(t *testing.T) {
	md := json.RawMessage(`{"thread_id":"src","big":12345678901234567890}`)
	d := engine.CheckpointData{NS: "", Metadata: md, Parent: &engine.CheckpointRef{ThreadID: "src", ID: "p"},
		Checkpoint: engine.CheckpointHeader{ID: "c"}, Blobs: map[string]engine.BlobData{"a": {Version: 1, Ref: "sha256:x"}}}
	e, err := eventlog.New(checkpoints.Aggregate("acme", "src"), engine.ThreadCheckpoint, d)
	if err != nil {
		t.Fatal(err)
	}
	out, ok, err := checkpoints.Rethread(e, "dst")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if out.ID == e.ID || out.Aggregate != checkpoints.Aggregate("acme", "dst") || out.Type != engine.ThreadCheckpoint {
		t.Fatalf("event: %+v", out)
	}
	v, _ := checkpoints.Decode(out)
	got := v.(*engine.CheckpointData)
	if got.Parent.ThreadID != "dst" || got.Checkpoint.ID != "c" || got.Blobs["a"].Ref != "sha256:x" ||
		string(got.Metadata) != `{"big":12345678901234567890,"thread_id":"dst"}` {
		t.Fatalf("payload: %+v md %s", got, got.Metadata)
	}
	created, _ := eventlog.New(checkpoints.Aggregate("acme", "src"), engine.ThreadCreated, engine.ThreadCreatedData{})
	if _, ok, err := checkpoints.Rethread(created, "dst"); ok || err != nil {
		t.Fatal("only checkpoint and writes events are copied")
	}
}

// TestCheckpointDataStateLimit checks that a state up to engine.MaxStateBytes is saved and one
// over it is refused (TooLarge, naming the limit), whatever the channels it is spread over.
func TestCheckpointDataStateLimit(t *testing.T) {
	half := `"` + strings.Repeat("x", engine.MaxStateBytes/2-2) + `"`
	tests := []struct {
		name   string
		values map[string]string
		ok     bool
	}{
		{"at the limit over two channels", map[string]string{"a": half, "b": half}, true},
		{"one byte over", map[string]string{"a": half, "b": half, "c": `1`}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cp := newCP(tc.values, map[string]int64{"a": 1, "b": 1, "c": 1})
			_, err := checkpoints.CheckpointData(graph.Ref{ThreadID: "t", ID: cp.ID}, cp, nil, nil, nil, true)
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && (!engine.Is(engine.TooLarge, err) || !strings.Contains(err.Error(), engine.MaxStateText)) {
				t.Fatalf("err = %v, want TooLarge naming %s", err, engine.MaxStateText)
			}
		})
	}
}
