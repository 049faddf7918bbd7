package runs_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/streaming"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

func start(t *testing.T) *platform.Platform {
	t.Helper()
	return platformtest.Start(t, quickTakeover(), nil)
}

// quickTakeover serves the examples, with leases and dispatches that expire in seconds.
func quickTakeover() platform.Config {
	return platform.Config{Graphs: graphs.Examples(), Runs: runs.Config{LeaseTTL: 3 * time.Second, AckWait: 3 * time.Second}}
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func messages(t *testing.T, p *platform.Platform, thread string) string {
	t.Helper()
	st, err := p.Runner.State(context.Background(), graph.Ref{ThreadID: thread}, false)
	if err != nil || st == nil {
		t.Fatalf("state: %v", err)
	}
	var out []string
	for _, m := range graph.MessagesOf(st.Values, "messages") {
		out = append(out, m.Text())
	}
	return fmt.Sprint(out)
}

func TestEnqueueRunsInOrder(t *testing.T) {
	p := start(t)
	ctx := waitCtx(t)
	th, _ := p.Threads.Create(ctx, threads.Create{})
	r1, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "delay", Input: map[string]any{"messages": "one", "delay": 300}})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "delay", Input: map[string]any{"messages": "two", "delay": 10}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := p.Threads.Get(ctx, th.ThreadID); got.Status != engine.ThreadBusy {
		t.Fatalf("thread status while runs are queued: %s", got.Status)
	}
	for _, r := range []engine.RunRecord{r1, r2} {
		rec, err := p.Runs.Wait(ctx, th.ThreadID, r.RunID)
		if err != nil || rec.Status != engine.RunSuccess {
			t.Fatalf("run %s: %+v %v", r.RunID, rec, err)
		}
	}
	if got := messages(t, p, th.ThreadID); got != "[one finished after 300ms two finished after 10ms]" {
		t.Fatalf("messages = %s", got)
	}
	if got, _ := p.Threads.Get(ctx, th.ThreadID); got.Status != engine.ThreadIdle {
		t.Fatalf("thread status after: %s", got.Status)
	}
}

func TestRejectInterruptRollback(t *testing.T) {
	p := start(t)
	ctx := waitCtx(t)
	th, _ := p.Threads.Create(ctx, threads.Create{})
	first, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "agent", Input: map[string]any{"messages": "a", "sleep": map[string]any{"steps": 50, "ms": 100}}})
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, p, th.ThreadID, first.RunID, engine.RunRunning)
	_, err = p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "echo", Input: map[string]any{"messages": "x"}, MultitaskStrategy: engine.MultitaskReject})
	if !engine.Is(engine.Conflict, err) || err.(*engine.Error).Detail != runs.RejectDetail {
		t.Fatalf("reject: %v", err)
	}
	second, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "agent", Input: map[string]any{"messages": "b"}, MultitaskStrategy: engine.MultitaskInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := p.Runs.Wait(ctx, th.ThreadID, first.RunID)
	if rec.Status != engine.RunInterrupted {
		t.Fatalf("interrupted run: %+v", rec)
	}
	if rec, _ := p.Runs.Wait(ctx, th.ThreadID, second.RunID); rec.Status != engine.RunSuccess {
		t.Fatalf("second run: %+v", rec)
	}

	// Rollback: the running run disappears with its checkpoints; the state is as before it.
	before := messages(t, p, th.ThreadID)
	third, _ := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "agent", Input: map[string]any{"messages": "c", "sleep": map[string]any{"steps": 50, "ms": 100}}})
	waitStatus(t, p, th.ThreadID, third.RunID, engine.RunRunning)
	fourth, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "echo", Input: map[string]any{"messages": "d"}, MultitaskStrategy: engine.MultitaskRollback})
	if err != nil {
		t.Fatal(err)
	}
	if rec, _ := p.Runs.Wait(ctx, th.ThreadID, fourth.RunID); rec.Status != engine.RunSuccess {
		t.Fatalf("after rollback: %+v", rec)
	}
	if _, err := p.Runs.Get(ctx, th.ThreadID, third.RunID); !engine.Is(engine.NotFound, err) {
		t.Fatalf("rolled back run still there: %v", err)
	}
	hist, _ := p.Runner.History(ctx, graph.Ref{ThreadID: th.ThreadID}, graph.ListOptions{})
	for _, h := range hist {
		if h.Metadata["run_id"] == third.RunID {
			t.Fatalf("a checkpoint of the rolled back run is still in the history")
		}
	}
	if got := messages(t, p, th.ThreadID); got != before[:len(before)-1]+" d echo: d]" {
		t.Fatalf("after rollback messages = %s, before = %s", got, before)
	}
}

// TestQueuedRunStartsFromItsPredecessorsEnd: a worker drains a thread's queue without waiting
// for each run's end to be folded, except before it starts the next one, which must see the
// state (and the head a rollback returns to) that end left.
func TestQueuedRunStartsFromItsPredecessorsEnd(t *testing.T) {
	p := start(t)
	ctx := waitCtx(t)
	for i := range 3 {
		th, _ := p.Threads.Create(ctx, threads.Create{})
		first, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "delay", Input: map[string]any{"messages": "one", "delay": 100}})
		if err != nil {
			t.Fatal(err)
		}
		second, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "agent", Input: map[string]any{"messages": "two", "sleep": map[string]any{"steps": 50, "ms": 100}}})
		if err != nil {
			t.Fatal(err)
		}
		waitStatus(t, p, th.ThreadID, second.RunID, engine.RunRunning)
		if rec, _ := p.Runs.Get(ctx, th.ThreadID, first.RunID); rec.Status != engine.RunSuccess {
			t.Fatalf("round %d: first run: %+v", i, rec)
		}
		if err := p.Runs.Cancel(ctx, th.ThreadID, second.RunID, runs.ActionRollback, true); err != nil {
			t.Fatal(err)
		}
		if got := messages(t, p, th.ThreadID); got != "[one finished after 100ms]" {
			t.Fatalf("round %d: after rolling back the second run, messages = %s", i, got)
		}
	}
}

func waitStatus(t *testing.T, p *platform.Platform, thread, run, status string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		rec, err := p.Runs.Get(context.Background(), thread, run)
		if err == nil && rec.Status == status {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("run %s never became %s", run, status)
}

func TestCancelAndFailure(t *testing.T) {
	p := start(t)
	ctx := waitCtx(t)
	th, _ := p.Threads.Create(ctx, threads.Create{})
	r, _ := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "agent", Input: map[string]any{"messages": "a", "sleep": map[string]any{"steps": 100, "ms": 100}}})
	waitStatus(t, p, th.ThreadID, r.RunID, engine.RunRunning)
	if err := p.Runs.Cancel(ctx, th.ThreadID, r.RunID, runs.ActionInterrupt, true); err != nil {
		t.Fatal(err)
	}
	if rec, _ := p.Runs.Get(ctx, th.ThreadID, r.RunID); rec.Status != engine.RunInterrupted {
		t.Fatalf("cancelled: %+v", rec)
	}
	e, _ := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "error", Input: map[string]any{}})
	rec, _ := p.Runs.Wait(ctx, th.ThreadID, e.RunID)
	if rec.Status != engine.RunFailed || rec.Error == nil || rec.Error.Class != "CustomError" || rec.Error.Message != "Boo!" {
		t.Fatalf("failed run: %+v", rec)
	}
	if got, _ := p.Threads.Get(ctx, th.ThreadID); got.Status != engine.ThreadError {
		t.Fatalf("thread after a failed run: %s", got.Status)
	}
	if _, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "nope"}); !engine.Is(engine.NotFound, err) {
		t.Fatalf("unknown assistant: %v", err)
	}
}

// TestDurabilityDecidesWhenCheckpointsReachTheLog: "sync" appends each checkpoint on its own
// before the run's end; "exit" appends them all in the message that ends the run; "async" (the
// default) appends them at the latest with it. Every mode leaves the same state and history.
func TestDurabilityDecidesWhenCheckpointsReachTheLog(t *testing.T) {
	p := start(t)
	ctx := waitCtx(t)
	for _, tc := range []struct {
		durability engine.Durability
		inFinish   func(n int) bool // how many checkpoints may share the end's message, of n
	}{
		{engine.DurabilitySync, func(n int) bool { return n == 0 }},
		{engine.DurabilityExit, func(n int) bool { return n == 3 }},
		{"", func(n int) bool { return n <= 3 }},
	} {
		t.Run("durability="+string(tc.durability), func(t *testing.T) {
			th, _ := p.Threads.Create(ctx, threads.Create{})
			r, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "echo", Durability: tc.durability,
				Input: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}})
			if err != nil {
				t.Fatal(err)
			}
			if rec, err := p.Runs.Wait(ctx, th.ThreadID, r.RunID); err != nil || rec.Status != engine.RunSuccess {
				t.Fatalf("run: %+v %v", rec, err)
			}
			events, err := p.Log.Load(ctx, threads.Aggregate(ctx, th.ThreadID))
			if err != nil {
				t.Fatal(err)
			}
			var finished uint64
			var checkpoints []uint64
			for _, e := range events {
				switch e.Type {
				case engine.RunFinishedEvent:
					finished = e.Seq
				case engine.ThreadCheckpoint:
					checkpoints = append(checkpoints, e.Seq)
				}
			}
			inFinish := 0
			for _, seq := range checkpoints {
				if seq == finished {
					inFinish++
				}
			}
			if len(checkpoints) != 3 || finished == 0 || !tc.inFinish(inFinish) {
				t.Fatalf("checkpoints at %v, run finished at %d: %d checkpoints in the end's message", checkpoints, finished, inFinish)
			}
			if got := messages(t, p, th.ThreadID); got != "[hi echo: hi]" {
				t.Fatalf("messages = %s", got)
			}
			history, err := p.Runner.History(ctx, graph.Ref{ThreadID: th.ThreadID}, graph.ListOptions{})
			if err != nil || len(history) != 3 {
				t.Fatalf("history: %d checkpoints, %v; want 3", len(history), err)
			}
		})
	}
}

// flushOrder is a Streamer that checks, at each Flush, that the run's end is not recorded yet.
type flushOrder struct {
	p        *platform.Platform
	mu       sync.Mutex
	flushed  map[string]bool
	problems []string
}

func (f *flushOrder) Begin(context.Context, engine.RunRecord) graph.Sink { return nil }

func (f *flushOrder) Flush(_ context.Context, rec engine.RunRecord) {
	st, ok, err := f.p.RunsView.State(engine.DefaultTenant, rec.ThreadID, rec.RunID)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil || !ok || !st.Active() {
		f.problems = append(f.problems, fmt.Sprintf("run %s flushed with its record %+v (%v, %v)", rec.RunID, st, ok, err))
	}
	f.flushed[rec.RunID] = true
}

func (f *flushOrder) End(_ context.Context, rec engine.RunRecord, _ engine.RunFinishedData) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.flushed[rec.RunID] {
		f.problems = append(f.problems, fmt.Sprintf("run %s ended without a flush", rec.RunID))
	}
}

// TestStreamsAreFlushedBeforeTheRunEnds: the scheduler flushes a run's streamers after its graph
// returned and before its end is recorded, whatever its durability.
func TestStreamsAreFlushedBeforeTheRunEnds(t *testing.T) {
	order := &flushOrder{flushed: map[string]bool{}}
	ctx := waitCtx(t)
	p, err := platform.Open(ctx, platform.Config{Data: t.TempDir(), Graphs: graphs.Examples(),
		Runs: runs.Config{LeaseTTL: 3 * time.Second, AckWait: 3 * time.Second, Streamer: order}}, eventlogtest.Open(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	order.p = p
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, d := range engine.Durabilities {
		th, _ := p.Threads.Create(ctx, threads.Create{})
		r, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "echo", Durability: d,
			Input: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Runs.Wait(ctx, th.ThreadID, r.RunID); err != nil {
			t.Fatal(err)
		}
	}
	order.mu.Lock()
	defer order.mu.Unlock()
	if len(order.flushed) != 3 || len(order.problems) > 0 {
		t.Fatalf("%d runs flushed, problems: %v", len(order.flushed), order.problems)
	}
}

// TestOutputIsStoredBeforeTheRunEnds: once a run is seen finished, what it streamed is on the
// output stream, so a client that joins it then (or a stream that sees it end) finds it. Runs
// without waits (durability exit) make the window before the end as short as it gets.
func TestOutputIsStoredBeforeTheRunEnds(t *testing.T) {
	p := start(t)
	ctx := waitCtx(t)
	out, err := eventlogtest.JetStream(p.Log).Stream(ctx, eventlog.OutputStream)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		th, _ := p.Threads.Create(ctx, threads.Create{})
		r, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "echo", Durability: engine.DurabilityExit,
			Input: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Runs.Wait(ctx, th.ThreadID, r.RunID); err != nil {
			t.Fatal(err)
		}
		if _, err := out.GetLastMsgForSubject(ctx, streaming.Subject(engine.DefaultTenant, th.ThreadID, r.RunID)); err != nil {
			t.Fatalf("run %d ended with nothing of its stream stored: %v", i, err)
		}
	}
}

// TestWaitFromAnotherProcess: a process waiting on a run created through another one, which it
// may not have folded yet, waits for the run's end instead of answering with it pending.
func TestWaitFromAnotherProcess(t *testing.T) {
	ctx := waitCtx(t)
	l := eventlogtest.Open(t)
	p1, p2 := platformtest.Start(t, quickTakeover(), l), platformtest.Start(t, quickTakeover(), l)
	for i := range 5 {
		th, _ := p1.Threads.Create(ctx, threads.Create{})
		r, err := p1.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "delay",
			Input: map[string]any{"messages": "x", "delay": 50}})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := p2.Runs.Wait(ctx, th.ThreadID, r.RunID)
		if err != nil || rec.Status != engine.RunSuccess {
			t.Fatalf("run %d waited from the other process: %s, %v; want success", i, rec.Status, err)
		}
	}
}

// waitEndValues waits for the end of rec, created by the caller, and checks the run succeeded
// and its wait got the values the run ended with: the thread's state.
func waitEndValues(t *testing.T, ctx context.Context, p *platform.Platform, rec engine.RunRecord) {
	t.Helper()
	rec, values, err := p.Runs.WaitEnd(ctx, rec)
	if err != nil || rec.Status != engine.RunSuccess {
		t.Fatalf("wait: %v %v", rec.Status, err)
	}
	var got []string
	for _, m := range graph.MessagesOf(values, "messages") {
		got = append(got, m.Text())
	}
	if want := messages(t, p, rec.ThreadID); fmt.Sprint(got) != want {
		t.Fatalf("values handed over %v, thread state %s", got, want)
	}
}

// TestWaitEndHandsOverTheValues: a wait on a run this process executes gets the values the run
// ended with from its worker, equal to the thread's state; a failed run's wait gets none.
func TestWaitEndHandsOverTheValues(t *testing.T) {
	p := start(t)
	ctx := waitCtx(t)
	th, _ := p.Threads.Create(ctx, threads.Create{})
	rec, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "echo", Input: map[string]any{"messages": "hi"}, Await: true})
	if err != nil {
		t.Fatal(err)
	}
	waitEndValues(t, ctx, p, rec)

	failed, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "error", Input: map[string]any{"messages": "x"}, Await: true})
	if err != nil {
		t.Fatal(err)
	}
	if failed, values, err := p.Runs.WaitEnd(ctx, failed); err != nil || failed.Status != engine.RunFailed || values != nil {
		t.Fatalf("failed run's wait: %v %v %v", failed.Status, values, err)
	}
}

// TestWaitEndSeesTheEndBeforeItsWorker: a wait that sees the run's end folded before the worker
// that appended it got the append's answer still gets the values the run ended with (a
// /runs/wait arriving right as its run ends): the worker settles its run's end only once the
// wait has started taking the values.
func TestWaitEndSeesTheEndBeforeItsWorker(t *testing.T) {
	p := start(t)
	ctx := waitCtx(t)
	th, _ := p.Threads.Create(ctx, threads.Create{})
	taken := make(chan string, 1)
	runs.SetEndHooks(p.Runs, runs.EndHooks{Taking: func(run string) { taken <- run }, Settling: func(run string) {
		select {
		case got := <-taken:
			if got != run {
				t.Errorf("wait took %s, worker settles %s", got, run)
			}
		case <-ctx.Done():
		}
	}})
	rec, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "echo", Input: map[string]any{"messages": "hi"}, Await: true})
	if err != nil {
		t.Fatal(err)
	}
	waitEndValues(t, ctx, p, rec)
}

// TestWaitEndAfterTheRunEnded: a run created with Await that ends and is settled before its
// wait is even called (a fast run, a slow request) keeps its values for that wait.
func TestWaitEndAfterTheRunEnded(t *testing.T) {
	p := start(t)
	ctx := waitCtx(t)
	th, _ := p.Threads.Create(ctx, threads.Create{})
	settled := make(chan string, 1)
	runs.SetEndHooks(p.Runs, runs.EndHooks{Settled: func(run string) { settled <- run }})
	rec, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "echo", Input: map[string]any{"messages": "hi"}, Await: true})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case run := <-settled:
		if run != rec.RunID {
			t.Fatalf("settled %s, created %s", run, rec.RunID)
		}
	case <-ctx.Done():
		t.Fatal("the run's end was never settled")
	}
	waitEndValues(t, ctx, p, rec)
}

// TestLeaseRenewalStoredWithoutAnswer: a renewal the cluster stored while its answer was lost (a
// failover) leaves the lease at a revision its holder does not know; the holder keeps it (the
// key still names it) instead of abandoning the run.
func TestLeaseRenewalStoredWithoutAnswer(t *testing.T) {
	// A log other processes can reach, whose leases are a bucket's (the test writes one).
	p := platformtest.Start(t, quickTakeover(), eventlogtest.OpenURLs(t, eventlogtest.Server(t), 1))
	ctx := waitCtx(t)
	th, err := p.Threads.Create(ctx, threads.Create{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "delay", Input: map[string]any{"messages": "x", "delay": 3000}})
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, p, th.ThreadID, r.RunID, engine.RunRunning)
	kv, err := eventlogtest.JetStream(p.Log).KeyValue(ctx, runs.LeaseBucket)
	if err != nil {
		t.Fatal(err)
	}
	key := engine.DefaultTenant + "." + th.ThreadID
	e, err := kv.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Update(ctx, key, e.Value(), e.Revision()); err != nil {
		t.Fatal(err)
	}
	rec, err := p.Runs.Wait(ctx, th.ThreadID, r.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != engine.RunSuccess || rec.Attempt != 1 {
		t.Fatalf("run after a renewal it did not see: status %s, attempt %d (want success at attempt 1)", rec.Status, rec.Attempt)
	}
}

// TestThreadEventsShareASubject: a thread's events are stored under two subjects, whatever runs
// it has: its runs' creations, which the dispatch queue selects, and the rest.
func TestThreadEventsShareASubject(t *testing.T) {
	p := start(t)
	ctx := waitCtx(t)
	th, err := p.Threads.Create(ctx, threads.Create{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "echo", Input: map[string]any{"messages": "hi"}})
		if err != nil {
			t.Fatal(err)
		}
		if rec, err := p.Runs.Wait(ctx, th.ThreadID, r.RunID); err != nil || rec.Status != engine.RunSuccess {
			t.Fatalf("run %s: %+v %v", r.RunID, rec, err)
		}
	}
	st, err := eventlogtest.JetStream(p.Log).Stream(ctx, eventlog.RuntimeStream)
	if err != nil {
		t.Fatal(err)
	}
	prefix := "thread." + eventlog.DefaultTenant + "." + th.ThreadID + "."
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(prefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	subjects := info.State.Subjects
	// Created, then per run: created; its start and checkpoints packed with its end.
	if len(subjects) != 2 || subjects[prefix+engine.RunCreatedEvent] != 2 || subjects[prefix+eventlog.SharedToken] != 3 {
		t.Fatalf("the thread's subjects: %v, want %s with 2 messages and %s with the other 3", subjects,
			prefix+engine.RunCreatedEvent, prefix+eventlog.SharedToken)
	}
}
