package runs_test

import (
	"context"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/threads"
)

// threadStatus returns the thread's status, checking that a thread no run has busy is what its
// state says: interrupted exactly when the state has a task left to run or an interrupt.
func threadStatus(t *testing.T, p *platform.Platform, thread string) string {
	t.Helper()
	ctx := context.Background()
	th, err := p.Threads.Get(ctx, thread)
	if err != nil {
		t.Fatal(err)
	}
	if th.Status == engine.ThreadBusy || th.Status == engine.ThreadError {
		return th.Status
	}
	st, err := p.Runner.State(ctx, graph.Ref{ThreadID: thread}, false)
	if err != nil {
		t.Fatal(err)
	}
	resumable := st != nil && (len(st.Next) > 0 || len(st.Interrupts) > 0)
	if resumable != (th.Status == engine.ThreadInterrupted) {
		t.Errorf("thread %s is %s, but its state has next %v and %d interrupts", thread, th.Status, st.Next, len(st.Interrupts))
	}
	return th.Status
}

// TestThreadStatusIsDerivedFromTheCheckpoint: once no run has a thread busy, it is interrupted
// when its latest checkpoint has something to resume and idle when not, however its last run
// ended (cancelled, or stopped at a static interrupt), and a state update keeps that rule.
func TestThreadStatusIsDerivedFromTheCheckpoint(t *testing.T) {
	p := start(t)
	ctx := waitCtx(t)
	newThread := func() string {
		th, err := p.Threads.Create(ctx, threads.Create{})
		if err != nil {
			t.Fatal(err)
		}
		return th.ThreadID
	}
	create := func(c runs.Create) engine.RunRecord {
		t.Helper()
		r, err := p.Runs.Create(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	update := func(t *testing.T, thread, asNode string) {
		t.Helper()
		up := graph.Update{Values: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "edited"}}}, AsNode: asNode}
		if _, err := p.Runner.UpdateState(ctx, graph.Ref{ThreadID: thread}, [][]graph.Update{{up}}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("a pending run cancelled leaves nothing to resume", func(t *testing.T) {
		th := newThread()
		done := create(runs.Create{ThreadID: th, AssistantID: "echo", Input: map[string]any{"messages": "x"}})
		if rec, err := p.Runs.Wait(ctx, th, done.RunID); err != nil || rec.Status != engine.RunSuccess {
			t.Fatalf("first run: %+v %v", rec, err)
		}
		later := create(runs.Create{ThreadID: th, AssistantID: "echo", Input: map[string]any{"messages": "y"}, AfterSeconds: 600})
		if got := threadStatus(t, p, th); got != engine.ThreadBusy {
			t.Fatalf("with a pending run: %s", got)
		}
		if err := p.Runs.Cancel(ctx, th, later.RunID, runs.ActionInterrupt, true); err != nil {
			t.Fatal(err)
		}
		if rec, _ := p.Runs.Get(ctx, th, later.RunID); rec.Status != engine.RunInterrupted {
			t.Fatalf("cancelled run: %+v", rec)
		}
		if got := threadStatus(t, p, th); got != engine.ThreadIdle {
			t.Fatalf("after the cancel: %s, want idle", got)
		}
	})

	t.Run("a running run replaced by the interrupt strategy", func(t *testing.T) {
		th := newThread()
		first := create(runs.Create{ThreadID: th, AssistantID: "delay", Input: map[string]any{"messages": "x", "delay": 60_000}})
		waitStatus(t, p, th, first.RunID, engine.RunRunning)
		next := create(runs.Create{ThreadID: th, AssistantID: "echo", Input: map[string]any{"messages": "y"}, MultitaskStrategy: engine.MultitaskInterrupt})
		if rec, _ := p.Runs.Wait(ctx, th, first.RunID); rec.Status != engine.RunInterrupted {
			t.Fatalf("replaced run: %+v", rec)
		}
		if rec, _ := p.Runs.Wait(ctx, th, next.RunID); rec.Status != engine.RunSuccess {
			t.Fatalf("second run: %+v", rec)
		}
		if got := threadStatus(t, p, th); got != engine.ThreadIdle {
			t.Fatalf("after both: %s, want idle", got)
		}
	})

	t.Run("a run cancelled in a node leaves that node to resume", func(t *testing.T) {
		th := newThread()
		r := create(runs.Create{ThreadID: th, AssistantID: "delay", Input: map[string]any{"messages": "x", "delay": 60_000}, Durability: engine.DurabilitySync})
		waitStatus(t, p, th, r.RunID, engine.RunRunning)
		if err := p.Runs.Cancel(ctx, th, r.RunID, runs.ActionInterrupt, true); err != nil {
			t.Fatal(err)
		}
		if got := threadStatus(t, p, th); got != engine.ThreadInterrupted {
			t.Fatalf("after the cancel: %s, want interrupted", got)
		}
	})

	t.Run("a state update on an interrupted thread", func(t *testing.T) {
		th := newThread()
		r := create(runs.Create{ThreadID: th, AssistantID: "agent", Input: map[string]any{"messages": "x"}, InterruptBefore: []string{"agent"}})
		if rec, _ := p.Runs.Wait(ctx, th, r.RunID); rec.Status != engine.RunInterrupted {
			t.Fatalf("run: %+v", rec)
		}
		if got := threadStatus(t, p, th); got != engine.ThreadInterrupted {
			t.Fatalf("at the static interrupt: %s", got)
		}
		// Written as the tool, which leads to agent: agent is still to run.
		update(t, th, "tool")
		if got := threadStatus(t, p, th); got != engine.ThreadInterrupted {
			t.Fatalf("after a state update that leaves agent to run: %s, want interrupted", got)
		}
		// Resumed to its end: nothing left.
		r = create(runs.Create{ThreadID: th, AssistantID: "agent"})
		if rec, _ := p.Runs.Wait(ctx, th, r.RunID); rec.Status != engine.RunSuccess {
			t.Fatalf("resumed run: %+v", rec)
		}
		if got := threadStatus(t, p, th); got != engine.ThreadIdle {
			t.Fatalf("after the resumed run: %s, want idle", got)
		}
	})

	t.Run("a failed run is error", func(t *testing.T) {
		th := newThread()
		r := create(runs.Create{ThreadID: th, AssistantID: "error", Input: map[string]any{}})
		if rec, _ := p.Runs.Wait(ctx, th, r.RunID); rec.Status != engine.RunFailed {
			t.Fatalf("run: %+v", rec)
		}
		if got := threadStatus(t, p, th); got != engine.ThreadError {
			t.Fatalf("after the failure: %s", got)
		}
	})
}
