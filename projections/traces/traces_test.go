package traces_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
	"github.com/jetgraph/jetgraph/projections/traces"
)

// traceScript is a fixed history of the trace stream that touches every fold: a project
// created by event and others on first use (by name, by id, the default), a trace whose llm
// child has tokens, a cost and a first token, a patch that comes before its post, and feedback.
func traceScript() []eventlog.Event {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	i := 0
	ev := func(kind, id, typ string, data any) eventlog.Event {
		i++
		raw, _ := json.Marshal(data)
		return eventlog.Event{ID: fmt.Sprintf("01JT%022d", i), Type: typ, Version: 1, Data: raw,
			Aggregate: eventlog.Aggregate{Kind: kind, Tenant: "default", ID: id}, Time: t0.Add(time.Duration(i) * time.Second)}
	}
	uid := func(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }
	at := func(ms int) string {
		return t0.Add(time.Duration(ms) * time.Millisecond).Format("2006-01-02T15:04:05.000000Z")
	}
	dotted := func(ids ...int) string {
		s := ""
		for k, id := range ids {
			if k > 0 {
				s += "."
			}
			s += trace.FormatSegment(t0.Add(time.Duration(k)*time.Millisecond), uid(id))
		}
		return s
	}
	run := func(trace string, fields map[string]any) traces.RunData { return traces.RunData{Run: fields} }
	root, llm, tool := uid(1), uid(2), uid(3)
	root2, child2 := uid(4), uid(5)
	return []eventlog.Event{
		ev("trace_project", traces.ProjectID("default", "alpha"), traces.ProjectCreated,
			traces.ProjectData{Name: "alpha", Extra: map[string]any{"team": "a"}}),
		ev("trace", root, traces.RunPosted, run(root, map[string]any{"id": root, "trace_id": root, "dotted_order": dotted(1),
			"name": "agent", "run_type": "chain", "start_time": at(0), "session_name": "alpha", "inputs": map[string]any{"q": "hi"}})),
		ev("trace", root, traces.RunPosted, run(root, map[string]any{"id": llm, "trace_id": root, "dotted_order": dotted(1, 2),
			"parent_run_id": root, "name": "model", "run_type": "llm", "start_time": at(1), "end_time": at(900), "session_name": "alpha",
			"extra":   map[string]any{"metadata": map[string]any{"ls_provider": "openai", "ls_model_name": "gpt-4o-mini"}},
			"events":  []any{map[string]any{"name": "new_token", "time": at(300)}},
			"inputs":  map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}},
			"outputs": map[string]any{"role": "assistant", "content": "hello", "usage_metadata": map[string]any{"input_tokens": 12, "output_tokens": 3, "total_tokens": 15}}})),
		ev("trace", root, traces.RunPosted, run(root, map[string]any{"id": tool, "trace_id": root, "dotted_order": dotted(1, 3),
			"parent_run_id": root, "name": "search", "run_type": "tool", "start_time": at(2), "session_name": "alpha"})),
		ev("trace", root, traces.RunPatched, run(root, map[string]any{"id": tool, "trace_id": root, "end_time": at(950), "error": "timeout"})),
		ev("trace", root, traces.RunPatched, run(root, map[string]any{"id": root, "trace_id": root, "end_time": at(1000),
			"outputs": map[string]any{"a": "hello"}})),
		ev("trace", root, traces.FeedbackCreated, traces.FeedbackData{ID: uid(9), Feedback: json.RawMessage(`{"key":"ok","score":1}`)}),
		// A patch before its post, a child before its parent, in a project named by id.
		ev("trace", root2, traces.RunPatched, run(root2, map[string]any{"id": child2, "trace_id": root2, "end_time": at(500),
			"extra": map[string]any{"metadata": map[string]any{"patched": true}}})),
		ev("trace", root2, traces.RunPosted, run(root2, map[string]any{"id": child2, "trace_id": root2, "dotted_order": dotted(4, 5),
			"parent_run_id": root2, "name": "step", "run_type": "llm", "start_time": at(1), "session_id": uid(7), "session_name": "beta",
			"end_time": nil, "outputs": map[string]any{"r": 0, "usage_metadata": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}})),
		ev("trace", root2, traces.RunPosted, run(root2, map[string]any{"id": root2, "trace_id": root2, "dotted_order": dotted(4),
			"name": "second", "run_type": "chain", "start_time": at(0), "session_id": uid(7), "end_time": at(600)})),
		// No project named: the default one.
		ev("trace", uid(6), traces.RunPosted, run(uid(6), map[string]any{"id": uid(6), "trace_id": uid(6), "dotted_order": dotted(6),
			"name": "alone", "run_type": "prompt", "start_time": at(0)})),
		// Feedback: on a run before its post (it counts in the run's project once posted), updated;
		// on the llm run, deleted.
		ev("trace", uid(120), traces.FeedbackCreated, traces.FeedbackData{ID: uid(110),
			Feedback: json.RawMessage(`{"run_id":"` + uid(120) + `","trace_id":"` + uid(120) + `","key":"helpful","score":0.5,"value":"meh"}`)}),
		ev("trace", uid(120), traces.RunPosted, run(uid(120), map[string]any{"id": uid(120), "trace_id": uid(120), "dotted_order": dotted(120),
			"name": "rated", "run_type": "chain", "start_time": at(0), "session_id": uid(7)})),
		ev("trace", uid(120), traces.FeedbackUpdated, traces.FeedbackUpdateData{ID: uid(110), Update: map[string]any{"score": 1.0, "comment": "good"}}),
		ev("trace", root, traces.FeedbackCreated, traces.FeedbackData{ID: uid(111),
			Feedback: json.RawMessage(`{"run_id":"` + llm + `","key":"helpful","score":true}`)}),
		ev("trace", root, traces.FeedbackDeleted, traces.FeedbackRef{ID: uid(111)}),
		ev("trace", root, traces.FeedbackTokenCreated, trace.FeedbackToken{ID: uid(112), RunID: root, Key: "thumbs",
			ExpiresAt: engine.At(t0.Add(3 * time.Hour))}),
		// A project renamed; a run then named by its old name makes a new project of that name.
		ev("trace_project", traces.ProjectID("default", "alpha"), traces.ProjectUpdated,
			traces.ProjectUpdateData{Name: ptr("alpha-1"), Description: ptr("first")}),
		ev("trace", uid(130), traces.RunPosted, run(uid(130), map[string]any{"id": uid(130), "trace_id": uid(130), "dotted_order": dotted(130),
			"name": "again", "run_type": "chain", "start_time": at(0), "session_name": "alpha"})),
		// A project deleted with its runs and feedback (on its run, and on the project itself).
		ev("trace", uid(140), traces.RunPosted, run(uid(140), map[string]any{"id": uid(140), "trace_id": uid(140), "dotted_order": dotted(140),
			"name": "doomed", "run_type": "chain", "start_time": at(0), "session_name": "delta"})),
		ev("trace", uid(140), traces.FeedbackCreated, traces.FeedbackData{ID: uid(141),
			Feedback: json.RawMessage(`{"run_id":"` + uid(140) + `","trace_id":"` + uid(140) + `","key":"helpful","score":0}`)}),
		ev("trace", uid(142), traces.FeedbackCreated, traces.FeedbackData{ID: uid(142),
			Feedback: json.RawMessage(`{"session_id":"` + traces.ProjectID("default", "delta") + `","key":"overall","score":1}`)}),
		ev("trace_project", traces.ProjectID("default", "delta"), traces.ProjectDeleted, struct{}{}),
	}
}

func ptr[T any](v T) *T { return &v }

func TestTracesGoldenAndRebuildEqualsLive(t *testing.T) {
	l := eventlogtest.Open(t)
	ctx := context.Background()
	dir := t.TempDir()
	live := openDB(t, filepath.Join(dir, "live.db"))
	liveTraces := traces.NewTraces(live, nil, nil)
	p := projections.NewProjector(live, l, eventlog.TraceStream, liveTraces)
	run(t, p)
	var last uint64
	for _, e := range traceScript() {
		var err error
		if last, err = l.Append(ctx, e, eventlog.Any); err != nil {
			t.Fatal(err)
		}
		waitFor(t, p, last) // applied one by one, as live traffic is
	}
	if err := p.Halted(); err != nil {
		t.Fatal(err)
	}
	got := dump(t, live, liveTraces)
	checkGolden(t, "traces.golden", got)

	rebuilt := openDB(t, filepath.Join(dir, "rebuilt.db"))
	rebuiltTraces := traces.NewTraces(rebuilt, nil, nil)
	p2 := projections.NewProjector(rebuilt, l, eventlog.TraceStream, rebuiltTraces)
	if err := p2.Reset(); err != nil {
		t.Fatal(err)
	}
	run(t, p2)
	waitFor(t, p2, last)
	if r := dump(t, rebuilt, rebuiltTraces); r != got {
		t.Errorf("rebuild differs from live:\nrebuilt:\n%s\nlive:\n%s", r, got)
	}

	// Roll-ups: the root carries its llm child's tokens, cost and first token.
	_ = liveTraces.View(func(v *traces.TraceView) error {
		root, ok, err := v.Run("default", "00000000-0000-4000-8000-000000000001")
		if err != nil || !ok {
			t.Fatalf("root: %v %v", ok, err)
		}
		if root.TotalTokens != 15 || root.TotalCost == nil || root.FirstTokenTime == nil {
			t.Errorf("root roll-up: tokens %d, cost %v, first token %v", root.TotalTokens, root.TotalCost, root.FirstTokenTime)
		}
		child, _, _ := v.Run("default", "00000000-0000-4000-8000-000000000005")
		if child == nil || child.EndTime == nil || child.Metadata()["patched"] != true || child.TotalTokens != 2 {
			t.Errorf("a patch before its post was lost or overwritten: %+v", child)
		}
		// The child came before its parent: the parent still gets its roll-up.
		if root2, _, _ := v.Run("default", "00000000-0000-4000-8000-000000000004"); root2 == nil || root2.TotalTokens != 2 {
			t.Errorf("parent posted after its child: %+v", root2)
		}
		alpha := v.ProjectStats("default", traces.ProjectID("default", "alpha"))
		if alpha.Runs != 3 || alpha.Roots != 1 || alpha.TotalTokens != 15 || len(alpha.Latencies) != 1 || len(alpha.FirstTokens) != 1 {
			t.Errorf("alpha roll-ups: %+v", alpha)
		}
		return nil
	})

	// Retention: expiring everything leaves projects, and roll-ups at zero.
	n, err := liveTraces.Expire(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), 100)
	if err != nil || n != 6 {
		t.Fatalf("Expire = %d, %v; want the 6 traces (one holding only the deleted project's feedback)", n, err)
	}
	_ = liveTraces.View(func(v *traces.TraceView) error {
		if _, ok, _ := v.Run("default", "00000000-0000-4000-8000-000000000001"); ok {
			t.Error("an expired run is still there")
		}
		ps, _ := v.Projects("default")
		if len(ps) != 4 {
			t.Errorf("projects after expiry: %d, want 4", len(ps))
		}
		alpha := v.ProjectStats("default", traces.ProjectID("default", "alpha"))
		if alpha.Runs != 0 || alpha.Roots != 0 || alpha.TotalTokens != 0 || len(alpha.Latencies) != 0 {
			t.Errorf("alpha roll-ups after expiry: %+v", alpha)
		}
		return nil
	})
	after := dump(t, live, liveTraces)
	for _, b := range []string{"trace_runs", "trace_meta", "trace_by_project", "trace_by_trace", "trace_traces", "trace_expiry", "trace_feedback", "trace_project_latency",
		"trace_feedback_ids", "trace_feedback_by_run", "trace_feedback_by_project", "trace_feedback_tokens",
		"trace_feedback_tokens_by_trace"} {
		if i := indexAfter(after, "["+b+"]\n"); i >= 0 && i < len(after) && after[i] != '[' {
			t.Errorf("bucket %s not empty after expiry:\n%s", b, after)
		}
	}
}

// indexAfter returns the index just past sub in s, -1 when absent.
func indexAfter(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i + len(sub)
		}
	}
	return -1
}
