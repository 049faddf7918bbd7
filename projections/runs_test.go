package projections_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
)

// TestRunsActiveIsTheQueue: a thread's active runs, oldest first, are the same whether read
// through the threads projection's index of active runs or by scanning the thread's runs.
func TestRunsActiveIsTheQueue(t *testing.T) {
	l := eventlogtest.Open(t)
	agg := eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: "q"}
	var seq uint64
	add := func(typ string, data any) { seq = appendEvent(t, l, agg, typ, data) }
	add(engine.ThreadCreated, engine.ThreadCreatedData{})
	ids := make([]string, 5)
	for i := range ids {
		ids[i] = fmt.Sprintf("0190a000-0000-7000-8000-00000000000%d", i)
		add(engine.RunCreatedEvent, engine.RunCreatedData{Run: engine.RunRecord{Run: engine.Run{RunID: ids[i], AssistantID: "a"}}})
	}
	add(engine.RunStartedEvent, engine.RunStartedData{RunID: ids[0], Attempt: 1})
	add(engine.RunFinishedEvent, engine.RunFinishedData{RunID: ids[0], Status: engine.RunSuccess})
	add(engine.RunCancelRequestedEvent, engine.RunCancelRequestedData{RunID: ids[2], Action: "interrupt"})
	add(engine.RunDeletedEvent, engine.RunDeletedData{RunID: ids[3]})
	add(engine.RunStartedEvent, engine.RunStartedData{RunID: ids[1], Attempt: 1})
	want := []string{ids[1], ids[2], ids[4]}

	for _, tc := range []struct {
		name    string
		threads bool // with the threads projection, whose index Active reads
	}{
		{"index of active runs", true},
		{"scan of the thread's runs", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openDB(t, filepath.Join(t.TempDir(), "p.db"))
			runs := projections.NewRuns(db)
			ps := []projections.Projection{runs}
			if tc.threads {
				ps = append(ps, projections.NewThreads(db))
			}
			p := projections.NewProjector(db, l, eventlog.RuntimeStream, ps...)
			run(t, p)
			waitFor(t, p, seq)
			active, err := runs.Active("default", "q")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range active {
				got = append(got, r.RunID)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("active runs %v, want %v", got, want)
			}
			if active[1].Cancel != "interrupt" || active[0].Status != engine.RunRunning {
				t.Fatalf("records read: %+v", active)
			}
			gotIDs, err := runs.ActiveIDs("default", "q")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(gotIDs, want) {
				t.Fatalf("active run ids %v, want %v", gotIDs, want)
			}
			if tc.threads {
				// The folds of this process changed the thread's runs: answered from memory,
				// as the file answers.
				views := projections.ReadTransactions()
				if again, _ := runs.ActiveIDs("default", "q"); !slices.Equal(again, want) || projections.ReadTransactions() != views {
					t.Fatalf("active run ids from memory: %v (%d views)", again, projections.ReadTransactions()-views)
				}
				if file, _ := projections.NewRuns(db).ActiveIDs("default", "q"); !slices.Equal(file, want) {
					t.Fatalf("active run ids in the file: %v", file)
				}
			}
			// The next run, but the one a worker has just ended, read whole.
			for _, next := range []struct{ skip, want, status string }{
				{"", ids[1], engine.RunRunning},
				{ids[1], ids[2], engine.RunPending},
			} {
				got, ok, err := runs.Next("default", "q", next.skip)
				if err != nil || !ok || got.RunID != next.want || got.Status != next.status || got.AssistantID != "a" {
					t.Fatalf("next but %q: %+v %v %v, want %s %s", next.skip, got, ok, err, next.want, next.status)
				}
			}
			if _, ok, err := runs.Next("default", "empty", ""); err != nil || ok {
				t.Fatalf("next of a thread without runs: %v %v", ok, err)
			}
			// The states kept in memory are those in the file (a new Runs on the file has none
			// in memory).
			fromFile := projections.NewRuns(db)
			for _, id := range ids {
				mem, memOK, err1 := runs.State("default", "q", id)
				file, fileOK, err2 := fromFile.State("default", "q", id)
				if err1 != nil || err2 != nil || memOK != fileOK || !reflect.DeepEqual(mem, file) {
					t.Fatalf("run %s: state %+v %v %v, in the file %+v %v %v", id, mem, memOK, err1, file, fileOK, err2)
				}
			}
			// A run's record is the one created with its transitions since.
			done, ok, err := runs.Get("default", "q", ids[0])
			if err != nil || !ok {
				t.Fatalf("get ended run: %v %v", ok, err)
			}
			if done.Status != engine.RunSuccess || done.Attempt != 1 || done.AssistantID != "a" ||
				done.StartedAt.IsZero() || done.EndedAt.IsZero() {
				t.Fatalf("ended run read as %+v", done)
			}
			st, ok, err := runs.State("default", "q", ids[2])
			if err != nil || !ok || st.Status != engine.RunPending || st.Cancel != "interrupt" {
				t.Fatalf("status of the run asked to cancel: %+v %v %v", st, ok, err)
			}
			if _, ok, err := runs.Get("default", "q", ids[3]); err != nil || ok {
				t.Fatalf("deleted run still read: %v %v", ok, err)
			}
			list, err := runs.List("default", "q", engine.RunPending, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 2 || list[0].RunID != ids[4] || list[1].RunID != ids[2] {
				t.Fatalf("pending runs listed %+v", list)
			}
		})
	}
}

// TestRunCreatedKeptOrRewritten: a run_created record that is already what the fold writes is
// kept as it came; one that is not (no thread, no status, no times) is completed. Both read the
// same.
func TestRunCreatedKeptOrRewritten(t *testing.T) {
	l := eventlogtest.Open(t)
	at := engine.At(time.Date(2026, 11, 22, 10, 0, 0, 123456000, time.UTC))
	kwargs := engine.RunKwargs{Input: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}}
	var seq uint64
	for _, thread := range []string{"whole", "bare"} {
		agg := eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: thread}
		run := engine.RunRecord{Run: engine.Run{RunID: "0190a000-0000-7000-8000-000000000001", AssistantID: "a",
			Metadata: map[string]any{}, Kwargs: kwargs, CreatedAt: at}}
		if thread == "whole" {
			run.ThreadID, run.Status, run.UpdatedAt = thread, engine.RunPending, at
		}
		appendEvent(t, l, agg, engine.ThreadCreated, engine.ThreadCreatedData{})
		seq = appendEvent(t, l, agg, engine.RunCreatedEvent, engine.RunCreatedData{Run: run})
	}
	db := openDB(t, filepath.Join(t.TempDir(), "p.db"))
	runs := projections.NewRuns(db)
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, runs)
	run(t, p)
	waitFor(t, p, seq)
	whole, ok1, err1 := runs.Get("default", "whole", "0190a000-0000-7000-8000-000000000001")
	bare, ok2, err2 := runs.Get("default", "bare", "0190a000-0000-7000-8000-000000000001")
	if err1 != nil || err2 != nil || !ok1 || !ok2 {
		t.Fatalf("get: %v %v %v %v", ok1, err1, ok2, err2)
	}
	if bare.ThreadID != "bare" || bare.Status != engine.RunPending || !bare.UpdatedAt.Equal(at.Time) {
		t.Fatalf("completed record %+v", bare)
	}
	bare.ThreadID = "whole"
	if !reflect.DeepEqual(whole, bare) {
		t.Fatalf("kept record\n%+v\ncompleted record\n%+v", whole, bare)
	}
}
