package checkpoints_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
)

// bigContent makes the first tool answer larger than an event may carry, so that the messages
// channel goes through the object store from then on.
var bigContent = strings.Repeat("0123456789abcdef", (600<<10)/16)

// agentGraph is an agent loop: the agent asks for permission (an interrupt) when "ask" is set,
// answers begin, end, begin, ... and the tool answers each begin. Each call makes a new graph,
// so that two savers see the same answers.
func agentGraph(t testing.TB, big bool) *graph.Graph {
	n := 0
	b := graph.NewBuilder("agent").Channel("messages", graph.Messages()).Channel("ask", graph.LastValue()).Channel("notes", graph.Append())
	b.Node("agent", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		st := in.(graph.State)
		answer := []string{"begin", "end"}[n%2]
		if ask, _ := st["ask"].(bool); ask {
			v, err := rt.Interrupt("may I?")
			if err != nil {
				return nil, err
			}
			answer += fmt.Sprint("/", v)
		}
		n++
		msg := engine.NewMessage(engine.MessageAI, answer)
		msg.ID = fmt.Sprintf("ai-%d", n)
		return map[string]any{"messages": []any{msg}, "ask": false, "notes": []any{"agent"}}, nil
	})
	b.Node("tool", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		ms := graph.MessagesOf(in.(graph.State), "messages")
		content := "tool_call__" + ms[len(ms)-1].Text()
		if big && len(ms) < 4 {
			content = bigContent
		}
		m := engine.NewMessage(engine.MessageTool, content)
		m.ToolCallID, m.ID = "call", fmt.Sprintf("tool-%d", len(ms))
		return map[string]any{"messages": []any{m}}, nil
	})
	b.Edge(graph.Start, "agent").Edge("tool", "agent")
	b.Branch("agent", func(ctx context.Context, s graph.State, rt *graph.Runtime) (any, error) {
		ms := graph.MessagesOf(s, "messages")
		if strings.HasPrefix(ms[len(ms)-1].Text(), "end") {
			return graph.End, nil
		}
		return "tool", nil
	}, "tool", graph.End)
	g, err := b.Compile(graph.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// weatherGraph has a subgraph that stops before its second node.
func weatherGraph() *graph.Graph {
	sub := graph.NewBuilder("weather_graph").Channel("messages", graph.Messages()).Channel("city", graph.LastValue())
	sub.Node("model_node", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		return map[string]any{"city": "San Francisco"}, nil
	})
	sub.Node("weather_node", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		m := engine.NewMessage(engine.MessageAI, "It's sunny in "+in.(graph.State)["city"].(string)+"!")
		m.ID = "weather"
		return map[string]any{"messages": []any{m}}, nil
	})
	sub.Edge(graph.Start, "model_node").Edge("model_node", "weather_node")
	sg := sub.MustCompile(graph.CompileOptions{InterruptBefore: []string{"weather_node"}})
	return graph.NewBuilder("weather").Channel("messages", graph.Messages()).
		Subgraph("weather_graph", sg).Edge(graph.Start, "weather_graph").MustCompile(graph.CompileOptions{})
}

// recorder runs a script and records what a client would see after each step.
type recorder struct {
	t     *testing.T
	ctx   context.Context
	saver graph.Saver
	out   []string
}

func (r *recorder) note(label string, v any, err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatalf("%s: %v", label, err)
	}
	// As JSON with sorted keys: MemorySaver keeps metadata as given (structs), the log saver as
	// decoded JSON (maps).
	var x any
	if err := json.Unmarshal([]byte(mustJSON(r.t, v)), &x); err != nil {
		r.t.Fatal(err)
	}
	r.out = append(r.out, label+": "+mustJSON(r.t, x))
}

func (r *recorder) state(g *graph.Graph, ref graph.Ref) *graph.Snapshot {
	r.t.Helper()
	st, err := g.State(r.ctx, r.saver, ref, true)
	r.note("state", st, err)
	return st
}

func (r *recorder) history(g *graph.Graph, ref graph.Ref) []graph.Snapshot {
	r.t.Helper()
	h, err := g.History(r.ctx, r.saver, ref, graph.ListOptions{})
	r.note("history", h, err)
	return h
}

// agentScript: an interrupt and its resume, a static interrupt, update_state, a fork, a run from
// the fork and a run from an old checkpoint (time travel).
func agentScript(r *recorder, big bool) {
	g := agentGraph(r.t, big)
	root := graph.Ref{ThreadID: "t1"}
	run := func(o graph.RunOptions) {
		r.t.Helper()
		o.ThreadID, o.Saver = "t1", r.saver
		res, err := g.Run(r.ctx, o)
		r.note("run", res, err)
		r.state(g, root)
	}
	run(graph.RunOptions{Input: map[string]any{"messages": "hi", "ask": true}})
	run(graph.RunOptions{Command: &graph.Command{Resume: "yes"}})
	run(graph.RunOptions{Input: map[string]any{"messages": "again"}, InterruptBefore: []string{"tool"}})
	st := r.state(g, root)
	ai := graph.MessagesOf(st.Values, "messages")
	last := ai[len(ai)-1]
	last.Content = "end"
	ref, err := g.UpdateState(r.ctx, r.saver, root, [][]graph.Update{{{Values: map[string]any{"messages": []any{last}}, AsNode: "agent"}}}, nil)
	r.note("update", ref, err)
	r.state(g, root)
	hist := r.history(g, root)
	fork, err := g.UpdateState(r.ctx, r.saver, hist[3].Ref, [][]graph.Update{{{Values: map[string]any{"messages": "extra", "notes": []any{"fork"}}, AsNode: "tool"}}}, nil)
	r.note("fork", fork, err)
	r.state(g, fork)
	run(graph.RunOptions{CheckpointID: fork.ID})
	run(graph.RunOptions{CheckpointID: hist[len(hist)-2].Ref.ID})
	r.history(g, root)
}

// subgraphScript: a subgraph stopped before a node, its state updated in its namespace, resumed.
func subgraphScript(r *recorder) {
	g := weatherGraph()
	res, err := g.Run(r.ctx, graph.RunOptions{ThreadID: "t1", Input: map[string]any{"messages": "hi"}, Saver: r.saver})
	r.note("run", res, err)
	st := r.state(g, graph.Ref{ThreadID: "t1"})
	sub := *st.Tasks[0].State
	ref, err := g.UpdateState(r.ctx, r.saver, sub, [][]graph.Update{{{Values: map[string]any{"city": "LA"}, AsNode: "model_node"}}}, nil)
	r.note("update", ref, err)
	r.state(g, graph.Ref{ThreadID: "t1"})
	res, err = g.Run(r.ctx, graph.RunOptions{ThreadID: "t1", Saver: r.saver})
	r.note("run", res, err)
	r.history(g, graph.Ref{ThreadID: "t1"})
	r.history(g, sub)
}

// TestGraphRunsAsOnMemorySaver runs the same scripts on MemorySaver and on the log saver: every
// result, state and history must be the same, ids and times aside.
func TestGraphRunsAsOnMemorySaver(t *testing.T) {
	scripts := []struct {
		name string
		run  func(r *recorder)
	}{
		{"agent", func(r *recorder) { agentScript(r, false) }},
		{"agent with a value over 512 KiB", func(r *recorder) { agentScript(r, true) }},
		{"subgraph", subgraphScript},
	}
	for _, sc := range scripts {
		t.Run(sc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := &recorder{t: t, ctx: ctx, saver: graph.NewMemorySaver()}
			sc.run(mem)
			e := open(t)
			onLog := &recorder{t: t, ctx: ctx, saver: e.saver}
			sc.run(onLog)
			if len(mem.out) != len(onLog.out) {
				t.Fatalf("%d observations on MemorySaver, %d on the log", len(mem.out), len(onLog.out))
			}
			for i := range mem.out {
				if a, b := normalize(mem.out[i]), normalize(onLog.out[i]); a != b {
					t.Fatalf("observation %d differs:\nMemorySaver: %s\nlog saver:   %s", i, clip(a), clip(b))
				}
			}
		})
	}
}

// clip shortens s around its middle for a readable failure.
func clip(s string) string {
	if len(s) > 4000 {
		return s[:2000] + " … " + s[len(s)-2000:]
	}
	return s
}

// canon is v's JSON with objects' keys sorted, whatever Go type v is.
func canon(t testing.TB, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(raw, &x); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(x)
	return string(out)
}
