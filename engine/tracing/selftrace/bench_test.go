package selftrace

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
	"github.com/jetgraph/jetgraph/projections/traces"
)

// echoRunPosts is the self-trace of one echo-like run (a root and one node span), as take
// gives it at the run's end.
func echoRunPosts(b *testing.B) ([]byte, [][]byte) {
	rec := engine.RunRecord{Run: engine.Run{RunID: uuid.Must(uuid.NewV7()).String(), ThreadID: uuid.NewString(), AssistantID: "echo",
		Kwargs: engine.RunKwargs{Input: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}},
			Config: map[string]any{"configurable": map[string]any{"graph_id": "echo"}}}}}
	rt := newRunTrace(DefaultProject, rootSpan(rec, time.Now()))
	in := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	rt.handle(graph.Event{Kind: graph.KindTaskStart, Data: graph.TaskStart{ID: "t0", Name: graph.Start, Input: in}})
	rt.handle(graph.Event{Kind: graph.KindTaskStart, Data: graph.TaskStart{ID: "t1", Name: "echo", Input: in, Triggers: []string{"branch:to:echo"}}})
	rt.handle(graph.Event{Kind: graph.KindTaskResult, Data: graph.TaskResult{ID: "t1", Name: "echo", Result: in}})
	rt.handle(graph.Event{Kind: graph.KindValues, Data: graph.State(in)})
	rt.finish(engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunSuccess}, time.Now())
	var out [][]byte
	for _, p := range rt.take() {
		out = append(out, append(append([]byte(`{"run":`), p.JSON...), '}')) // as ingestion's event
	}
	if len(out) != 2 {
		b.Fatalf("%d posts, want 2", len(out))
	}
	return []byte(rec.RunID), out
}

// BenchmarkEchoRunSelfTrace is the self-trace path of one echo-like run without the log: the
// spans built and encoded (selftrace), then their events prepared and folded into the trace
// projection in one bbolt transaction (projections/traces), as the projector does.
//
// On the 2-core shared machine, -benchtime 3000x: 803 allocs/op, 126 KB/op at f8529a7; 770
// allocs/op after the payload's string fields and names were read without boxing (6ea8037,
// 1835e77). About half of what is left is bbolt (the per-span index, counter and roll-up puts).
func BenchmarkEchoRunSelfTrace(b *testing.B) {
	db, err := projections.OpenDB(filepath.Join(b.TempDir(), "p.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	tr := traces.NewTraces(db, nil, nil)
	if err := tr.View(func(*traces.TraceView) error { return nil }); err != nil { // creates the buckets
		b.Fatal(err)
	}
	b.ReportAllocs()
	seq := uint64(0)
	for b.Loop() {
		traceID, posts := echoRunPosts(b)
		now := time.Now()
		events := make([]eventlog.Event, len(posts))
		prepared := make([]any, len(posts))
		for i, p := range posts {
			seq++
			events[i] = eventlog.Event{ID: eventlog.NewID(now), Type: traces.RunPosted, Version: 1, Seq: seq, Time: now,
				Aggregate: eventlog.Aggregate{Kind: traces.TraceKind, Tenant: engine.DefaultTenant, ID: string(traceID)}, Data: p}
			prepared[i] = tr.Prepare(events[i])
		}
		err := db.Update(func(tx *bbolt.Tx) error {
			for i, e := range events {
				if err := tr.ApplyPrepared(tx, e, prepared[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
