package selftrace_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/engine/tracing"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
)

// start runs a platform serving the default graphs (the examples and react).
func start(t *testing.T, project string) *platform.Platform {
	t.Helper()
	return platformtest.Start(t, platform.Config{Graphs: graphs.Default(), Tracing: platform.TracingConfig{Project: project}}, nil)
}

// tree is the spans of one trace, by id and by name.
type tree struct {
	root   *trace.Run
	byID   map[string]*trace.Run
	byName map[string][]*trace.Run
}

func (tr tree) parent(r *trace.Run) *trace.Run {
	if r.ParentRunID == nil {
		return nil
	}
	return tr.byID[*r.ParentRunID]
}

// traceOf runs graph on a new thread with input and returns the trace of the run once its
// root span has ended.
func traceOf(t *testing.T, p *platform.Platform, graph string, input map[string]any) (engine.RunRecord, tree) {
	t.Helper()
	return traceOfRun(t, p, runs.Create{AssistantID: graph, Input: input})
}

// traceOfRun is traceOf for a run created as c says (on a new thread unless c names one).
func traceOfRun(t *testing.T, p *platform.Platform, c runs.Create) (engine.RunRecord, tree) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if c.ThreadID == "" {
		th, err := p.Threads.Create(ctx, threads.Create{})
		if err != nil {
			t.Fatal(err)
		}
		c.ThreadID = th.ThreadID
	}
	rec, err := p.Runs.Create(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if rec, err = p.Runs.Wait(ctx, c.ThreadID, rec.RunID); err != nil {
		t.Fatal(err)
	}
	for {
		if err := p.TraceProjector.CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
		page, err := p.Tracing.QueryRuns(ctx, tracing.Query{Trace: rec.RunID, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		tr := tree{byID: map[string]*trace.Run{}, byName: map[string][]*trace.Run{}}
		trace.SortByDottedOrder(page.Runs)
		for _, r := range page.Runs {
			tr.byID[r.ID] = r
			tr.byName[r.Name] = append(tr.byName[r.Name], r)
		}
		tr.root = tr.byID[rec.RunID]
		if tr.root != nil && tr.root.EndTime != nil {
			return rec, tr
		}
		select {
		case <-ctx.Done():
			t.Fatalf("trace of run %s: root never ended (%d spans)", rec.RunID, len(page.Runs))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// checkTree checks what every trace must have: one root, the run's; every other span under a
// span of the trace, with a dotted_order extending its parent's; with clean, no message problems.
func checkTree(t *testing.T, tr tree, rec engine.RunRecord, graph, project string, clean bool) {
	t.Helper()
	r := tr.root
	if r.RunType != trace.RunChain || r.Name != graph || !r.IsRoot() || r.TraceID != rec.RunID {
		t.Errorf("root: %s %q root=%v trace %s", r.RunType, r.Name, r.IsRoot(), r.TraceID)
	}
	if r.SessionName != project && r.SessionName != "" {
		t.Errorf("root project %q, want %q", r.SessionName, project)
	}
	if md := r.Metadata(); md["run_id"] != rec.RunID || md["thread_id"] != rec.ThreadID || md["graph_id"] != graph {
		t.Errorf("root metadata %v", md)
	}
	for _, s := range tr.byID {
		if s == r {
			continue
		}
		p := tr.parent(s)
		if p == nil || s.TraceID != rec.RunID || !strings.HasPrefix(s.DottedOrder, p.DottedOrder+".") {
			t.Errorf("span %s %q: parent %v, dotted %s", s.RunType, s.Name, s.ParentRunID, s.DottedOrder)
		}
		if s.EndTime == nil {
			t.Errorf("span %s %q never ended", s.RunType, s.Name)
		}
		if clean && len(s.MessageProblems) > 0 {
			t.Errorf("span %q: message problems %v", s.Name, s.MessageProblems)
		}
	}
}

// checkLLM checks an llm span: under a node span named node, the model named, usage counted,
// a first token time, native messages in and out.
func checkLLM(t *testing.T, tr tree, s *trace.Run, node, provider, model string) {
	t.Helper()
	if p := tr.parent(s); p == nil || p == tr.root || p.Name != node || p.RunType != trace.RunChain {
		t.Errorf("llm span's parent: %+v", p)
	}
	if s.Provider != provider || s.ModelName != model {
		t.Errorf("llm model %s/%s, want %s/%s", s.Provider, s.ModelName, provider, model)
	}
	if s.PromptTokens <= 0 || s.CompletionTokens <= 0 || s.TotalTokens != s.PromptTokens+s.CompletionTokens {
		t.Errorf("llm tokens %d + %d = %d", s.PromptTokens, s.CompletionTokens, s.TotalTokens)
	}
	if s.FirstTokenTime == nil || s.FirstTokenTime.Before(s.StartTime) || s.FirstTokenTime.After(*s.EndTime) {
		t.Errorf("llm first token %v, start %v, end %v", s.FirstTokenTime, s.StartTime, s.EndTime)
	}
	if len(s.InputMessages) == 0 || len(s.OutputMessages) != 1 || s.OutputMessages[0].Role != trace.RoleAssistant ||
		s.OutputMessages[0].UsageMetadata == nil {
		t.Errorf("llm messages in %+v out %+v", s.InputMessages, s.OutputMessages)
	}
}

func TestAgentRunTracesItself(t *testing.T) {
	p := start(t, "")
	rec, tr := traceOf(t, p, "agent", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	// The example agent's tool message answers a tool call its model never made: the trace
	// says so (a message problem), which is right.
	checkTree(t, tr, rec, "agent", "default", false)
	if tr.root.Status != trace.StatusSuccess || tr.root.Outputs["messages"] == nil || tr.root.Inputs["messages"] == nil {
		t.Errorf("root: status %s inputs %v outputs %v", tr.root.Status, tr.root.Inputs, tr.root.Outputs)
	}
	// agent ("begin") -> tool -> agent ("end"); the root is named agent too. The tool node is a
	// plain node returning a tool message: no tool span (the react template's tools have them).
	if n, m := len(tr.byName["agent"]), len(tr.byName["tool"]); n != 3 || m != 1 || tr.byName["tool"][0].RunType == trace.RunTool {
		t.Fatalf("spans: %d agent, %d tool (want the root and 2 node spans, one tool node span)", n, m)
	}
	llms := tr.byName["fake"]
	if len(llms) != 2 {
		t.Fatalf("%d llm spans, want 2", len(llms))
	}
	total := 0
	for _, s := range llms {
		checkLLM(t, tr, s, "agent", "fake", "fake")
		total += s.TotalTokens
	}
	if got := llms[0].OutputMessages[0].Content[0]["text"]; got != "begin" {
		t.Errorf("first answer %v", got)
	}
	if tr.root.TotalTokens != total {
		t.Errorf("root rolls up %d tokens, want %d", tr.root.TotalTokens, total)
	}
	// The project lists the trace, its stats count it.
	ps, err := p.Tracing.ListProjects(context.Background(), tracing.ProjectQuery{Name: "default"})
	if err != nil || len(ps) != 1 || ps[0].ID != tr.root.SessionID {
		t.Fatalf("projects %+v %v; root session %s", ps, err, tr.root.SessionID)
	}
	st, err := p.Tracing.ProjectStats(context.Background(), ps[0].ID)
	if err != nil || st.RunCount != 1 || st.TotalTokens != total || st.FirstTokenP50 == nil {
		t.Errorf("project stats %+v %v", st, err)
	}
}

func TestReactRunTracesToolCalls(t *testing.T) {
	p := start(t, "deployment-x")
	rec, tr := traceOf(t, p, "react", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "calculator: 2 + 3 * 4"}}})
	checkTree(t, tr, rec, "react", "deployment-x", true)
	llms := tr.byName["react-fake"]
	if len(llms) != 2 {
		t.Fatalf("%d llm spans, want 2", len(llms))
	}
	for _, s := range llms {
		checkLLM(t, tr, s, "agent", "fake", "react-fake")
	}
	first := llms[0]
	if first.InputMessages[0].Role != trace.RoleSystem || first.InputMessages[1].Role != trace.RoleUser {
		t.Errorf("first call's input %+v", first.InputMessages)
	}
	call := first.OutputMessages[0].Content[len(first.OutputMessages[0].Content)-1]
	if call["type"] != "tool_call" || call["name"] != "calculator" {
		t.Errorf("first answer %+v", first.OutputMessages[0])
	}
	tools := tr.byName["calculator"]
	if len(tools) != 1 || tools[0].RunType != trace.RunTool || tr.parent(tools[0]).Name != "tools" ||
		tools[0].Outputs["output"] != "14" || tools[0].Metadata()["tool_call_id"] != call["id"] {
		t.Fatalf("calculator spans %+v", tools)
	}
	// The second call sees the tool's answer.
	in := llms[1].InputMessages
	if last := in[len(in)-1]; last.Role != trace.RoleTool || last.ToolCallID != call["id"] {
		t.Errorf("second call's last input %+v", last)
	}
	if ps, _ := p.Tracing.ListProjects(context.Background(), tracing.ProjectQuery{Name: "deployment-x"}); len(ps) != 1 {
		t.Errorf("project deployment-x: %+v", ps)
	}
}

func TestSubgraphAndErrorTraces(t *testing.T) {
	p := start(t, "")
	rec, tr := traceOf(t, p, "nested", map[string]any{"messages": []any{}})
	checkTree(t, tr, rec, "nested", "default", true)
	// c_one runs in p_two, which runs in gp_two.
	c := tr.byName["c_one"]
	if len(c) != 1 {
		t.Fatalf("c_one spans %d", len(c))
	}
	var path []string
	for s := tr.parent(c[0]); s != nil; s = tr.parent(s) {
		path = append(path, s.Name)
	}
	if strings.Join(path, "<") != "p_two<gp_two<nested" {
		t.Errorf("c_one's ancestors %v", path)
	}

	rec, tr = traceOf(t, p, "error", map[string]any{})
	checkTree(t, tr, rec, "error", "default", true)
	if tr.root.Status != trace.StatusError || tr.root.Error == nil || !strings.Contains(*tr.root.Error, "Boo!") {
		t.Errorf("failed run's root: %s %v", tr.root.Status, tr.root.Error)
	}
}

// TestRootSpanOfAConfiguredRun: the root span carries the run's tags, metadata (numbers and
// nested objects as the client sent them) and, for a run resumed with a command, the command as
// its input.
func TestRootSpanOfAConfiguredRun(t *testing.T) {
	p := start(t, "")
	rec, tr := traceOfRun(t, p, runs.Create{AssistantID: "echo", Input: map[string]any{"messages": []any{}},
		Config: map[string]any{"tags": []any{"blue", "green"}},
		Metadata: map[string]any{"team": map[string]any{"size": 3.0}, "api_key": "sk-live-1",
			"callback": "https://bot:pw-9@hooks.example.com/x"}})
	checkTree(t, tr, rec, "echo", "default", true)
	if !slices.Equal(tr.root.Tags, []string{"blue", "green"}) {
		t.Errorf("root tags %v", tr.root.Tags)
	}
	md := tr.root.Metadata()
	if team, _ := md["team"].(map[string]any); team["size"] != 3.0 || md["run_attempt"] != 1.0 || md["run_status"] != engine.RunSuccess {
		t.Errorf("root metadata %v", md)
	}
	// Secrets a client configured are masked in traces as in answers.
	if md["api_key"] != engine.MaskedValue || md["callback"] != "https://bot:"+engine.MaskedValue+"@hooks.example.com/x" {
		t.Errorf("root metadata shows secrets: api_key %v, callback %v", md["api_key"], md["callback"])
	}

	rec, tr = traceOfRun(t, p, runs.Create{ThreadID: rec.ThreadID, AssistantID: "echo", Command: map[string]any{"update": map[string]any{"messages": []any{}}}})
	if got, _ := tr.root.Inputs["command"].(map[string]any); got["update"] == nil {
		t.Errorf("resumed run's root inputs %v", tr.root.Inputs)
	}
}
