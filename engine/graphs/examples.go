package graphs

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/model"
)

// The example graphs of contract/example-graphs.md: small, deterministic, offline graphs that
// together exercise every feature of the runtime. Their messages get stable ids (see stableID),
// and their fake models take their turn from the thread's state, not from process memory, so a
// thread gives the same answers after a restart and on any replica.

// ExampleIDs returns the ids of the example graphs, in the order Examples registers them.
func ExampleIDs() []string {
	return []string{"echo", "agent", "agent_simple", "nested", "weather", "error", "delay", "dynamic",
		"simple_runtime", "state_schema_graph", "zod_registry_graph", "plain_zod_graph"}
}

// Examples returns a registry of the example graphs with their system assistants' defaults:
// agent has config.configurable.model_name = "openai", simple_runtime has context.model =
// "unknown".
func Examples() *Registry {
	r := NewRegistry()
	add := func(id, desc string, g *graph.Graph) {
		r.MustRegister(Entry{ID: id, Build: Static(g), Description: desc})
	}
	add("echo", "Answers \"echo: \" + the last message.", echoGraph())
	r.MustRegister(Entry{ID: "agent", Build: Static(agentGraph()),
		Description: "A fake agent answering begin, end in turn, with a tool node, store reads and writes, interrupts and custom events.",
		Config:      map[string]any{"configurable": map[string]any{"model_name": "openai"}}})
	add("agent_simple", "A fake agent that fans out to its tool with Send and reads configurable headers.", agentSimpleGraph())
	add("nested", "Three levels of subgraphs: gp_one -> gp_two(p_one -> p_two(c_one -> c_two)).", nestedGraph())
	add("weather", "Routes to a weather subgraph that interrupts before answering.", weatherGraph())
	add("error", "Sleeps 1 s, then fails with CustomError: Boo!", errorGraph())
	add("delay", "Sleeps state.delay milliseconds, then answers.", delayGraph())
	r.MustRegister(Entry{ID: "dynamic", Build: dynamicFactory(),
		Description: "A graph factory: one node named after configurable.nodeName (default \"default\")."})
	r.MustRegister(Entry{ID: "simple_runtime", Build: Static(simpleRuntimeGraph()),
		Description: "Returns the runtime context's model.", Context: map[string]any{"model": "unknown"}})
	add("state_schema_graph", "Schema example: a messages channel and a counter.", stateSchemaGraph())
	add("zod_registry_graph", "Schema example: a messages channel, a counter and a status enum.", zodRegistryGraph())
	add("plain_zod_graph", "Schema example: a list and a counter, no messages channel.", plainZodGraph())
	return r
}

// idSpace is the UUID namespace of the examples' stable message ids.
var idSpace = uuid.MustParse("0e4c2b8e-3f7a-5d61-9a0b-6c1d2e3f4a5b")

// scope is what makes ids of one thread (or, without a thread, one run) distinct from another's.
func scope(rt *graph.Runtime) string {
	if rt.ThreadID != "" {
		return "thread:" + rt.ThreadID
	}
	return "run:" + rt.Config.String("run_id")
}

// stableID is a message id derived from the thread, who makes the message and a turn number, so
// that running a thread again gives the same ids and golden files stay stable.
func stableID(rt *graph.Runtime, parts ...any) string {
	key := scope(rt)
	for _, p := range parts {
		key += "|" + fmt.Sprint(p)
	}
	return uuid.NewSHA1(idSpace, []byte(key)).String()
}

// fakeSeed is the seed of a fake model of graph in rt's run. It names the run, so that every
// generation gets a fresh message id (an answer regenerated from a checkpoint, by another run,
// must not take the id of the one it replaces: a UI would see two messages with one key), while
// a run continued on another process after a crash answers with the same ids. Within a run, the
// fake's ids differ by the conversation, which grows with every answer.
func fakeSeed(rt *graph.Runtime, graphID string) string {
	return graphID + "|" + scope(rt) + "|run:" + rt.Config.String("run_id")
}

// streamAnswer answers text through a model.Fake seeded for the thread, emitting each streamed
// chunk (one per character) as a messages stream event; the chunks share the message's id. The
// call is traced (callModel).
func streamAnswer(ctx context.Context, rt *graph.Runtime, seed, text string, msgs []engine.Message) (engine.Message, error) {
	f := model.NewFake(model.Text(text)).WithSeed(seed)
	return callModel(ctx, rt, f, model.Request{Messages: msgs})
}

// aiMessage is an AI message with text and id.
func aiMessage(id, text string) engine.Message {
	m := engine.NewMessage(engine.MessageAI, text)
	m.ID, m.ToolCalls, m.InvalidToolCalls = id, []engine.ToolCall{}, []any{}
	return m
}

// toolMessage is a successful tool message answering call id.
func toolMessage(id, callID, text string) engine.Message {
	m := engine.NewMessage(engine.MessageTool, text)
	m.ID, m.ToolCallID, m.Status = id, callID, "success"
	return m
}

// stateOf is a node's input as a state.
func stateOf(in any) graph.State {
	switch s := in.(type) {
	case graph.State:
		return s
	case map[string]any:
		return s
	}
	return graph.State{}
}

// last returns the last message, or an empty one.
func last(msgs []engine.Message) engine.Message {
	if len(msgs) == 0 {
		return engine.Message{}
	}
	return msgs[len(msgs)-1]
}

// countAI counts the AI messages: the turn of a fake model that answers once per AI message.
func countAI(msgs []engine.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Type == engine.MessageAI {
			n++
		}
	}
	return n
}

// needStore fails a node that uses the store when the run has none.
func needStore(rt *graph.Runtime) error {
	if rt.Store == nil {
		return graph.Errorf("RuntimeError", "this graph needs a store and the run has none")
	}
	return nil
}

// JSON Schema helpers.
func typed(t any) map[string]any { return map[string]any{"type": t} }

func enum(values ...string) map[string]any {
	vs := make([]any, len(values))
	for i, v := range values {
		vs[i] = v
	}
	return map[string]any{"type": "string", "enum": vs}
}

func withDefault(s map[string]any, v any) map[string]any { s["default"] = v; return s }

func stringList() map[string]any {
	return map[string]any{"type": "array", "items": typed("string")}
}

func objectSchema(props map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": props}
}

func echoGraph() *graph.Graph {
	b := graph.NewBuilder("echo").Channel("messages", graph.Messages())
	b.Node("echo", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		msgs := graph.MessagesOf(stateOf(in), "messages")
		m := aiMessage(stableID(rt, "echo", len(msgs)), "echo: "+last(msgs).Text())
		return map[string]any{"messages": []any{m}}, nil
	})
	return b.Edge(graph.Start, "echo").Edge("echo", graph.End).MustCompile(graph.CompileOptions{})
}

// errorDelay is how long the error graph waits before failing.
var errorDelay = time.Second

func errorGraph() *graph.Graph {
	b := graph.NewBuilder("error").Channel("messages", graph.Messages())
	b.Node("error_node", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		if err := engine.Sleep(ctx, errorDelay); err != nil {
			return nil, err
		}
		return nil, graph.Errorf("CustomError", "Boo!")
	})
	return b.Edge(graph.Start, "error_node").Edge("error_node", graph.End).MustCompile(graph.CompileOptions{})
}

func delayGraph() *graph.Graph {
	b := graph.NewBuilder("delay").Channel("messages", graph.Messages()).
		Channel("delay", graph.LastValue().WithSchema(typed("number")))
	b.Node("long_running", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		st := stateOf(in)
		ms, _ := engine.Number(st["delay"])
		if err := engine.Sleep(ctx, time.Duration(ms*float64(time.Millisecond))); err != nil {
			return nil, err
		}
		// What the reducer makes of the plain string "finished after ...", with a stable id.
		m := engine.NewMessage(engine.MessageHuman, "finished after "+strconv.FormatFloat(ms, 'f', -1, 64)+"ms")
		m.ID = stableID(rt, "delay", len(graph.MessagesOf(st, "messages")))
		return map[string]any{"messages": []any{m}}, nil
	})
	return b.Edge(graph.Start, "long_running").Edge("long_running", graph.End).MustCompile(graph.CompileOptions{})
}

// maxDynamicCache bounds the compiled graphs the dynamic factory keeps (node names come from
// requests).
const maxDynamicCache = 64

// dynamicFactory builds, per run config, a graph of one node named configurable.nodeName
// (default "default") that returns {node: <name>, messages: [<name>]}.
func dynamicFactory() Factory {
	var mu sync.Mutex
	cache := map[string]*graph.Graph{}
	return func(cfg graph.Config) (*graph.Graph, error) {
		name := cfg.String("nodeName")
		if name == "" {
			name = "default"
		}
		mu.Lock()
		g, ok := cache[name]
		mu.Unlock()
		if ok {
			return g, nil
		}
		b := graph.NewBuilder("dynamic").Channel("node", graph.LastValue().WithSchema(typed("string"))).
			Channel("messages", graph.Append().WithSchema(stringList()))
		b.Node(name, func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
			return map[string]any{"node": name, "messages": []any{name}}, nil
		})
		g, err := b.Edge(graph.Start, name).Edge(name, graph.End).Compile(graph.CompileOptions{})
		if err != nil {
			return nil, err
		}
		mu.Lock()
		if len(cache) < maxDynamicCache {
			cache[name] = g
		}
		mu.Unlock()
		return g, nil
	}
}

func simpleRuntimeGraph() *graph.Graph {
	models := enum("openai", "anthropic", "unknown")
	b := graph.NewBuilder("simple_runtime").Channel("message", graph.LastValue().WithSchema(typed("string"))).
		Channel("model", graph.LastValue().WithSchema(models)).OutputKeys("model").
		ContextSchema(objectSchema(map[string]any{"model": enum("openai", "anthropic", "unknown")}),
			map[string]any{"model": "unknown"})
	b.Node("use_context", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		return map[string]any{"model": rt.Context["model"]}, nil
	})
	return b.Edge(graph.Start, "use_context").Edge("use_context", graph.End).MustCompile(graph.CompileOptions{})
}

// counter reads a number state key that defaults to 0.
func counter(st graph.State, key string) int {
	f, _ := engine.Number(st[key])
	return int(f)
}

func stateSchemaGraph() *graph.Graph {
	b := graph.NewBuilder("state_schema_graph").Channel("messages", graph.Messages()).
		Channel("count", graph.LastValue().WithSchema(withDefault(typed("number"), 0)))
	b.Node("process", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		n := counter(stateOf(in), "count") + 1
		m := aiMessage(stableID(rt, "state_schema_graph", n), fmt.Sprintf("Response %d", n))
		return map[string]any{"messages": []any{m}, "count": n}, nil
	})
	return b.Edge(graph.Start, "process").Edge("process", graph.End).MustCompile(graph.CompileOptions{})
}

// zodRegistryGraph is the example whose messages are plain strings, each update one more, and
// whose schema marks them as messages anyway (as a Zod state with a reducer of its own and a JSON
// Schema extra does: the schema is the reducer's input, a string).
func zodRegistryGraph() *graph.Graph {
	marked := map[string]any{"type": "string", "langgraph_type": "messages"}
	b := graph.NewBuilder("zod_registry_graph").Channel("messages", graph.Append().WithSchema(marked)).
		Channel("count", graph.LastValue().WithSchema(withDefault(typed("number"), 0))).
		Channel("status", graph.LastValue().WithSchema(withDefault(enum("idle", "processing", "done"), "idle")))
	b.Node("process", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		n := counter(stateOf(in), "count") + 1
		return map[string]any{"messages": fmt.Sprintf("Message %d", n), "count": n, "status": "processing"}, nil
	})
	return b.Edge(graph.Start, "process").Edge("process", graph.End).MustCompile(graph.CompileOptions{})
}

func plainZodGraph() *graph.Graph {
	b := graph.NewBuilder("plain_zod_graph").
		Channel("items", graph.LastValue().WithSchema(withDefault(stringList(), []any{}))).
		Channel("counter", graph.LastValue().WithSchema(withDefault(typed("number"), 0)))
	b.Node("process", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		st := stateOf(in)
		n := counter(st, "counter") + 1
		items, _ := st["items"].([]any)
		items = append(append([]any(nil), items...), fmt.Sprintf("Item %d", n))
		return map[string]any{"items": items, "counter": n}, nil
	})
	return b.Edge(graph.Start, "process").Edge("process", graph.End).MustCompile(graph.CompileOptions{})
}
