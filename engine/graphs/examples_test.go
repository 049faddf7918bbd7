package graphs

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
)

func human(text string) map[string]any {
	return map[string]any{"messages": []any{map[string]any{"role": "user", "content": text}}}
}

// texts returns the text of each message of values[key] (strings as they are).
func texts(values graph.State, key string) []string {
	var out []string
	if list, ok := values[key].([]any); ok && (len(list) == 0 || isString(list[0])) {
		for _, v := range list {
			s, _ := v.(string)
			out = append(out, s)
		}
		return out
	}
	for _, m := range graph.MessagesOf(values, key) {
		out = append(out, m.Text())
	}
	return out
}

func isString(v any) bool { _, ok := v.(string); return ok }

// goldenCases run every shipped graph (Default) on a representative input; each pins its
// checkpoints, final state, history, store and stream in testdata/<name>.golden.json, and check
// what example-graphs.md promises.
var goldenCases = []struct {
	name, graph string
	steps       []step
	check       func(t *testing.T, o *outcome)
}{
	{name: "echo", graph: "echo", steps: []step{{Input: human("hi")}}, check: func(t *testing.T, o *outcome) {
		wantTexts(t, o.Steps[0].Values, "messages", "hi", "echo: hi")
	}},
	{name: "agent", graph: "agent", steps: []step{{Input: human("foo")}}, check: func(t *testing.T, o *outcome) {
		wantTexts(t, o.Steps[0].Values, "messages", "foo", "begin", "tool_call__begin", "end")
		wantLines(t, "checkpoints", o.Checkpoints, "-1 input [__start__] -> [__start__]", "0 loop [] -> [agent]",
			"1 loop [agent] -> [tool]", "2 loop [tool] -> [agent]", "3 loop [agent] -> []")
		wantLines(t, "updates", o.Updates, "agent", "tool", "agent")
		wantLines(t, "streamed", o.Streamed, "begin", "end")
		if got, _ := json.Marshal(o.Store["sharedState.data/user_id"]); string(got) != `{"id":"user-1"}` {
			t.Errorf("store item = %s", got)
		}
	}},
	{name: "agent_two_runs", graph: "agent", steps: []step{{Input: human("foo")}, {Input: human("bar")}},
		check: func(t *testing.T, o *outcome) {
			// The fake model's turn comes from the thread's state: the second run starts with "begin".
			wantTexts(t, o.Steps[1].Values, "messages", "foo", "begin", "tool_call__begin", "end", "bar", "begin", "tool_call__begin", "end")
		}},
	{name: "agent_interrupt", graph: "agent", steps: []step{
		{Input: map[string]any{"messages": "foo", "interrupt": true}},
		{Command: &graph.Command{Resume: "ok"}},
	}, check: func(t *testing.T, o *outcome) {
		if r := o.Steps[0]; !r.Interrupted || len(r.Interrupts) != 1 || r.Interrupts[0].Value != "i want to interrupt" {
			t.Errorf("first run = %+v, want the interrupt", r)
		}
		wantTexts(t, o.Steps[1].Values, "messages", "foo", "begin", "tool_call__begin", "end")
	}},
	{name: "agent_sleep_steps", graph: "agent", steps: []step{
		{Input: map[string]any{"messages": "should_end", "sleep": map[string]any{"steps": 3.0, "ms": 1.0}}},
	}, check: func(t *testing.T, o *outcome) {
		wantTexts(t, o.Steps[0].Values, "messages", "should_end", "begin")
		raw, _ := json.Marshal(o.Custom)
		if string(raw) != `[{"step":0,"type":"sleep"},{"step":1,"type":"sleep"},{"step":2,"type":"sleep"}]` {
			t.Errorf("custom events = %s", raw)
		}
	}},
	{name: "agent_check_state_fails", graph: "agent", steps: []step{{Input: human("___check_state_value")}},
		check: func(t *testing.T, o *outcome) { wantError(t, o.Steps[0], "Error: Value is not true") }},
	{name: "agent_simple", graph: "agent_simple", steps: []step{{Input: human("foo")}}, check: func(t *testing.T, o *outcome) {
		wantTexts(t, o.Steps[0].Values, "messages", "foo", "begin", "tool_call__begin", "end\u2028")
		if got, _ := json.Marshal(o.Store["ALL/key_one"]); string(got) != `{"text":"foo"}` {
			t.Errorf("store item = %s", got)
		}
	}},
	{name: "agent_simple_header", graph: "agent_simple",
		steps: []step{{Input: human("foo"), Config: map[string]any{"x-configurable-header": "hey"}}},
		check: func(t *testing.T, o *outcome) { wantTexts(t, o.Steps[0].Values, "messages", "foo", "end: hey") }},
	{name: "nested", graph: "nested", steps: []step{{Input: map[string]any{"messages": []any{"start"}}}},
		check: func(t *testing.T, o *outcome) {
			got := texts(o.Steps[0].Values, "messages")
			if !slices.Contains(got, "Entered c_two node") || got[1] != "Entered gp_one node" {
				t.Errorf("messages = %q", got)
			}
		}},
	{name: "weather", graph: "weather", steps: []step{
		{Input: human("what's the weather in SF?")},
		{Update: map[string]any{"city": "LA"}, AsNode: "model_node", InSubtask: "weather_graph"},
		{Continue: true},
	}, check: func(t *testing.T, o *outcome) {
		if r := o.Steps[0]; !r.Interrupted {
			t.Errorf("first run = %+v, want it stopped inside the subgraph", r)
		}
		wantTexts(t, o.Steps[2].Values, "messages", "what's the weather in SF?", "It's sunny in LA!")
	}},
	{name: "error", graph: "error", steps: []step{{Input: human("hi")}},
		check: func(t *testing.T, o *outcome) { wantError(t, o.Steps[0], "CustomError: Boo!") }},
	{name: "delay", graph: "delay", steps: []step{{Input: map[string]any{"messages": "hi", "delay": 20}}},
		check: func(t *testing.T, o *outcome) {
			wantTexts(t, o.Steps[0].Values, "messages", "hi", "finished after 20ms")
		}},
	{name: "dynamic", graph: "dynamic", steps: []step{{Input: map[string]any{"messages": "x"}, Config: map[string]any{"nodeName": "foo"}}},
		check: func(t *testing.T, o *outcome) {
			if v := o.Steps[0].Values; v["node"] != "foo" || strings.Join(texts(v, "messages"), ",") != "x,foo" {
				t.Errorf("values = %v", v)
			}
		}},
	{name: "dynamic_default", graph: "dynamic", steps: []step{{Input: map[string]any{}}},
		check: func(t *testing.T, o *outcome) {
			if v := o.Steps[0].Values; v["node"] != "default" {
				t.Errorf("values = %v", v)
			}
		}},
	{name: "simple_runtime", graph: "simple_runtime", steps: []step{
		{Input: map[string]any{"message": "hi"}},
		{Input: map[string]any{"message": "hi"}, Context: map[string]any{"model": "anthropic"}},
	}, check: func(t *testing.T, o *outcome) {
		// A run's values carry every channel; only an in-process invoke keeps to the output keys.
		for i, want := range []string{`{"message":"hi","model":"unknown"}`, `{"message":"hi","model":"anthropic"}`} {
			if got, _ := json.Marshal(o.Steps[i].Values); string(got) != want {
				t.Errorf("run %d = %s, want %s", i, got, want)
			}
		}
	}},
	{name: "state_schema_graph", graph: "state_schema_graph", steps: []step{{Input: map[string]any{"count": 1}}},
		check: func(t *testing.T, o *outcome) { wantTexts(t, o.Steps[0].Values, "messages", "Response 2") }},
	{name: "zod_registry_graph", graph: "zod_registry_graph", steps: []step{{Input: map[string]any{}}},
		check: func(t *testing.T, o *outcome) {
			if v := o.Steps[0].Values; v["status"] != "processing" {
				t.Errorf("values = %v", v)
			}
		}},
	{name: "plain_zod_graph", graph: "plain_zod_graph", steps: []step{{Input: map[string]any{"items": []any{"a"}}}},
		check: func(t *testing.T, o *outcome) {
			if got := texts(o.Steps[0].Values, "items"); strings.Join(got, ",") != "a,Item 1" {
				t.Errorf("items = %q", got)
			}
		}},
	{name: "react", graph: "react", steps: []step{{Input: human("calculator: 2 + 3 * 4")}},
		check: func(t *testing.T, o *outcome) {
			wantTexts(t, o.Steps[0].Values, "messages", "calculator: 2 + 3 * 4", "", "14", "calculator: 14")
			wantLines(t, "updates", o.Updates, "agent", "tools", "agent")
		}},
	{name: "react_no_tool", graph: "react", steps: []step{{Input: human("hello")}},
		check: func(t *testing.T, o *outcome) {
			if got := texts(o.Steps[0].Values, "messages"); len(got) != 2 || !strings.HasPrefix(got[1], `You said "hello".`) {
				t.Errorf("messages = %q", got)
			}
		}},
}

func TestGoldens(t *testing.T) {
	reg := Default()
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o, _ := runCase(t, reg, c.graph, c.steps)
			c.check(t, o)
			golden(t, c.name, normalize(t, o))
		})
	}
}

// Every graph a process serves by default has a golden case.
func TestEveryGraphHasAGolden(t *testing.T) {
	for _, id := range Default().IDs() {
		if !slices.ContainsFunc(goldenCases, func(c struct {
			name, graph string
			steps       []step
			check       func(t *testing.T, o *outcome)
		}) bool {
			return c.graph == id
		}) {
			t.Errorf("graph %s has no golden case", id)
		}
	}
}

// The agent's answers and message ids are a function of the thread's state: a new process (a new
// registry) continuing the thread answers as the old one would have.
func TestAgentIsDurableAndDeterministic(t *testing.T) {
	ctx := context.Background()
	run := func(saver graph.Saver, input any) graph.State {
		g, _ := Default().Build("agent", graph.Config{})
		res, err := g.Run(ctx, graph.RunOptions{ThreadID: "t", Input: input, Saver: saver, Store: newMemStore(),
			Config: graph.Config{Configurable: map[string]any{"thread_id": "t"}}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Values
	}
	in := map[string]any{"messages": []any{engine.Message{Type: "human", Content: "should_end", ID: "in-1"}}}
	a, b := graph.NewMemorySaver(), graph.NewMemorySaver()
	va, vb := run(a, in), run(b, in)
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	if string(ja) != string(jb) {
		t.Errorf("two runs of one input differ:\n%s\n%s", ja, jb)
	}
	// One model call so far on the thread: the next answer is "end", whatever process runs it.
	in2 := map[string]any{"messages": []any{engine.Message{Type: "human", Content: "bar", ID: "in-2"}}}
	wantTexts(t, run(a, in2), "messages", "should_end", "begin", "bar", "end")
}

func TestErrorGraphHonoursCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g := errorGraph()
	_, err := g.Run(ctx, graph.RunOptions{Input: human("x")})
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("err = %v, want the context's", err)
	}
}

func TestDynamicRejectsBadNodeNames(t *testing.T) {
	f := dynamicFactory()
	for _, name := range []string{"a:b", "__start__", "messages", strings.Repeat("x", engine.MaxNameBytes+1)} {
		if _, err := f(graph.Config{Configurable: map[string]any{"nodeName": name}}); err == nil {
			t.Errorf("nodeName %q accepted", name)
		}
	}
	g1, _ := f(graph.Config{})
	g2, _ := f(graph.Config{Configurable: map[string]any{"nodeName": "default"}})
	if g1 != g2 {
		t.Error("the default graph is built twice")
	}
}

func TestExamplesDefaults(t *testing.T) {
	r := Examples()
	if got := r.IDs(); !slices.Equal(got, ExampleIDs()) {
		t.Fatalf("ids = %v", got)
	}
	a, _ := r.Get("agent")
	if a.Config["configurable"].(map[string]any)["model_name"] != "openai" {
		t.Errorf("agent config = %v", a.Config)
	}
	s, _ := r.Get("simple_runtime")
	if s.Context["model"] != "unknown" {
		t.Errorf("simple_runtime context = %v", s.Context)
	}
	sel, err := Default().Select([]string{"react", ExamplesSet})
	if err != nil || sel.Len() != len(ExampleIDs())+1 {
		t.Fatalf("select: %v %v", sel.IDs(), err)
	}
	if _, err := r.Select([]string{"nope"}); err == nil || !strings.Contains(err.Error(), `no graph "nope"`) {
		t.Errorf("select unknown: %v", err)
	}
}

func wantTexts(t *testing.T, values graph.State, key string, want ...string) {
	t.Helper()
	if got := texts(values, key); !slices.Equal(got, want) {
		t.Errorf("%s = %q, want %q", key, got, want)
	}
}

func wantLines(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func wantError(t *testing.T, r stepResult, want string) {
	t.Helper()
	if r.Error != want {
		t.Errorf("error = %q, want %q", r.Error, want)
	}
}

// The schemas example-graphs.md promises.
func TestExampleSchemas(t *testing.T) {
	reg := Default()
	get := func(id string) *graph.Graph {
		g, err := reg.Build(id, graph.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	js := func(v any) string { raw, _ := json.Marshal(v); return string(raw) }
	prop := func(s map[string]any, key string) string { return js(s["properties"].(map[string]any)[key]) }

	subs := get("nested").SubgraphSchemas("", true)
	if got := strings.Join(slices.Sorted(maps.Keys(subs)), ","); got != "gp_two,gp_two|p_two" {
		t.Fatalf("nested subgraphs = %s", got)
	}
	for ns, want := range map[string]string{
		"gp_two": `"enum":["parent_one","parent_two"]`, "gp_two|p_two": `"enum":["child_one","child_two"]`,
	} {
		if st := subs[ns].State; !strings.Contains(js(st), want) || !strings.Contains(prop(st, "messages"), `"type":"array"`) {
			t.Errorf("%s state schema = %s", ns, js(st))
		}
	}
	if got := js(get("agent").Schemas().Config["properties"]); got != `{"model_name":{"type":"string"}}` {
		t.Errorf("agent config schema properties = %s", got)
	}
	if got := prop(get("simple_runtime").Schemas().Context, "model"); got != `{"enum":["openai","anthropic","unknown"],"type":"string"}` {
		t.Errorf("simple_runtime context model = %s", got)
	}
	for id, marked := range map[string]bool{"state_schema_graph": true, "zod_registry_graph": true, "plain_zod_graph": false} {
		st := js(get(id).Schemas().State)
		if strings.Contains(st, `"langgraph_type":"messages"`) != marked {
			t.Errorf("%s state schema = %s", id, st)
		}
	}
	if got := js(get("agent").Schemas().Output["properties"]); strings.Contains(got, "sharedStateFromStoreConfig") {
		t.Errorf("agent output has the input-only key: %s", got)
	}
}

// A fake model answering again from a checkpoint (a UI's "regenerate") gives its answer a new
// id: a UI keys messages by id and shows a branch switcher only for two distinct messages.
func TestRegeneratedAnswersHaveFreshIDs(t *testing.T) {
	ctx := context.Background()
	for _, id := range []string{"agent", "react"} {
		t.Run(id, func(t *testing.T) {
			g, err := Default().Build(id, graph.Config{})
			if err != nil {
				t.Fatal(err)
			}
			saver := graph.NewMemorySaver()
			run := func(runID string, o graph.RunOptions) graph.State {
				o.ThreadID, o.Saver, o.Store = "t", saver, newMemStore()
				o.Config = graph.Config{Configurable: map[string]any{"thread_id": "t", "run_id": runID}}
				res, err := g.Run(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				return res.Values
			}
			first := graph.MessagesOf(run("run-1", graph.RunOptions{Input: human("should_end")}), "messages")
			hist, err := g.History(ctx, saver, graph.Ref{ThreadID: "t"}, graph.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// The checkpoint whose next step is the model's first answer.
			var from string
			for _, h := range hist {
				if h.Metadata["step"] == 0 {
					from = h.Ref.ID
				}
			}
			again := graph.MessagesOf(run("run-2", graph.RunOptions{CheckpointID: from}), "messages")
			if len(first) < 2 || len(again) < 2 || first[1].Type != engine.MessageAI || again[1].Type != engine.MessageAI {
				t.Fatalf("answers: %v / %v", first, again)
			}
			if first[1].ID == again[1].ID {
				t.Errorf("the regenerated answer has the id of the first: %s", first[1].ID)
			}
		})
	}
}
