package runs_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// stepGraph is a graph "step" of one node that calls node with its context and returns what
// node returns.
func stepGraph(node func(ctx context.Context) error) *graphs.Registry {
	b := graph.NewBuilder("step").Channel("messages", graph.Messages())
	b.Node("work", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		if err := node(ctx); err != nil {
			return nil, err
		}
		return map[string]any{"messages": []any{"done"}}, nil
	})
	reg := graphs.NewRegistry()
	reg.MustRegister(graphs.Entry{ID: "step", Build: graphs.Static(b.Edge(graph.Start, "work").Edge("work", graph.End).
		MustCompile(graph.CompileOptions{}))})
	return reg
}

// TestRunStopsWithItsLease: a worker cut off from the log in the middle of a run (its lease
// renewals fail) has the run cancelled before the thread's lease can expire; only then does
// another process, still on the log, take the thread over, and the run ends there, at its
// second attempt, with nothing written by the first.
func TestRunStopsWithItsLease(t *testing.T) {
	// Messages come back soon after the cut: the other process asks for the thread's lease
	// from then on, and gets it as soon as it expired.
	const ttl, ackWait = 2 * time.Second, 500 * time.Millisecond
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := waitCtx(t)
	url := eventlogtest.Server(t)
	proxy := eventlogtest.NewProxy(t, url)
	started, stopped := make(chan struct{}, 1), make(chan time.Time, 1)
	cutOff := platformtest.Start(t, platform.Config{Runs: runs.Config{LeaseTTL: ttl, AckWait: ackWait}, Logger: quiet,
		Graphs: stepGraph(func(ctx context.Context) error {
			started <- struct{}{}
			<-ctx.Done()
			stopped <- time.Now()
			return ctx.Err()
		})}, eventlogtest.OpenURLs(t, proxy.URL(), 1))
	th, r := stepRun(ctx, t, cutOff)
	<-started
	ran := make(chan time.Time, 1)
	other := platformtest.Start(t, platform.Config{Runs: runs.Config{LeaseTTL: ttl, AckWait: ackWait}, Logger: quiet,
		Graphs: stepGraph(func(context.Context) error { ran <- time.Now(); return nil })}, eventlogtest.OpenURLs(t, url, 1))

	cut := time.Now()
	proxy.Cut()
	var stop time.Time
	select {
	case stop = <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the run goes on without its lease")
	}
	if took := stop.Sub(cut); took > eventlog.GiveUpAfter(ttl)+200*time.Millisecond {
		t.Errorf("the run stopped %v after the cut, want within %v", took, eventlog.GiveUpAfter(ttl))
	}
	rec, err := other.Runs.Wait(ctx, th.ThreadID, r.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != engine.RunSuccess || rec.Attempt != 2 {
		t.Fatalf("run after the takeover: %s at attempt %d, want success at attempt 2", rec.Status, rec.Attempt)
	}
	if resumed := <-ran; !stop.Before(resumed) {
		t.Fatalf("the cut-off run stopped %v after the other process resumed it", stop.Sub(resumed))
	}
	proxy.Heal() // before the logs close
}
