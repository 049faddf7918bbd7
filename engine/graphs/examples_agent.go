package graphs

import (
	"context"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
)

// Store locations the agent graph uses.
var (
	sharedStateNS   = []string{"sharedState", "data"}
	inputtedStateNS = []string{"inputtedState", "data"}
)

// agentGraph is the example "agent": a fake model answering "begin", "end", "begin", ... on each
// thread, a tool node, store reads and writes, a dynamic interrupt and custom stream events.
//
// The model's turn is the number of AI messages in the thread's state: every answer is kept in
// the state, so that count is the number of answers given so far on the thread. That makes the
// answers durable (they survive a restart and do not depend on which process runs the thread)
// where a model instance kept per thread id in memory would not.
func agentGraph() *graph.Graph {
	nullableString := typed([]any{"string", "null"})
	sleepSchema := map[string]any{"anyOf": []any{
		typed("number"),
		map[string]any{"type": "object", "required": []any{"steps", "ms"},
			"properties": map[string]any{"steps": typed("integer"), "ms": typed("number")}},
		typed("null"),
	}}
	b := graph.NewBuilder("agent").
		Channel("messages", graph.Messages()).
		Channel("sharedStateValue", graph.LastValue().WithSchema(nullableString)).
		Channel("interrupt", graph.LastValue().WithSchema(typed("boolean"))).
		Channel("keyOne", graph.LastValue().WithSchema(nullableString)).
		Channel("keyTwo", graph.LastValue().WithSchema(nullableString)).
		Channel("sleep", graph.LastValue().WithSchema(sleepSchema)).
		Channel("sharedStateFromStoreConfig", graph.LastValue().WithSchema(typed([]any{"object", "null"}))).
		OutputKeys("messages", "sharedStateValue", "interrupt", "keyOne", "keyTwo", "sleep").
		ConfigSchema(objectSchema(map[string]any{"model_name": typed("string")}))
	b.Node("agent", agentNode)
	b.Node("tool", agentToolNode)
	b.Node("checkSharedState", checkSharedStateNode)
	b.Edge(graph.Start, "agent").Edge("tool", "agent").Edge("checkSharedState", graph.End)
	b.Branch("agent", func(ctx context.Context, s graph.State, rt *graph.Runtime) (any, error) {
		msgs := graph.MessagesOf(s, "messages")
		if len(msgs) > 0 {
			switch msgs[0].Text() {
			case "should_end":
				return graph.End, nil
			case "___check_state_value":
				return "checkSharedState", nil
			}
		}
		if last(msgs).Text() == "end" {
			return graph.End, nil
		}
		return "tool", nil
	}, "tool", "checkSharedState", graph.End)
	return b.MustCompile(graph.CompileOptions{})
}

func agentNode(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
	st := stateOf(in)
	if v, _ := st["interrupt"].(bool); v {
		if _, err := rt.Interrupt("i want to interrupt"); err != nil {
			return nil, err
		}
	}
	if err := needStore(rt); err != nil {
		return nil, err
	}
	msgs := graph.MessagesOf(st, "messages")
	if st["sleep"] != nil && last(msgs).Type == engine.MessageHuman {
		if err := agentSleep(ctx, rt, st["sleep"]); err != nil {
			return nil, err
		}
	}
	answer := []string{"begin", "end"}[countAI(msgs)%2]
	msg, err := streamAnswer(ctx, rt, fakeSeed(rt, "agent"), answer, msgs)
	if err != nil {
		return nil, err
	}
	if st["sharedStateFromStoreConfig"] == nil {
		value := map[string]any{"id": rt.Config.Configurable["user_id"]}
		if err := rt.Store.Put(ctx, sharedStateNS, "user_id", value); err != nil {
			return nil, err
		}
	}
	return map[string]any{"interrupt": false, "messages": []any{msg}}, nil
}

// agentSleep sleeps as the agent's sleep key says: a number of seconds, or {steps, ms}: steps
// times a custom event {"type": "sleep", "step": i} (i from 0) and a sleep of ms milliseconds.
func agentSleep(ctx context.Context, rt *graph.Runtime, v any) error {
	if secs, ok := engine.Number(v); ok {
		return engine.Sleep(ctx, time.Duration(secs*float64(time.Second)))
	}
	m, ok := v.(map[string]any)
	steps, okSteps := engine.Number(m["steps"])
	ms, okMS := engine.Number(m["ms"])
	if !ok || !okSteps || !okMS {
		return graph.Errorf("ValueError", "sleep must be a number of seconds or {\"steps\": n, \"ms\": n}")
	}
	for i := 0; i < int(steps); i++ {
		rt.Write(map[string]any{"type": "sleep", "step": i})
		if err := engine.Sleep(ctx, time.Duration(ms*float64(time.Millisecond))); err != nil {
			return err
		}
	}
	return nil
}

func agentToolNode(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
	if err := needStore(rt); err != nil {
		return nil, err
	}
	item, ok, err := rt.Store.Get(ctx, sharedStateNS, "user_id")
	if err != nil {
		return nil, err
	}
	var shared any
	if ok {
		shared = item
	}
	msgs := graph.MessagesOf(stateOf(in), "messages")
	// A plain node that returns a tool message, as the reference agent's: no tool runs (the
	// events stream mode shows no tool call, the run's trace no tool span).
	m := toolMessage(stableID(rt, "agent/tool", len(msgs)), "tool_call_id", "tool_call__"+last(msgs).Text())
	return map[string]any{"messages": []any{m}, "sharedStateFromStoreConfig": shared}, nil
}

func checkSharedStateNode(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
	if err := needStore(rt); err != nil {
		return nil, err
	}
	item, ok, err := rt.Store.Get(ctx, inputtedStateNS, "my_key")
	if err != nil {
		return nil, err
	}
	if !ok || item["isTrue"] != true {
		return nil, graph.Errorf("Error", "Value is not true")
	}
	return map[string]any{}, nil
}

// agentSimpleGraph is the example "agent_simple": a fake model answering "begin", "end\u2028"
// in turn (the turn is the count of AI messages, as in agentGraph), or "end: <header>" when the
// configurable x-configurable-header is set, and a tool reached through Send.
func agentSimpleGraph() *graph.Graph {
	b := graph.NewBuilder("agent_simple").
		Channel("key_one", graph.LastValue().WithSchema(typed("string"))).
		Channel("key_two", graph.LastValue().WithSchema(typed("string"))).
		Channel("sleep", graph.LastValue().WithSchema(typed("number"))).
		Channel("messages", graph.Messages())
	b.Node("agent", agentSimpleNode)
	b.Node("tool", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		// The input is the Send's argument: the message to answer (a dict after a restore).
		m, err := engine.CoerceMessage(in)
		if err != nil {
			return nil, graph.Errorf("ValueError", "tool: %v", err)
		}
		tm := toolMessage(stableID(rt, "agent_simple/tool", m.ID), "tool_call_id", "tool_call__"+m.Text())
		return map[string]any{"messages": []any{tm}}, nil
	})
	b.Edge(graph.Start, "agent").Edge("tool", "agent")
	b.Branch("agent", func(ctx context.Context, s graph.State, rt *graph.Runtime) (any, error) {
		m := last(graph.MessagesOf(s, "messages"))
		if strings.HasPrefix(m.Text(), "end") {
			return graph.End, nil
		}
		return graph.Send{Node: "tool", Arg: m}, nil
	}, "tool", graph.End)
	return b.MustCompile(graph.CompileOptions{})
}

// authUser is the authenticated user's identity in configurable, "" without one.
func authUser(cfg graph.Config) string {
	if id := cfg.String("langgraph_auth_user_id"); id != "" {
		return id
	}
	if u, ok := cfg.Configurable["langgraph_auth_user"].(map[string]any); ok {
		id, _ := u["identity"].(string)
		return id
	}
	return ""
}

func agentSimpleNode(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
	st := stateOf(in)
	msgs := graph.MessagesOf(st, "messages")
	if h := rt.Config.Configurable["x-configurable-header"]; h != nil && h != "" {
		text, _ := h.(string)
		return map[string]any{"messages": []any{aiMessage(stableID(rt, "agent_simple", len(msgs)), "end: "+text)}}, nil
	}
	if err := needStore(rt); err != nil {
		return nil, err
	}
	ns := []string{"ALL"}
	if u := authUser(rt.Config); u != "" {
		ns = []string{u}
	}
	if _, ok, err := rt.Store.Get(ctx, ns, "key_one"); err != nil {
		return nil, err
	} else if !ok {
		if err := rt.Store.Put(ctx, ns, "key_one", map[string]any{"text": last(msgs).Text()}); err != nil {
			return nil, err
		}
	}
	answer := []string{"begin", "end\u2028"}[countAI(msgs)%2]
	msg, err := streamAnswer(ctx, rt, fakeSeed(rt, "agent_simple"), answer, msgs)
	if err != nil {
		return nil, err
	}
	return map[string]any{"messages": []any{msg}}, nil
}

// nestedGraph is the example "nested": gp_one -> gp_two, gp_two = p_one -> p_two, p_two =
// c_one -> c_two; every node appends "Entered <node> node" to messages (list concatenation).
func nestedGraph() *graph.Graph {
	appendNode := func(name string) graph.NodeFunc {
		return func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
			return map[string]any{"messages": []any{"Entered " + name + " node"}}, nil
		}
	}
	list := func() graph.Spec { return graph.Append().WithSchema(stringList()) }
	child := graph.NewBuilder("nested_child").Channel("messages", list()).
		Channel("child", graph.LastValue().WithSchema(enum("child_one", "child_two"))).
		Node("c_one", appendNode("c_one")).Node("c_two", appendNode("c_two")).
		Edge(graph.Start, "c_one").Edge("c_one", "c_two").Edge("c_two", graph.End).
		MustCompile(graph.CompileOptions{})
	parent := graph.NewBuilder("nested_parent").Channel("messages", list()).
		Channel("parent", graph.LastValue().WithSchema(enum("parent_one", "parent_two"))).
		Node("p_one", appendNode("p_one")).Subgraph("p_two", child).
		Edge(graph.Start, "p_one").Edge("p_one", "p_two").Edge("p_two", graph.End).
		MustCompile(graph.CompileOptions{})
	return graph.NewBuilder("nested").Channel("messages", list()).
		Node("gp_one", appendNode("gp_one")).Subgraph("gp_two", parent).
		Edge(graph.Start, "gp_one").Edge("gp_one", "gp_two").Edge("gp_two", graph.End).
		MustCompile(graph.CompileOptions{})
}

// weatherGraph is the example "weather": a router that sends weather questions to a subgraph
// compiled with an interrupt before its weather_node.
func weatherGraph() *graph.Graph {
	sub := graph.NewBuilder("weather_graph").Channel("messages", graph.Messages()).
		Channel("city", graph.LastValue().WithSchema(typed("string")))
	sub.Node("model_node", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		return map[string]any{"city": "San Francisco"}, nil
	})
	sub.Node("weather_node", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		st := stateOf(in)
		city, _ := st["city"].(string)
		n := len(graph.MessagesOf(st, "messages"))
		return map[string]any{"messages": []any{aiMessage(stableID(rt, "weather/weather_node", n), "It's sunny in "+city+"!")}}, nil
	})
	sub.Edge(graph.Start, "model_node").Edge("model_node", "weather_node").Edge("weather_node", graph.End)
	weather := sub.MustCompile(graph.CompileOptions{InterruptBefore: []string{"weather_node"}})

	b := graph.NewBuilder("weather").Channel("messages", graph.Messages()).
		Channel("route", graph.LastValue().WithSchema(enum("weather", "other")))
	b.Node("router_node", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		return map[string]any{"route": "weather"}, nil
	})
	b.Node("normal_llm_node", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		n := len(graph.MessagesOf(stateOf(in), "messages"))
		return map[string]any{"messages": []any{aiMessage(stableID(rt, "weather/normal_llm_node", n), "Hello")}}, nil
	})
	b.Subgraph("weather_graph", weather)
	b.Edge(graph.Start, "router_node").Edge("weather_graph", graph.End).Edge("normal_llm_node", graph.End)
	b.Branch("router_node", func(ctx context.Context, s graph.State, rt *graph.Runtime) (any, error) {
		if s["route"] == "weather" {
			return "weather_graph", nil
		}
		return "normal_llm_node", nil
	}, "weather_graph", "normal_llm_node")
	return b.MustCompile(graph.CompileOptions{})
}
