package graphs

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/checkpoints"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/model"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
)

// What a super-step costs: the engine alone (graph.Run on a MemorySaver, no store, no stream), and
// with every checkpoint appended to the embedded event log and projected into bbolt.
// Run with: go test -run '^$' -bench . -benchmem ./engine/graphs/

// newSaver is the saver of a benchmark: in memory (the engine alone), or checkpoints appended to
// the embedded event log and folded into bbolt (engine/checkpoints), as jetgraph runs them.
type newSaver func(b *testing.B) graph.Saver

func memorySaver(*testing.B) graph.Saver { return graph.NewMemorySaver() }

func logSaver(b *testing.B) graph.Saver {
	l := eventlogtest.Open(b)
	db, err := projections.OpenDB(filepath.Join(b.TempDir(), "p.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	view := projections.NewCheckpoints(db)
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, projections.NewThreads(db), view)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done; db.Close() })
	if err := p.CatchUp(ctx); err != nil {
		b.Fatal(err)
	}
	return checkpoints.New(l, p, view)
}

// benchRun runs g b.N times on a new thread each time and reports µs per super-step.
func benchRun(b *testing.B, g *graph.Graph, steps int, opts func() graph.RunOptions) {
	b.Helper()
	for _, sv := range []struct {
		name string
		new  newSaver
	}{{"memory", memorySaver}, {"log", logSaver}} {
		b.Run(sv.name, func(b *testing.B) { benchRunOn(b, g, steps, opts, sv.new(b)) })
	}
}

func benchRunOn(b *testing.B, g *graph.Graph, steps int, opts func() graph.RunOptions, saver graph.Saver) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o := opts()
		o.ThreadID, o.Saver = fmt.Sprintf("bench-%d", i), saver
		res, err := g.Run(ctx, o)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.StopTimer()
			hist, _ := g.History(ctx, o.Saver, res.Checkpoint, graph.ListOptions{})
			if got := len(hist) - 1; got != steps { // every checkpoint but the input's is a super-step
				b.Fatalf("%d super-steps, want %d", got, steps)
			}
			b.StartTimer()
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*steps), "µs/step")
}

// BenchmarkSequential10 runs a chain of 10 nodes that each increment a counter: 11 super-steps
// (the start task and the 10 nodes).
func BenchmarkSequential10(b *testing.B) {
	bl := graph.NewBuilder("seq10").Channel("count", graph.LastValue())
	prev := graph.Start
	for i := range 10 {
		name := fmt.Sprintf("n%d", i)
		bl.Node(name, func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
			n, _ := engine.Number(stateOf(in)["count"])
			return map[string]any{"count": n + 1}, nil
		})
		bl.Edge(prev, name)
		prev = name
	}
	g := bl.Edge(prev, graph.End).MustCompile(graph.CompileOptions{})
	benchRun(b, g, 11, func() graph.RunOptions { return graph.RunOptions{Input: map[string]any{"count": 0}} })
}

// BenchmarkReact100 runs a react agent whose (fake) model calls the echo tool 100 times before
// answering: 202 super-steps (start, 100 × agent and tools, the last agent), the state growing
// to 302 messages.
func BenchmarkReact100(b *testing.B) {
	answers := make([]model.Answer, 0, 101)
	for range 100 {
		answers = append(answers, model.Call("echo", map[string]any{"text": "hi"}))
	}
	answers = append(answers, model.Text("done"))
	echo, _ := BuiltinTool("echo")
	// One graph per iteration would measure compiling; the model is the only per-run state, so
	// it is swapped in through a holder.
	holder := &swapModel{}
	g, err := NewReact(ReactSettings{Model: holder, Tools: []Tool{echo}, MaxIterations: 1000})
	if err != nil {
		b.Fatal(err)
	}
	benchRun(b, g, 202, func() graph.RunOptions {
		holder.m = model.NewFake(answers...)
		return graph.RunOptions{Input: human("go"), Config: graph.Config{RecursionLimit: 250}}
	})
}

// swapModel forwards to the model of the current benchmark iteration.
type swapModel struct{ m model.ChatModel }

func (s *swapModel) Info() model.Info { return s.m.Info() }

func (s *swapModel) Stream(ctx context.Context, req model.Request, on func(engine.MessageChunk) error) (engine.Message, error) {
	return s.m.Stream(ctx, req, on)
}
