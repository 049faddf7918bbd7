package projections

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// TestRunHooksAndLiveCounts: the hooks the run metrics read are told of each run created and
// ended (with its status and how long it ran) once its transaction commits, and LiveCounts
// counts the pending and running runs, whether the events come in one batch or several.
func TestRunHooksAndLiveCounts(t *testing.T) {
	ctx := context.Background()
	l := eventlogtest.Open(t)
	agg := eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: "t"}
	id := func(n string) string { return "0190a000-0000-7000-8000-00000000000" + n }
	start := time.Now()
	var seq uint64
	for _, e := range []struct {
		typ  string
		at   time.Time
		data any
	}{
		{engine.ThreadCreated, start, engine.ThreadCreatedData{}},
		{engine.RunCreatedEvent, start, engine.RunCreatedData{Run: engine.RunRecord{Run: engine.Run{RunID: id("1")}}}},
		{engine.RunCreatedEvent, start, engine.RunCreatedData{Run: engine.RunRecord{Run: engine.Run{RunID: id("2")}}}},
		{engine.RunCreatedEvent, start, engine.RunCreatedData{Run: engine.RunRecord{Run: engine.Run{RunID: id("3")}}}},
		{engine.RunStartedEvent, start, engine.RunStartedData{RunID: id("1"), Attempt: 1}},
		{engine.RunFinishedEvent, start.Add(1500 * time.Millisecond), engine.RunFinishedData{RunID: id("1"), Status: engine.RunSuccess}},
		{engine.RunStartedEvent, start, engine.RunStartedData{RunID: id("2"), Attempt: 1}},
	} {
		ev, err := eventlog.New(agg, e.typ, e.data)
		if err != nil {
			t.Fatal(err)
		}
		ev.Time = e.at
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
	var mu sync.Mutex
	created := 0
	ended := map[string]int{}
	var ran time.Duration
	runs.OnRunCreated = func() { mu.Lock(); created++; mu.Unlock() }
	runs.OnRunEnded = func(status string, d time.Duration) { mu.Lock(); ended[status]++; ran = d; mu.Unlock() }
	p := NewProjector(db, l, eventlog.RuntimeStream, runs)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Run(runCtx) }()
	if err := p.WaitFor(ctx, seq); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done

	mu.Lock()
	defer mu.Unlock()
	if created != 3 || len(ended) != 1 || ended[engine.RunSuccess] != 1 {
		t.Fatalf("created %d, ended %v; want 3 created, 1 success", created, ended)
	}
	if ran < time.Second || ran > 2*time.Second {
		t.Fatalf("the run ran %s, want 1.5s", ran)
	}
	if pending, running := runs.LiveCounts(); pending != 1 || running != 1 {
		t.Fatalf("LiveCounts = %d pending, %d running; want 1 and 1", pending, running)
	}
}
