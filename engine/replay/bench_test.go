package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/model"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/replay"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/eventlog"
)

// react100 is a react agent whose fake model calls the echo tool 100 times, then answers: a run
// of 202 super-steps (101 agent steps, 100 tool steps, the input), made anew for each build so
// that a re-execution starts the script again.
func react100(graph.Config) (*graph.Graph, error) {
	answers := make([]model.Answer, 0, 101)
	for range 100 {
		answers = append(answers, model.Call("echo", map[string]any{"text": "hi"}))
	}
	answers = append(answers, model.Text("done"))
	echo, _ := graphs.BuiltinTool("echo")
	return graphs.NewReact(graphs.ReactSettings{Model: model.NewFake(answers...), Tools: []graphs.Tool{echo}, MaxIterations: 1000})
}

// BenchmarkReplayReact100 records a 100-turn react run on the log, then measures the parts of
// `jetgraph replay`: reading the thread's events from the log, folding and printing them
// (show), re-executing them offline (rerun); it reports the export's size.
func BenchmarkReplayReact100(b *testing.B) {
	reg := graphs.NewRegistry()
	reg.MustRegister(graphs.Entry{ID: "react100", Build: react100})
	p := platformtest.Start(b, platform.Config{Graphs: reg}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	th, err := p.Threads.Create(ctx, threads.Create{})
	if err != nil {
		b.Fatal(err)
	}
	run, err := p.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: "react100",
		Input:  map[string]any{"messages": []any{map[string]any{"role": "user", "content": "go"}}},
		Config: map[string]any{"recursion_limit": 250}})
	if err != nil {
		b.Fatal(err)
	}
	if rec, err := p.Runs.Wait(ctx, th.ThreadID, run.RunID); err != nil || rec.Status != engine.RunSuccess {
		b.Fatal(rec.Status, rec.Error, err)
	}
	agg := eventlog.Aggregate{Kind: "thread", Tenant: engine.DefaultTenant, ID: th.ThreadID}
	events, err := p.Log.Load(ctx, agg)
	if err != nil {
		b.Fatal(err)
	}
	f, err := replay.NewFile(th.ThreadID, events)
	if err != nil {
		b.Fatal(err)
	}
	raw, _ := json.Marshal(f)
	b.Run("show", func(b *testing.B) {
		var steps int
		for b.Loop() {
			events, err := p.Log.Load(ctx, agg)
			if err != nil {
				b.Fatal(err)
			}
			t, err := replay.Read(th.ThreadID, events)
			if err != nil {
				b.Fatal(err)
			}
			var out bytes.Buffer
			if err := replay.Text(&out, t); err != nil {
				b.Fatal(err)
			}
			steps = len(t.Runs[0].Steps)
		}
		b.ReportMetric(float64(steps), "steps")
		b.ReportMetric(float64(len(raw)), "export_bytes")
	})
	b.Run("rerun", func(b *testing.B) {
		t, err := replay.Read(th.ThreadID, events)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			rep, err := replay.Rerun(ctx, t, reg.Runnable, "")
			if err != nil || rep.Divergence != nil {
				b.Fatal(rep.Divergence, err)
			}
		}
	})
}
