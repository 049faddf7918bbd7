package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
)

func texts(s State, key string) string {
	var out []string
	for _, m := range MessagesOf(s, key) {
		out = append(out, m.Text())
	}
	return strings.Join(out, ",")
}

// agentGraph is the shape of the shipped "agent" graph with a model that answers begin, end, ...
func agentGraph(t testing.TB) *Graph {
	var mu sync.Mutex
	n := 0
	b := NewBuilder("agent").Channel("messages", Messages()).Channel("interrupt", LastValue())
	b.Node("agent", func(ctx context.Context, in any, rt *Runtime) (any, error) {
		st := in.(State)
		if v, _ := st["interrupt"].(bool); v {
			if _, err := rt.Interrupt("i want to interrupt"); err != nil {
				return nil, err
			}
		}
		mu.Lock()
		answer := []string{"begin", "end"}[n%2]
		n++
		mu.Unlock()
		msg := engine.NewMessage(engine.MessageAI, answer)
		msg.ID = fmt.Sprintf("ai-%d", n)
		return map[string]any{"messages": []any{msg}, "interrupt": false}, nil
	})
	b.Node("tool", func(ctx context.Context, in any, rt *Runtime) (any, error) {
		ms := MessagesOf(in.(State), "messages")
		m := engine.NewMessage(engine.MessageTool, "tool_call__"+ms[len(ms)-1].Text())
		m.ToolCallID = "tool_call_id"
		return map[string]any{"messages": []any{m}}, nil
	})
	b.Edge(Start, "agent").Edge("tool", "agent")
	b.Branch("agent", func(ctx context.Context, s State, rt *Runtime) (any, error) {
		ms := MessagesOf(s, "messages")
		if ms[len(ms)-1].Text() == "end" {
			return End, nil
		}
		return "tool", nil
	}, "tool", End)
	g, err := b.Compile(CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestAgentLoopCheckpoints(t *testing.T) {
	ctx := context.Background()
	g := agentGraph(t)
	saver := NewMemorySaver()
	res, err := g.Run(ctx, RunOptions{ThreadID: "t", Input: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "foo"}}}, Saver: saver})
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(res.Values, "messages"); got != "foo,begin,tool_call__begin,end" {
		t.Fatalf("messages = %s", got)
	}
	hist, err := g.History(ctx, saver, Ref{ThreadID: "t"}, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hist {
		var w []string
		if m, ok := h.Metadata["writes"].(map[string]any); ok {
			for k := range m {
				w = append(w, k)
			}
		}
		got = append(got, fmt.Sprintf("%v:%v:%v:%v", h.Metadata["step"], h.Metadata["source"], w, h.Next))
	}
	want := "[3:loop:[agent]:[] 2:loop:[tool]:[agent] 1:loop:[agent]:[tool] 0:loop:[]:[agent] -1:input:[__start__]:[__start__]]"
	if fmt.Sprint(got) != want {
		t.Fatalf("history\n got %v\nwant %s", got, want)
	}
}

func TestDynamicInterruptAndResume(t *testing.T) {
	ctx := context.Background()
	g := agentGraph(t)
	saver := NewMemorySaver()
	res, err := g.Run(ctx, RunOptions{ThreadID: "t", Input: map[string]any{"messages": "foo", "interrupt": true}, Saver: saver})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || len(res.Interrupts) != 1 || res.Interrupts[0].Value != "i want to interrupt" {
		t.Fatalf("result = %+v", res)
	}
	st, err := g.State(ctx, saver, Ref{ThreadID: "t"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(st.Next) != "[agent]" || len(st.Tasks[0].Interrupts) != 1 || st.Interrupts[0].ID != res.Interrupts[0].ID {
		t.Fatalf("state = %+v", st)
	}
	// Resuming without a pending interrupt is refused; resuming this one finishes the run.
	res, err = g.Run(ctx, RunOptions{ThreadID: "t", Command: &Command{Resume: "ok"}, Saver: saver})
	if err != nil {
		t.Fatal(err)
	}
	if res.Interrupted || texts(res.Values, "messages") != "foo,begin,tool_call__begin,end" {
		t.Fatalf("after resume: %+v", res)
	}
	if _, err := g.Run(ctx, RunOptions{ThreadID: "t", Command: &Command{Resume: "again"}, Saver: saver}); !engine.Is(engine.Invalid, err) {
		t.Fatalf("resume without interrupt: %v", err)
	}
}

func TestStaticInterruptsAndUpdateState(t *testing.T) {
	ctx := context.Background()
	g := agentGraph(t)
	saver := NewMemorySaver()
	res, err := g.Run(ctx, RunOptions{ThreadID: "t", Input: map[string]any{"messages": "foo"}, Saver: saver, InterruptBefore: []string{"tool"}})
	if err != nil || !res.Interrupted {
		t.Fatalf("%+v %v", res, err)
	}
	st, _ := g.State(ctx, saver, Ref{ThreadID: "t"}, false)
	if fmt.Sprint(st.Next) != "[tool]" {
		t.Fatalf("next = %v", st.Next)
	}
	// Rewrite the AI answer as the agent: the branch re-routes to END.
	ai := MessagesOf(st.Values, "messages")[1]
	ai.Content = "end"
	ref, err := g.UpdateState(ctx, saver, Ref{ThreadID: "t"}, [][]Update{{{Values: map[string]any{"messages": []any{ai}}, AsNode: "agent"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, _ = g.State(ctx, saver, ref, false)
	if len(st.Next) != 0 || texts(st.Values, "messages") != "foo,end" || st.Metadata["source"] != "update" {
		t.Fatalf("after update: next %v values %s md %v", st.Next, texts(st.Values, "messages"), st.Metadata)
	}
	// Fork from the interrupted checkpoint: a new branch, the old history kept.
	hist, _ := g.History(ctx, saver, Ref{ThreadID: "t"}, ListOptions{})
	old := hist[1].Ref // the checkpoint before the update
	fork, err := g.UpdateState(ctx, saver, old, [][]Update{{{Values: map[string]any{"messages": "extra"}, AsNode: "tool"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, _ = g.State(ctx, saver, fork, false)
	if st.Metadata["source"] != "fork" || st.Parent.ID != old.ID || fmt.Sprint(st.Next) != "[agent]" {
		t.Fatalf("fork: %+v", st)
	}
	if _, err := g.UpdateState(ctx, saver, Ref{ThreadID: "t"}, [][]Update{{{Values: map[string]any{}, AsNode: "nope"}}}, nil); !engine.Is(engine.Invalid, err) {
		t.Fatalf("unknown as_node: %v", err)
	}
}

func TestSendMapReduce(t *testing.T) {
	b := NewBuilder("mapreduce").Channel("items", LastValue()).Channel("results", Append())
	b.Node("fan", func(ctx context.Context, in any, rt *Runtime) (any, error) { return nil, nil })
	b.Node("square", func(ctx context.Context, in any, rt *Runtime) (any, error) {
		n := in.(float64)
		return map[string]any{"results": []any{n * n}}, nil
	})
	b.Edge(Start, "fan").Branch("fan", func(ctx context.Context, s State, rt *Runtime) (any, error) {
		var sends []Send
		for _, it := range s["items"].([]any) {
			sends = append(sends, Send{Node: "square", Arg: it})
		}
		return sends, nil
	})
	g := b.MustCompile(CompileOptions{})
	res, err := g.Run(context.Background(), RunOptions{Input: map[string]any{"items": []any{1.0, 2.0, 3.0}}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Values["results"]) != "[1 4 9]" {
		t.Fatalf("results = %v (Send tasks must apply in send order)", res.Values["results"])
	}
}

func TestSubgraphInterruptBeforeAndResume(t *testing.T) {
	ctx := context.Background()
	sub := NewBuilder("weather_graph").Channel("messages", Messages()).Channel("city", LastValue())
	sub.Node("model_node", func(ctx context.Context, in any, rt *Runtime) (any, error) {
		return map[string]any{"city": "San Francisco"}, nil
	})
	sub.Node("weather_node", func(ctx context.Context, in any, rt *Runtime) (any, error) {
		return map[string]any{"messages": []any{engine.NewMessage(engine.MessageAI, "It's sunny in "+in.(State)["city"].(string)+"!")}}, nil
	})
	sub.Edge(Start, "model_node").Edge("model_node", "weather_node")
	sg := sub.MustCompile(CompileOptions{InterruptBefore: []string{"weather_node"}})
	parent := NewBuilder("weather").Channel("messages", Messages()).Subgraph("weather_graph", sg).Edge(Start, "weather_graph")
	g := parent.MustCompile(CompileOptions{})
	saver := NewMemorySaver()

	res, err := g.Run(ctx, RunOptions{ThreadID: "t", Input: map[string]any{"messages": "hi"}, Saver: saver})
	if err != nil || !res.Interrupted {
		t.Fatalf("%+v %v", res, err)
	}
	st, err := g.State(ctx, saver, Ref{ThreadID: "t"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(st.Next) != "[weather_graph]" || st.Tasks[0].State == nil || st.Tasks[0].SubState == nil {
		t.Fatalf("state = %+v", st)
	}
	subRef := *st.Tasks[0].State
	if fmt.Sprint(st.Tasks[0].SubState.Next) != "[weather_node]" {
		t.Fatalf("subgraph next = %v", st.Tasks[0].SubState.Next)
	}
	if _, err := g.UpdateState(ctx, saver, subRef, [][]Update{{{Values: map[string]any{"city": "LA"}, AsNode: "model_node"}}}, nil); err != nil {
		t.Fatal(err)
	}
	res, err = g.Run(ctx, RunOptions{ThreadID: "t", Saver: saver})
	if err != nil || res.Interrupted {
		t.Fatalf("%+v %v", res, err)
	}
	if got := texts(res.Values, "messages"); got != "hi,It's sunny in LA!" {
		t.Fatalf("messages = %s", got)
	}
}

func TestFailuresNeverCrash(t *testing.T) {
	b := NewBuilder("bad").Channel("x", LastValue())
	b.Node("boom", func(ctx context.Context, in any, rt *Runtime) (any, error) { panic("kaboom") })
	b.Edge(Start, "boom")
	_, err := b.MustCompile(CompileOptions{}).Run(context.Background(), RunOptions{Input: map[string]any{"x": 1}})
	var ne *NodeError
	if !errors.As(err, &ne) || ne.Message != "kaboom" || ne.Node != "boom" {
		t.Fatalf("panic: %v", err)
	}

	loop := NewBuilder("loop").Channel("n", Reducer(func(c, w any) (any, error) {
		f, _ := c.(float64)
		return f + w.(float64), nil
	}, nil))
	loop.Node("inc", func(ctx context.Context, in any, rt *Runtime) (any, error) { return map[string]any{"n": 1.0}, nil })
	loop.Edge(Start, "inc").Edge("inc", "inc")
	_, err = loop.MustCompile(CompileOptions{}).Run(context.Background(), RunOptions{Input: map[string]any{}, Config: Config{RecursionLimit: 5}})
	if class, _ := ClassOf(err); class != "GraphRecursionError" {
		t.Fatalf("recursion: %v", err)
	}

	two := NewBuilder("two").Channel("x", LastValue())
	two.Node("a", func(ctx context.Context, in any, rt *Runtime) (any, error) { return map[string]any{"x": 1}, nil })
	two.Node("b", func(ctx context.Context, in any, rt *Runtime) (any, error) { return map[string]any{"x": 2}, nil })
	two.Edge(Start, "a").Edge(Start, "b")
	_, err = two.MustCompile(CompileOptions{}).Run(context.Background(), RunOptions{Input: map[string]any{}})
	if class, _ := ClassOf(err); class != "InvalidUpdateError" {
		t.Fatalf("two writes to a last-value key: %v", err)
	}
}
