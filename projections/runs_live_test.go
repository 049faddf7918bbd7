package projections

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// TestLiveHoldsTheActiveRuns: the states kept in memory are those of the active runs only (an
// ended run's leaves), and a reset of the projection forgets them.
func TestLiveHoldsTheActiveRuns(t *testing.T) {
	ctx := context.Background()
	l := eventlogtest.Open(t)
	agg := eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: "t"}
	var seq uint64
	for _, e := range []struct {
		typ  string
		data any
	}{
		{engine.ThreadCreated, engine.ThreadCreatedData{}},
		{engine.RunCreatedEvent, engine.RunCreatedData{Run: engine.RunRecord{Run: engine.Run{RunID: "0190a000-0000-7000-8000-000000000001"}}}},
		{engine.RunCreatedEvent, engine.RunCreatedData{Run: engine.RunRecord{Run: engine.Run{RunID: "0190a000-0000-7000-8000-000000000002"}}}},
		{engine.RunStartedEvent, engine.RunStartedData{RunID: "0190a000-0000-7000-8000-000000000001", Attempt: 1}},
		{engine.RunFinishedEvent, engine.RunFinishedData{RunID: "0190a000-0000-7000-8000-000000000001", Status: engine.RunSuccess}},
		{engine.RunStartedEvent, engine.RunStartedData{RunID: "0190a000-0000-7000-8000-000000000002", Attempt: 1}},
	} {
		ev, err := eventlog.New(agg, e.typ, e.data)
		if err != nil {
			t.Fatal(err)
		}
		if seq, err = l.Append(ctx, ev, eventlog.Any); err != nil {
			t.Fatal(err)
		}
	}
	db, err := OpenDB(filepath.Join(t.TempDir(), "p.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	runs := NewRuns(db)
	p := NewProjector(db, l, eventlog.RuntimeStream, runs)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Run(runCtx) }()
	if err := p.WaitFor(ctx, seq); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done

	runs.liveMu.RLock()
	live := len(runs.live)
	st, ok := runs.live[watchKey("default", "t", "0190a000-0000-7000-8000-000000000002")]
	runs.liveMu.RUnlock()
	if live != 1 || !ok || st.Status != engine.RunRunning || st.Attempt != 1 {
		t.Fatalf("%d states in memory, the active run's %+v %v", live, st, ok)
	}
	if err := p.Reset(); err != nil {
		t.Fatal(err)
	}
	runs.liveMu.RLock()
	live = len(runs.live)
	runs.liveMu.RUnlock()
	if live != 0 {
		t.Fatalf("%d states in memory after a reset", live)
	}
}
