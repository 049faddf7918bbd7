package selftrace

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/tracing"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
)

// fakeIngester merges what it is given into runs, as the trace projection would.
type fakeIngester struct {
	t    *testing.T // fails on a span ingestion would refuse
	mu   sync.Mutex
	runs map[string]*trace.Run
}

// IngestEncoded checks every post as ingestion checks a client's (trace.Apply, trace ids
// required), which the real IngestEncoded leaves to the encoder: a span it would refuse fails
// the test.
func (f *fakeIngester) IngestEncoded(_ context.Context, posts []tracing.EncodedRun) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range posts {
		var fields map[string]any
		if err := trace.DecodeObject(p.JSON, &fields); err != nil {
			f.t.Errorf("post %s: %v", p.JSON, err)
			return 0, err
		}
		kind := trace.KindPost
		if p.Patch {
			kind = trace.KindPatch
		}
		id, _ := fields["id"].(string)
		r := f.runs[id]
		if r == nil {
			r = &trace.Run{}
		}
		if err := trace.Apply(r, kind, fields, true); err != nil {
			f.t.Errorf("ingestion refuses %s: %v", p.JSON, err)
			return 0, err
		}
		if r.TraceID != p.TraceID {
			f.t.Errorf("run %s of trace %s posted as trace %s", r.ID, r.TraceID, p.TraceID)
			return 0, fmt.Errorf("run %s posted to another trace", r.ID)
		}
		trace.Derive(r, trace.DefaultPrices())
		f.runs[r.ID] = r
	}
	return len(posts), nil
}

// snapshot returns the runs so far by name.
func (f *fakeIngester) snapshot() map[string]trace.Run {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]trace.Run{}
	for _, r := range f.runs {
		out[r.Name] = *r
	}
	return out
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A long run's spans are appended while it runs; its end closes them. Ids are UUIDv7, parents
// follow the events' namespaces.
func TestTracerFlushesWhileRunning(t *testing.T) {
	ing := &fakeIngester{t: t, runs: map[string]*trace.Run{}}
	tr := New(ing, Config{FlushInterval: 10 * time.Millisecond, Project: "p"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tr.Run(ctx)

	rec := engine.RunRecord{Run: engine.Run{RunID: uuid.Must(uuid.NewV7()).String(), ThreadID: "th", AssistantID: "as",
		Kwargs: engine.RunKwargs{Input: map[string]any{"q": "hi"},
			Config: map[string]any{"configurable": map[string]any{"graph_id": "g"}, "tags": []any{"x"}}}}}
	sink := tr.Begin(ctx, rec)
	sink(graph.Event{Kind: graph.KindTaskStart, Data: graph.TaskStart{ID: "t0", Name: graph.Start, Input: map[string]any{}}})
	sink(graph.Event{Kind: graph.KindTaskStart, Data: graph.TaskStart{ID: "t1", Name: "node", Input: map[string]any{"q": "hi"}, Triggers: []string{"branch:to:node"}}})
	sink(graph.Event{Kind: graph.KindTaskStart, NS: []string{"node:t1"}, Data: graph.TaskStart{ID: "t2", Name: "inner", Input: "x"}})
	llm := uuid.Must(uuid.NewV7()).String()
	sink(graph.Event{Kind: graphs.TraceLLMStart, NS: []string{"node:t1", "inner:t2"}, Data: graphs.LLMStart{ID: llm,
		Provider: "openai", Model: "gpt-4o-mini", Time: time.Now(),
		Messages: []engine.Message{engine.NewMessage(engine.MessageHuman, "hi")}}})
	waitFor(t, "the open spans", func() bool {
		runs := ing.snapshot()
		return runs["g"].Status == trace.StatusPending && runs["gpt-4o-mini"].Status == trace.StatusPending
	})
	if _, ok := ing.snapshot()[graph.Start]; ok {
		t.Error("the start task is traced")
	}

	first := time.Now()
	ai := engine.NewMessage(engine.MessageAI, "hello")
	ai.UsageMetadata = &engine.UsageMetadata{InputTokens: 10, OutputTokens: 2, TotalTokens: 12}
	sink(graph.Event{Kind: graphs.TraceLLMEnd, NS: []string{"node:t1", "inner:t2"}, Data: graphs.LLMEnd{ID: llm,
		Message: ai, FirstTokenTime: &first, Time: time.Now()}})
	sink(graph.Event{Kind: graph.KindTaskResult, NS: []string{"node:t1"}, Data: graph.TaskResult{ID: "t2", Name: "inner", Result: map[string]any{"a": 1}}})
	sink(graph.Event{Kind: graph.KindTaskResult, Data: graph.TaskResult{ID: "t1", Name: "node",
		Error: &graph.TaskError{Error: "ValueError", Message: "bad"}}})
	sink(graph.Event{Kind: graph.KindValues, Data: graph.State{"q": "hi", "a": 1}})
	sink(graph.Event{Kind: graph.KindValues, NS: []string{"node:t1"}, Data: graph.State{"sub": true}})
	tr.End(ctx, rec, engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunFailed, Error: &engine.RunError{Class: "ValueError", Message: "bad"}})
	tr.Wait()

	runs := ing.snapshot()
	root, node, inner, model := runs["g"], runs["node"], runs["inner"], runs["gpt-4o-mini"]
	if root.ID != rec.RunID || root.Status != trace.StatusError || *root.Error != "ValueError: bad" ||
		root.Outputs["a"] != float64(1) || root.Inputs["q"] != "hi" || root.SessionName != "p" || len(root.Tags) != 1 {
		t.Errorf("root %+v", root)
	}
	if *node.ParentRunID != root.ID || *inner.ParentRunID != node.ID || *model.ParentRunID != inner.ID {
		t.Errorf("parents: node %v inner %v model %v", *node.ParentRunID, *inner.ParentRunID, *model.ParentRunID)
	}
	if md, _ := node.Extra["metadata"].(map[string]any); !reflect.DeepEqual(md["langgraph_triggers"], []any{"branch:to:node"}) || md["langgraph_node"] != "node" {
		t.Errorf("node metadata %v", md)
	}
	if node.Status != trace.StatusError || inner.Outputs["a"] != float64(1) || inner.Inputs["input"] != "x" {
		t.Errorf("node %+v inner %+v", node, inner)
	}
	for _, r := range []trace.Run{node, inner, model} {
		if id := uuid.MustParse(r.ID); id.Version() != 7 || r.TraceID != root.ID {
			t.Errorf("span %s: id version %d, trace %s", r.Name, id.Version(), r.TraceID)
		}
	}
	if model.TotalTokens != 12 || model.TotalCost == nil || model.FirstTokenTime == nil || model.Provider != "openai" ||
		len(model.InputMessages) != 1 || model.InputMessages[0].Role != trace.RoleUser ||
		len(model.OutputMessages) != 1 || model.OutputMessages[0].Role != trace.RoleAssistant {
		t.Errorf("llm span %+v", model)
	}
}

// A second Begin of a run (an attempt taken over) keeps the first attempt's spans and root.
func TestTracerSecondAttempt(t *testing.T) {
	ing := &fakeIngester{t: t, runs: map[string]*trace.Run{}}
	tr := New(ing, Config{})
	ctx := context.Background()
	started := time.Now().Add(-time.Minute).UTC()
	rec := engine.RunRecord{Run: engine.Run{RunID: uuid.Must(uuid.NewV7()).String(), AssistantID: "as"}}
	sink := tr.Begin(ctx, rec)
	sink(graph.Event{Kind: graph.KindTaskStart, Data: graph.TaskStart{ID: "t1", Name: "node", Input: map[string]any{}}})
	rec.Attempt, rec.StartedAt = 2, engine.At(started)
	tr.Begin(ctx, rec)
	tr.End(ctx, rec, engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunSuccess})
	tr.Wait()
	runs := ing.snapshot()
	if runs["node"].Status != trace.StatusError || runs["as"].Status != trace.StatusSuccess || !runs["as"].StartTime.Equal(started.Truncate(time.Microsecond)) {
		t.Errorf("runs %+v", runs)
	}
}

// A graph whose steps another tracer traces (graphs.TraceDelegate) learns where that tracer's
// spans go (the root's dotted_order and the project), and its steps are not traced here too: the
// run's trace has its root alone, with the run's values and end.
func TestTracerDelegatedRun(t *testing.T) {
	ing := &fakeIngester{t: t, runs: map[string]*trace.Run{}}
	tr := New(ing, Config{Project: "p"})
	ctx := context.Background()
	rec := engine.RunRecord{Run: engine.Run{RunID: uuid.Must(uuid.NewV7()).String(), ThreadID: "th",
		Kwargs: engine.RunKwargs{Config: map[string]any{"configurable": map[string]any{"graph_id": "g"}}}}}
	sink := tr.Begin(ctx, rec)
	parent := &graphs.TraceParent{}
	sink(graph.Event{Kind: graphs.TraceDelegate, Data: parent})
	sink(graph.Event{Kind: graph.KindTaskStart, Data: graph.TaskStart{ID: "t1", Name: "node", Input: map[string]any{}}})
	sink(graph.Event{Kind: graph.KindTaskResult, Data: graph.TaskResult{ID: "t1", Name: "node", Result: map[string]any{}}})
	sink(graph.Event{Kind: graph.KindValues, Data: graph.State{"a": 1}})
	tr.End(ctx, rec, engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunSuccess})
	tr.Wait()

	runs := ing.snapshot()
	root := runs["g"]
	if len(runs) != 1 || root.ID != rec.RunID || root.Outputs["a"] != float64(1) || root.Status != trace.StatusSuccess {
		t.Fatalf("runs %v, root %+v", runs, root)
	}
	if parent.DottedOrder != root.DottedOrder || parent.Project != "p" || !strings.HasSuffix(parent.DottedOrder, "Z"+rec.RunID) {
		t.Errorf("parent %+v, root dotted_order %s", parent, root.DottedOrder)
	}
}

// Spans skip ingestion's checks, so what those would refuse is never posted: a run whose id is
// not a lowercase UUID is not traced at all (its every span would be refused), and a model
// call's id in capitals is kept in lowercase, as ingestion keeps a client's.
func TestTracerPostsOnlyWhatIngestionAccepts(t *testing.T) {
	ing := &fakeIngester{t: t, runs: map[string]*trace.Run{}}
	tr := New(ing, Config{Project: "p"})
	ctx := context.Background()
	for _, id := range []string{"run-1", strings.ToUpper(uuid.Must(uuid.NewV7()).String())} {
		rec := engine.RunRecord{Run: engine.Run{RunID: id, ThreadID: "th", AssistantID: "as"}}
		sink := tr.Begin(ctx, rec)
		sink(graph.Event{Kind: graph.KindTaskStart, Data: graph.TaskStart{ID: "t1", Name: "node"}})
		tr.End(ctx, rec, engine.RunFinishedData{RunID: id, Status: engine.RunSuccess})
	}
	tr.Wait()
	if runs := ing.snapshot(); len(runs) != 0 {
		t.Fatalf("runs with ids ingestion refuses were traced: %v", runs)
	}

	rec := engine.RunRecord{Run: engine.Run{RunID: uuid.Must(uuid.NewV7()).String(), ThreadID: "th", AssistantID: "as"}}
	sink := tr.Begin(ctx, rec)
	llm := strings.ToUpper(uuid.Must(uuid.NewV7()).String())
	sink(graph.Event{Kind: graphs.TraceLLMStart, Data: graphs.LLMStart{ID: llm, Model: "m", Time: time.Now()}})
	sink(graph.Event{Kind: graphs.TraceLLMEnd, Data: graphs.LLMEnd{ID: llm, Message: engine.NewMessage(engine.MessageAI, "hi"), Time: time.Now()}})
	tr.End(ctx, rec, engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunSuccess})
	tr.Wait()
	if m := ing.snapshot()["m"]; m.ID != strings.ToLower(llm) || m.EndTime == nil || m.Status != trace.StatusSuccess {
		t.Fatalf("model span %+v", m)
	}
}

// tenantIngester records the tenant and the traces of each append, then ingests as fakeIngester.
type tenantIngester struct {
	fakeIngester
	calls []map[string]string // trace id -> tenant, per call
}

func (r *tenantIngester) IngestEncoded(ctx context.Context, posts []tracing.EncodedRun) (int, error) {
	call := map[string]string{}
	for _, p := range posts {
		call[p.TraceID] = engine.TenantFrom(ctx)
	}
	r.mu.Lock()
	r.calls = append(r.calls, call)
	r.mu.Unlock()
	return r.fakeIngester.IngestEncoded(ctx, posts)
}

// Runs that end together are appended together, one append per tenant, each in its tenant.
func TestTracerAppendsEndedRunsTogether(t *testing.T) {
	ing := &tenantIngester{fakeIngester: fakeIngester{t: t, runs: map[string]*trace.Run{}}}
	tr := New(ing, Config{Project: "p"})
	want := map[string]string{}
	for i, tenant := range []string{"acme", "acme", "globex", "acme", "globex"} {
		ctx := engine.WithTenant(context.Background(), tenant)
		rec := engine.RunRecord{Run: engine.Run{RunID: uuid.Must(uuid.NewV7()).String(), ThreadID: "th", AssistantID: fmt.Sprint("as", i)}}
		sink := tr.Begin(ctx, rec)
		sink(graph.Event{Kind: graph.KindTaskStart, Data: graph.TaskStart{ID: "t1", Name: "node", Input: map[string]any{}}})
		sink(graph.Event{Kind: graph.KindTaskResult, Data: graph.TaskResult{ID: "t1", Name: "node", Result: map[string]any{}}})
		tr.End(ctx, rec, engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunSuccess})
		want[rec.RunID] = tenant
	}
	tr.Wait()
	got := map[string]string{}
	for _, call := range ing.calls {
		tenants := map[string]bool{}
		for id, tenant := range call {
			got[id] = tenant
			tenants[tenant] = true
		}
		if len(tenants) != 1 {
			t.Errorf("one append for the traces of tenants %v", tenants)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("traces appended in tenants %v, want %v", got, want)
	}
	if len(ing.calls) != 2 {
		t.Errorf("%d appends for 5 runs of 2 tenants that ended together, want 2", len(ing.calls))
	}
	if n := len(ing.runs); n != 10 {
		t.Errorf("%d spans, want a root and a node for each of the 5 runs", n)
	}
}
