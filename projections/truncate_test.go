package projections_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
)

// TestTruncationEmptiesWhatItNamesAndRebuildsAlike: a truncation empties the projections its
// flags name and nothing else; a run active across it ends without a skipped event; what comes
// after it is folded as usual; and a rebuild of the log holds exactly what the live file holds.
func TestTruncationEmptiesWhatItNamesAndRebuildsAlike(t *testing.T) {
	l := eventlogtest.Open(t)
	th := func(id string) eventlog.Aggregate {
		return eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: id}
	}
	system := eventlog.Aggregate{Kind: engine.SystemKind, Tenant: "default", ID: engine.SystemID}
	const runID = "0190a000-0000-7000-8000-000000000001"
	open := func(name string) (*projections.DB, []projections.Projection, *projections.Projector) {
		db := openDB(t, filepath.Join(t.TempDir(), name+".db"))
		ps := []projections.Projection{projections.NewThreads(db), projections.NewRuns(db), projections.NewAssistants(db), projections.NewStore(db), projections.NewCheckpoints(db)}
		p := projections.NewProjector(db, l, eventlog.RuntimeStream, ps...)
		run(t, p)
		return db, ps, p
	}
	live, liveps, p := open("live")
	var last uint64
	add := func(agg eventlog.Aggregate, typ string, data any) {
		last = appendEvent(t, l, agg, typ, data)
		waitFor(t, p, last) // applied one by one, as live traffic is
	}
	add(th("a"), engine.ThreadCreated, engine.ThreadCreatedData{Metadata: map[string]any{"k": 1}})
	add(th("a"), engine.RunCreatedEvent, engine.RunCreatedData{Run: engine.RunRecord{Run: engine.Run{RunID: runID, AssistantID: "x"}}})
	add(th("a"), engine.RunStartedEvent, engine.RunStartedData{RunID: runID, Attempt: 1})
	add(eventlog.Aggregate{Kind: "assistant", Tenant: "default", ID: "keep"}, engine.AssistantCreated, engine.AssistantCreatedData{})
	add(eventlog.Aggregate{Kind: "assistant", Tenant: "default", ID: "mine"}, engine.AssistantCreated, engine.AssistantCreatedData{})
	add(system, engine.Truncated, engine.TruncatedData{Runs: true, Threads: true, Assistants: true, KeepAssistants: []string{"keep"}})
	add(th("a"), engine.RunFinishedEvent, engine.RunFinishedData{RunID: runID, Status: engine.RunInterrupted})
	add(th("b"), engine.ThreadCreated, engine.ThreadCreatedData{})

	rebuilt, rebuiltps, p2 := open("rebuilt")
	waitFor(t, p2, last)
	for _, pr := range []*projections.Projector{p, p2} {
		if err := pr.Halted(); err != nil {
			t.Fatalf("projection halted: %v", err)
		}
	}
	dumps := []string{dump(t, live, liveps...), dump(t, rebuilt, rebuiltps...)}
	got := dumps[0]
	if dumps[1] != got {
		t.Errorf("rebuild differs from live:\nrebuilt:\n%s\nlive:\n%s", dumps[1], got)
	}
	for _, gone := range []string{"default/a", runID, "default/mine"} {
		if strings.Contains(got, gone) {
			t.Errorf("%s left after the truncation:\n%s", gone, got)
		}
	}
	for _, kept := range []string{"default/b", "default/keep"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%s missing:\n%s", kept, got)
		}
	}
}

// TestRunEndedInTheBatchThatCreatedItSettlesTheThread: a run created and ended in one
// transaction (a rebuild folds thousands of events in each) leaves its thread idle, not busy.
func TestRunEndedInTheBatchThatCreatedItSettlesTheThread(t *testing.T) {
	l := eventlogtest.Open(t)
	agg := eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: "a"}
	const runID = "0190a000-0000-7000-8000-000000000001"
	appendEvent(t, l, agg, engine.ThreadCreated, engine.ThreadCreatedData{})
	appendEvent(t, l, agg, engine.RunCreatedEvent, engine.RunCreatedData{Run: engine.RunRecord{Run: engine.Run{RunID: runID, AssistantID: "x"}}})
	appendEvent(t, l, agg, engine.RunStartedEvent, engine.RunStartedData{RunID: runID, Attempt: 1})
	last := appendEvent(t, l, agg, engine.RunFinishedEvent, engine.RunFinishedData{RunID: runID, Status: engine.RunSuccess})
	db := openDB(t, filepath.Join(t.TempDir(), "p.db"))
	threads := projections.NewThreads(db)
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, threads, projections.NewRuns(db))
	run(t, p) // started after the appends: one batch
	waitFor(t, p, last)
	if th, ok, err := threads.Get("default", "a"); err != nil || !ok || th.Status != engine.ThreadIdle {
		t.Fatalf("thread after its run: %+v %v %v", th.Status, ok, err)
	}
}
