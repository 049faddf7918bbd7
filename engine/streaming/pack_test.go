package streaming

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// TestPackedEventsFollowAndResume holds a run's sender busy while the run emits, so its events
// are packed, and checks that a follower gets every event once, in order, and that resuming
// after any frame sends exactly the frames after it.
func TestPackedEventsFollowAndResume(t *testing.T) {
	l, s := openBus(t, 0, nil)
	ctx := context.Background()
	rec := testRun("custom")
	p := s.newPub(ctx, rec)
	p.q.mu.Lock()
	p.q.running = true // as if a message were awaiting its acknowledgement: everything waits
	p.q.mu.Unlock()
	const n = maxPackRecords + 8
	p.publish(KindMetadata, nil, map[string]any{"run_id": rec.RunID, "attempt": 1}, &RunInfo{ThreadID: rec.ThreadID, StreamMode: []engine.StreamMode{engine.StreamCustom}})
	for i := range n {
		p.sink(graph.Event{Kind: graph.KindCustom, Data: i})
	}
	p.publish("end", nil, nil, nil)
	p.q.mu.Lock()
	p.q.running = false
	p.q.mu.Unlock()
	s.senders.Add(1) // as add does when it starts the sender
	p.q.run()        // sends what waits, packed
	p.flush()

	st, err := eventlogtest.JetStream(l).Stream(ctx, eventlog.OutputStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 2 { // maxPackRecords, then the rest
		t.Errorf("%d events stored in %d messages, want 2", n+2, info.State.Msgs)
	}

	all := follow(t, s, RunRequest{ThreadID: rec.ThreadID, RunID: rec.RunID, Modes: []engine.StreamMode{"custom"}})
	want := "metadata" + strings.Repeat(",custom", n) + ",end"
	if got := strings.Join(all.events(), ","); got != want {
		t.Fatalf("events = %s", got)
	}
	ids := map[string]bool{}
	for i, f := range all.frames {
		if ids[f.ID] {
			t.Errorf("frame %d repeats id %s", i, f.ID)
		}
		ids[f.ID] = true
		if f.Event == "custom" && string(f.Data) != fmt.Sprint(i-1) {
			t.Errorf("frame %d = %s, want %d", i, f.Data, i-1)
		}
	}
	for k := range all.frames {
		after, _, err := ParseEventID(all.frames[k].ID)
		if err != nil {
			t.Fatal(err)
		}
		later := follow(t, s, RunRequest{ThreadID: rec.ThreadID, RunID: rec.RunID, Modes: []engine.StreamMode{"custom"}, After: after, Resume: true})
		if len(later.frames) != len(all.frames)-k-1 {
			t.Fatalf("resumed after frame %d: %d frames, want %d", k, len(later.frames), len(all.frames)-k-1)
		}
		for i, f := range later.frames {
			if w := all.frames[k+1+i]; f.ID != w.ID || !bytes.Equal(f.Data, w.Data) {
				t.Errorf("resumed after frame %d: frame %d = %s %s, want %s %s", k, i, f.ID, f.Data, w.ID, w.Data)
			}
		}
	}
}

func TestRecords(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
		err        string
	}{
		{"single event", "jg1\ncustom\n\n\n\n1", []string{"jg1\ncustom\n\n\n\n1"}, ""},
		{"packed", "jgm\n3\nabc2\nde", []string{"abc", "de"}, ""},
		{"packed, empty record", "jgm\n0\n1\nx", []string{"", "x"}, ""},
		{"length past the end", "jgm\n4\nabc", nil, "bad record length"},
		{"negative length", "jgm\n-1\nabc", nil, "bad record length"},
		{"length not a number", "jgm\nx\nabc", nil, "bad record length"},
		{"no length line", "jgm\n3", nil, "cut short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := records([]byte(tt.body))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("records = %q, want %q", got, tt.want)
			}
			for i := range got {
				if string(got[i]) != tt.want[i] {
					t.Errorf("record %d = %q, want %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}
