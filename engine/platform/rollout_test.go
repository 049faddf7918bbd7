package platform_test

import (
	"context"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// TestRunsGoToAProcessThatServesTheirGraph: two processes on one log serve different graphs,
// as a deployment's old and new revisions do during a rollout. Each run of a graph only the
// second serves must succeed, though both processes' workers read the one dispatch queue.
func TestRunsGoToAProcessThatServesTheirGraph(t *testing.T) {
	l := eventlogtest.Open(t)
	only := func(ids ...string) *graphs.Registry {
		r, err := graphs.Default().Select(ids)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	platformtest.Start(t, platform.Config{Graphs: only("echo")}, l)
	b := platformtest.Start(t, platform.Config{Graphs: only("echo", "agent")}, l)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	input := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	var started []engine.RunRecord
	for range 16 {
		th, err := b.Threads.Create(ctx, threads.Create{})
		if err != nil {
			t.Fatal(err)
		}
		run, err := b.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "agent", Input: input})
		if err != nil {
			t.Fatal(err)
		}
		started = append(started, run)
	}
	for _, run := range started {
		rec, err := b.Runs.Wait(ctx, run.ThreadID, run.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Status != engine.RunSuccess {
			t.Errorf("run %s: %s %+v", run.RunID, rec.Status, rec.Error)
		}
	}
}
