package projections

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// heldFixture runs the threads and runs projections over a fresh log.
type heldFixture struct {
	t    *testing.T
	l    *eventlog.Log
	p    *Projector
	runs *Runs
	agg  eventlog.Aggregate
}

func newHeldFixture(t *testing.T) *heldFixture {
	t.Helper()
	db, err := OpenDB(filepath.Join(t.TempDir(), "p.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	f := &heldFixture{t: t, l: eventlogtest.Open(t), runs: NewRuns(db),
		agg: eventlog.Aggregate{Kind: "thread", Tenant: "acme", ID: "0190a000-0000-7000-8000-0000000000aa"}}
	f.p = NewProjector(db, f.l, eventlog.RuntimeStream, NewThreads(db), f.runs)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = f.p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	f.append(engine.ThreadCreated, engine.ThreadCreatedData{})
	return f
}

// append appends an event of the fixture's thread and waits until it is folded.
func (f *heldFixture) append(typ string, data any) {
	f.t.Helper()
	f.appendTo(f.agg, typ, data)
}

// appendTo appends an event of agg and waits until it is folded.
func (f *heldFixture) appendTo(agg eventlog.Aggregate, typ string, data any) {
	f.t.Helper()
	e, err := eventlog.New(agg, typ, data)
	if err != nil {
		f.t.Fatal(err)
	}
	seq, err := f.l.Append(context.Background(), e, eventlog.Any)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.p.WaitFor(context.Background(), seq); err != nil {
		f.t.Fatal(err)
	}
}

// create records rec as a run service does (appended, folded) and holds it.
func (f *heldFixture) create(rec engine.RunRecord) {
	f.t.Helper()
	f.append(engine.RunCreatedEvent, engine.RunCreatedData{Run: rec})
	f.runs.Hold(f.agg.Tenant, rec)
}

func (f *heldFixture) held(run string) bool {
	f.runs.liveMu.RLock()
	defer f.runs.liveMu.RUnlock()
	_, ok := f.runs.held[watchKey(f.agg.Tenant, f.agg.ID, run)]
	return ok
}

// heldRecord is a run record as runs.Service makes one, with JSON values of every kind.
func heldRecord(thread, run string, input any) engine.RunRecord {
	now := engine.At(time.Now()) // nanoseconds, a monotonic reading: the file keeps microseconds
	return engine.RunRecord{Run: engine.Run{
		RunID: run, ThreadID: thread, AssistantID: "fe096781-5601-53d2-b2f6-0d3403f7e9ca",
		Status: engine.RunPending, CreatedAt: now, UpdatedAt: now,
		Metadata: map[string]any{"owner": "ada", "n": 3.5, "tags": []any{"a", true, nil}},
		Kwargs: engine.RunKwargs{
			Input:   input,
			Config:  map[string]any{"configurable": map[string]any{"run_id": run, "checkpoint_id": nil, "langgraph_auth_permissions": []any{}}, "tags": []any{}},
			Context: map[string]any{}, StreamMode: []engine.StreamMode{engine.StreamValues},
			InterruptBefore: []string{"*"}, FeedbackKeys: nil, Durability: engine.DurabilityExit,
		},
		MultitaskStrategy: engine.MultitaskEnqueue,
	}, Webhook: "https://example.com/hook"}
}

// TestNextTakesTheHeldRecord: a run held at creation is returned by Next as the file gives it
// back (deeply equal to Get's), once; the copy shares nothing with the creator's record; a
// record a JSON round trip would change is not held; an ended run's copy is dropped.
func TestNextTakesTheHeldRecord(t *testing.T) {
	f := newHeldFixture(t)
	const run1 = "0190a000-0000-7000-8000-000000000001"
	input := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "héllo <&>", "n": 1e21}}, "empty": map[string]any{}, "list": []any{}}
	rec := heldRecord(f.agg.ID, run1, input)
	f.create(rec)
	if !f.held(run1) {
		t.Fatal("the created run's record is not held")
	}
	input["messages"].([]any)[0].(map[string]any)["content"] = "changed by the creator"
	fromFile, ok, err := f.runs.Get(f.agg.Tenant, f.agg.ID, run1)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	next, ok, err := f.runs.Next(f.agg.Tenant, f.agg.ID, "")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if !reflect.DeepEqual(next, fromFile) {
		t.Fatalf("Next's held record differs from the file's:\n%#v\n%#v", next, fromFile)
	}
	if f.held(run1) {
		t.Fatal("the record is still held once Next took it")
	}
	again, _, _ := f.runs.Next(f.agg.Tenant, f.agg.ID, "")
	if !reflect.DeepEqual(again, fromFile) {
		t.Fatalf("Next from the file differs:\n%#v\n%#v", again, fromFile)
	}

	for i, c := range []struct {
		name  string
		input any
	}{
		{"an int", map[string]any{"n": 1}},
		{"a typed list", map[string]any{"l": []string{"a"}}},
		{"invalid UTF-8", map[string]any{"s": "\xff"}},
		{"an invalid UTF-8 key", map[string]any{"\xfe": true}},
	} {
		run := "0190a000-0000-7000-8000-00000000001" + string(rune('0'+i))
		f.create(heldRecord(f.agg.ID, run, c.input))
		if f.held(run) {
			t.Errorf("%s: a record holding %s is held", run, c.name)
		}
	}

	const run2 = "0190a000-0000-7000-8000-000000000002"
	f.create(heldRecord(f.agg.ID, run2, input))
	if !f.held(run2) {
		t.Fatal("the second run's record is not held")
	}
	f.append(engine.RunFinishedEvent, engine.RunFinishedData{RunID: run2, Status: engine.RunSuccess})
	if f.held(run2) {
		t.Fatal("an ended run's record is still held")
	}
	f.runs.Hold(f.agg.Tenant, heldRecord(f.agg.ID, run2, input))
	if f.held(run2) {
		t.Fatal("an ended run's record was held")
	}
}

// TestStateOfEndedRunsFromMemory: the state of a run that ended lately is read without a
// transaction, equal to the file's, and forgotten when the run is deleted or truncated.
func TestStateOfEndedRunsFromMemory(t *testing.T) {
	f := newHeldFixture(t)
	const run1, run2 = "0190a000-0000-7000-8000-000000000001", "0190a000-0000-7000-8000-000000000002"
	for _, run := range []string{run1, run2} {
		f.create(heldRecord(f.agg.ID, run, nil))
		f.append(engine.RunStartedEvent, engine.RunStartedData{RunID: run, Attempt: 1})
		f.append(engine.RunFinishedEvent, engine.RunFinishedData{RunID: run, Status: engine.RunFailed,
			Error: &engine.RunError{Class: "ValueError", Message: "boom"}})
	}
	f.append(engine.RunCancelRequestedEvent, engine.RunCancelRequestedData{RunID: run2, Action: "interrupt"})
	for _, run := range []string{run1, run2} {
		views := ReadTransactions()
		st, ok, err := f.runs.State(f.agg.Tenant, f.agg.ID, run)
		if err != nil || !ok || st.Status != engine.RunFailed || st.Error == nil || st.Error.Message != "boom" {
			t.Fatalf("%s: %+v %v %v", run, st, ok, err)
		}
		if n := ReadTransactions() - views; n != 0 {
			t.Errorf("%s: the state of an ended run took %d read transactions", run, n)
		}
		fromFile, _, _ := f.runs.Get(f.agg.Tenant, f.agg.ID, run)
		if want := stateOf(fromFile); !reflect.DeepEqual(st, want) {
			t.Errorf("%s: state in memory %+v, in the file %+v", run, st, want)
		}
	}
	f.append(engine.RunDeletedEvent, engine.RunDeletedData{RunID: run1})
	if _, ok, _ := f.runs.State(f.agg.Tenant, f.agg.ID, run1); ok {
		t.Error("a deleted run's state is still read")
	}
	system := eventlog.Aggregate{Kind: engine.SystemKind, Tenant: "default", ID: engine.SystemID}
	f.appendTo(system, engine.Truncated, engine.TruncatedData{Runs: true})
	if _, ok, _ := f.runs.State(f.agg.Tenant, f.agg.ID, run2); ok {
		t.Error("a truncated run's state is still read")
	}
}

// TestHoldCreatingWaitsForTheFold: a record held before its run's creation is appended is held
// once the creation is folded (a worker may take it before the creator hears of the fold), and
// nothing of it stays when the creation failed and the creator released it.
func TestHoldCreatingWaitsForTheFold(t *testing.T) {
	f := newHeldFixture(t)
	const run1, run2 = "0190a000-0000-7000-8000-000000000001", "0190a000-0000-7000-8000-000000000002"
	rec := heldRecord(f.agg.ID, run1, map[string]any{"x": "y"})
	f.runs.HoldCreating(f.agg.Tenant, rec)
	if f.held(run1) {
		t.Fatal("held before its creation was folded")
	}
	f.append(engine.RunCreatedEvent, engine.RunCreatedData{Run: rec})
	if !f.held(run1) {
		t.Fatal("not held once its creation was folded")
	}
	next, ok, err := f.runs.Next(f.agg.Tenant, f.agg.ID, "")
	fromFile, _, _ := f.runs.Get(f.agg.Tenant, f.agg.ID, run1)
	if err != nil || !ok || !reflect.DeepEqual(next, fromFile) {
		t.Fatalf("Next: %v %v\n%#v\n%#v", ok, err, next, fromFile)
	}
	f.runs.HoldCreating(f.agg.Tenant, heldRecord(f.agg.ID, run2, nil))
	f.runs.Release(f.agg.Tenant, f.agg.ID, run2)
	f.append(engine.RunCreatedEvent, engine.RunCreatedData{Run: heldRecord(f.agg.ID, run2, nil)})
	f.runs.liveMu.RLock()
	defer f.runs.liveMu.RUnlock()
	if len(f.runs.held) != 0 || len(f.runs.creating) != 0 || f.runs.heldBytes != 0 {
		t.Fatalf("left held: %d, creating: %d, %d bytes", len(f.runs.held), len(f.runs.creating), f.runs.heldBytes)
	}
}
