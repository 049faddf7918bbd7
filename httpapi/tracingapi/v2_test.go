package tracingapi_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/platform"
)

// queryV2 pages through POST /api/v2/runs/query with q, following next_cursor, and returns every
// item.
func (s *traceStack) queryV2(t *testing.T, q map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	for page := 0; ; page++ {
		code, v := s.json(t, "POST", "/api/v2/runs/query", q)
		if code != 200 {
			t.Fatalf("v2 query %v = %d %v", q, code, v)
		}
		for _, it := range tfield(v, "items").([]any) {
			out = append(out, it.(map[string]any))
		}
		next, _ := tfield(v, "next_cursor").(string)
		if next == "" {
			return out
		}
		q = cloneMap(q)
		q["cursor"] = next
		if page > 100 {
			t.Fatal("v2 query does not end")
		}
	}
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func itemIDs(items []map[string]any) []string {
	var out []string
	for _, it := range items {
		out = append(out, it["id"].(string))
	}
	return out
}

func TestRunQueriesV2(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	roots, all := seedTraces(t, s, "alpha", 7, base)
	seedTraces(t, s, "beta", 2, base)
	oldRoots, old := seedTraces(t, s, "alpha", 1, base.Add(-47*time.Hour))
	_, list := s.send(t, "GET", "/sessions?name=alpha&limit=1", nil, nil)
	alpha := tfield(list.([]any)[0], "id").(string)
	_, list = s.send(t, "GET", "/sessions?name=beta&limit=1", nil, nil)
	beta := tfield(list.([]any)[0], "id").(string)
	in := func(q map[string]any) map[string]any {
		q["project_ids"] = []string{alpha}
		return q
	}

	// Paging by cursor covers the last day once, and each item has what it selects, in the v2
	// forms (upper-case enums, project_id), and nothing else.
	selects := []string{"ID", "NAME", "RUN_TYPE", "STATUS", "PROJECT_ID", "IS_ROOT", "PARENT_RUN_IDS", "APP_PATH"}
	items := s.queryV2(t, in(map[string]any{"page_size": 4, "selects": selects}))
	if got := itemIDs(items); !sameIDSet(got, traceIDs(all, nil)) || len(got) != len(all) {
		t.Fatalf("paging gave %d runs, want the %d of the last day once each", len(got), len(all))
	}
	for _, it := range items {
		want := []string{"id", "is_root", "name", "parent_run_ids", "project_id", "run_type", "status"}
		var keys []string
		for k := range it {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, want) {
			t.Fatalf("item fields %v, want %v", keys, want)
		}
		if it["project_id"] != alpha || !slices.Contains([]any{"CHAIN", "LLM", "TOOL"}, it["run_type"]) ||
			!slices.Contains([]any{"SUCCESS", "ERROR"}, it["status"]) {
			t.Fatalf("item %v", it)
		}
	}
	if items := s.queryV2(t, in(map[string]any{"ids": traceIDs(all[:1], nil)})); len(items) != 1 || len(items[0]) != 1 {
		t.Errorf("no selects = %v, want the id alone", items)
	}

	cases := map[string]struct {
		q    map[string]any
		want []string
	}{
		"is_root":        {in(map[string]any{"is_root": true}), traceIDs(roots, nil)},
		"run_type":       {in(map[string]any{"run_type": "LLM"}), traceIDs(all, func(r map[string]any) bool { return r["run_type"] == "llm" })},
		"has_error":      {in(map[string]any{"has_error": true}), traceIDs(roots, func(r map[string]any) bool { return r["error"] != nil })},
		"trace_id":       {in(map[string]any{"trace_id": roots[2]["id"]}), traceIDs(all[6:9], nil)},
		"ids":            {in(map[string]any{"ids": traceIDs(all[:2], nil)}), traceIDs(all[:2], nil)},
		"filter":         {in(map[string]any{"filter": `and(eq(run_type, "chain"), gt(total_tokens, 150))`}), traceIDs(roots[5:], nil)},
		"trace_filter":   {in(map[string]any{"run_type": "TOOL", "trace_filter": `eq(name, "root-3")`}), traceIDs(all[11:12], nil)},
		"tree_filter":    {in(map[string]any{"is_root": true, "tree_filter": `gt(total_tokens, 160)`}), traceIDs(roots[6:], nil)},
		"min_start_time": {in(map[string]any{"is_root": true, "min_start_time": base.Add(-48 * time.Hour).Format(time.RFC3339)}), traceIDs(append(slices.Clone(roots), oldRoots...), nil)},
		"max_start_time": {in(map[string]any{"is_root": true, "max_start_time": base.Add(2 * time.Second).Format(time.RFC3339)}), traceIDs(roots[:3], nil)},
		"old window": {in(map[string]any{"min_start_time": base.Add(-48 * time.Hour).Format(time.RFC3339),
			"max_start_time": base.Add(-46 * time.Hour).Format(time.RFC3339)}), traceIDs(old, nil)},
		"other project": {map[string]any{"project_ids": []string{beta}, "is_root": true}, nil},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := itemIDs(s.queryV2(t, c.q))
			if name == "other project" {
				if len(got) != 2 {
					t.Errorf("got %d roots, want 2", len(got))
				}
				return
			}
			if !sameIDSet(got, c.want) {
				t.Errorf("got %d runs %v, want %d %v", len(got), got, len(c.want), c.want)
			}
		})
	}

	// Every problem of a bad query at once.
	code, v := s.json(t, "POST", "/api/v2/runs/query", map[string]any{"selects": []string{"NAME", "NOPE"},
		"min_start_time": "yesterday", "ids": []string{"x"}, "filter": "eq(name"})
	if code != 422 {
		t.Fatalf("bad v2 query = %d %v", code, v)
	}
	var locs []string
	for _, d := range tfield(v, "detail").([]any) {
		locs = append(locs, fmt.Sprint(tfield(d, "loc")))
	}
	for _, want := range []string{"[body project_ids]", "[body selects 1]", "[body min_start_time]", "[body ids 0]", "[body filter]"} {
		if !slices.Contains(locs, want) {
			t.Errorf("bad v2 query: problems at %v, missing %s", locs, want)
		}
	}
}

func TestRunRetrieveV2(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	roots, all := seedTraces(t, s, "alpha", 2, time.Now().Add(-time.Minute).Truncate(time.Second))
	seedTraces(t, s, "beta", 1, time.Now().Add(-time.Minute))
	_, list := s.send(t, "GET", "/sessions?name=alpha&limit=1", nil, nil)
	alpha := tfield(list.([]any)[0], "id").(string)
	_, list = s.send(t, "GET", "/sessions?name=beta&limit=1", nil, nil)
	beta := tfield(list.([]any)[0], "id").(string)

	llm := all[1]
	path := fmt.Sprintf("/api/v2/runs/%s?project_id=%s&selects=NAME&selects=OUTPUTS&selects=PROMPT_TOKEN_DETAILS&selects=METADATA&selects=TOTAL_TOKENS",
		llm["id"], alpha)
	code, v := s.send(t, "GET", path, nil, nil)
	if code != 200 {
		t.Fatalf("retrieve = %d %v", code, v)
	}
	if tfield(v, "name") != "model" || tfield(v, "id") != nil || tfield(v, "total_tokens") != float64(110) ||
		tfield(v, "metadata", "ls_model_name") != "gpt-4o-mini" || tfield(v, "outputs", "usage_metadata") == nil {
		t.Errorf("retrieve = %v", v)
	}
	if code, v := s.send(t, "GET", fmt.Sprintf("/api/v2/runs/%s?project_id=%s", llm["id"], alpha), nil, nil); code != 200 || len(v.(map[string]any)) != 1 || tfield(v, "id") != llm["id"] {
		t.Errorf("retrieve without selects = %d %v, want the id alone", code, v)
	}
	if code, v := s.send(t, "GET", fmt.Sprintf("/api/v2/runs/%s?project_id=%s", llm["id"], beta), nil, nil); code != 404 {
		t.Errorf("retrieve in another project = %d %v, want 404", code, v)
	}
	if code, v := s.send(t, "GET", fmt.Sprintf("/api/v2/runs/%s?selects=NOPE", llm["id"]), nil, nil); code != 422 || len(tfield(v, "detail").([]any)) != 2 {
		t.Errorf("retrieve without project_id, bad select = %d %v, want 422 with both", code, v)
	}

	// A trace's runs, in execution order.
	code, v = s.send(t, "GET", fmt.Sprintf("/api/v2/traces/%s/runs?project_id=%s&selects=ID&selects=DOTTED_ORDER", roots[1]["id"], alpha), nil, nil)
	if code != 200 {
		t.Fatalf("trace runs = %d %v", code, v)
	}
	var got []string
	for _, it := range tfield(v, "items").([]any) {
		got = append(got, tfield(it, "id").(string))
	}
	if want := traceIDs(all[3:6], nil); !slices.Equal(got, want) {
		t.Errorf("trace runs %v, want %v in execution order", got, want)
	}
}

func TestSessionsV2(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	now := time.Now().Add(-time.Minute)
	for _, p := range []string{"alpha", "beta", "gamma"} {
		seedTraces(t, s, p, 1, now)
	}
	var names []string
	q := url.Values{"page_size": {"2"}, "include_stats": {"true"}}
	for page := 0; ; page++ {
		code, v := s.send(t, "GET", "/api/v2/sessions?"+q.Encode(), nil, nil)
		if code != 200 || page > 3 {
			t.Fatalf("sessions page %d = %d %v", page, code, v)
		}
		for _, it := range tfield(v, "items").([]any) {
			names = append(names, tfield(it, "name").(string))
			if tfield(it, "run_count") != float64(1) {
				t.Errorf("session %v: run_count, want 1", it)
			}
		}
		next, _ := tfield(v, "next_cursor").(string)
		if next == "" {
			break
		}
		q.Set("cursor", next)
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "alpha,beta,gamma" {
		t.Errorf("sessions %v", names)
	}
	if code, v := s.send(t, "GET", "/api/v2/sessions?name_contains=AMM", nil, nil); code != 200 || len(tfield(v, "items").([]any)) != 1 {
		t.Errorf("name_contains = %d %v", code, v)
	}
	if code, v := s.send(t, "GET", "/api/v2/sessions?cursor=!!&id=x", nil, nil); code != 422 || len(tfield(v, "detail").([]any)) != 2 {
		t.Errorf("bad cursor and id = %d %v, want 422 with both", code, v)
	}
}

func TestThreadsV2(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	now := time.Now().Add(-time.Hour).Truncate(time.Second)
	// Turns: t1 two days ago (out of the default window), t1 three times in the last hour (the
	// second fails), t2 once, last; a root in no thread.
	type turn struct {
		key, thread string
		at          time.Duration
		fail        bool
	}
	turns := []turn{{"thread_id", "t1", -48 * time.Hour, false}, {"thread_id", "t1", 0, false},
		{"conversation_id", "t1", time.Second, true}, {"thread_id", "t1", 2 * time.Second, false},
		{"session_id", "t2", 3 * time.Second, false}, {"", "", 4 * time.Second, false}}
	var parts []tracePart
	var roots []map[string]any
	for i, tu := range turns {
		r := newTracedRun(nil, fmt.Sprintf("turn-%d", i), "chain", now.Add(tu.at))
		r["session_name"] = "chat"
		r["end_time"] = now.Add(tu.at + 500*time.Millisecond).UnixMilli()
		r["inputs"] = map[string]any{"question": fmt.Sprintf("q%d", i)}
		r["outputs"] = map[string]any{"answer": fmt.Sprintf("a%d", i)}
		if tu.key != "" {
			r["extra"] = map[string]any{"metadata": map[string]any{tu.key: tu.thread}}
		}
		if tu.fail {
			r["error"] = "boom"
		}
		parts = append(parts, traceJSONPart("post."+r["id"].(string), r))
		roots = append(roots, r)
	}
	if code, v := s.postMultipart(t, "", parts...); code != 202 {
		t.Fatalf("seed = %d %v", code, v)
	}
	for _, r := range roots {
		s.runWhen(t, r["id"].(string), func(m map[string]any) bool { return m["end_time"] != nil })
	}
	_, list := s.send(t, "GET", "/sessions?name=chat&limit=1", nil, nil)
	project := tfield(list.([]any)[0], "id").(string)

	var threads []map[string]any
	q := map[string]any{"project_id": project, "page_size": 1}
	for page := 0; ; page++ {
		code, v := s.json(t, "POST", "/api/v2/threads/query", q)
		if code != 200 || page > 3 {
			t.Fatalf("threads page %d = %d %v", page, code, v)
		}
		for _, it := range tfield(v, "items").([]any) {
			threads = append(threads, it.(map[string]any))
		}
		next, _ := tfield(v, "next_cursor").(string)
		if next == "" {
			break
		}
		q = cloneMap(q)
		q["cursor"] = next
	}
	if len(threads) != 2 || threads[0]["thread_id"] != "t2" || threads[1]["thread_id"] != "t1" {
		t.Fatalf("threads %v, want t2 then t1", threads)
	}
	t1 := threads[1]
	if t1["count"] != float64(3) || t1["num_errored_turns"] != float64(1) || t1["last_error"] != "boom" ||
		t1["first_trace_id"] != roots[1]["id"] || t1["last_trace_id"] != roots[3]["id"] ||
		t1["first_inputs"] != `{"question":"q1"}` || t1["last_outputs"] != `{"answer":"a3"}` || t1["latency_p50"] != 0.5 {
		t.Errorf("thread t1 = %v", t1)
	}

	code, v := s.send(t, "GET", fmt.Sprintf("/api/v2/threads/t1/traces?project_id=%s&selects=TURN_NUMBER&selects=NAME&selects=INPUTS_PREVIEW&selects=OP", project), nil, nil)
	if code != 200 {
		t.Fatalf("thread traces = %d %v", code, v)
	}
	items := tfield(v, "items").([]any)
	if len(items) != 4 {
		t.Fatalf("thread t1 traces %v, want its 4 turns", items)
	}
	for i, it := range items {
		want := map[string]any{"trace_id": roots[i]["id"], "turn_number": float64(i + 1), "name": fmt.Sprintf("turn-%d", i),
			"inputs_preview": fmt.Sprintf(`{"question":"q%d"}`, i)}
		if d := covers(want, it, "item"); d != "" || len(it.(map[string]any)) != len(want) {
			t.Errorf("turn %d = %v: %s", i, it, d)
		}
	}

	if code, v := s.json(t, "POST", "/api/v2/threads/query", map[string]any{"thread_filter": "x", "cursor": "!!"}); code != 422 || len(tfield(v, "detail").([]any)) != 3 {
		t.Errorf("bad threads query = %d %v, want 422 with its 3 problems", code, v)
	}
}

func TestTracesQueryV2(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	roots, _ := seedTraces(t, s, "alpha", 4, base)
	_, list := s.send(t, "GET", "/sessions?name=alpha&limit=1", nil, nil)
	alpha := tfield(list.([]any)[0], "id").(string)

	var got []any
	q := map[string]any{"project_id": alpha, "page_size": 3, "selects": []string{"NAME", "STATUS"}}
	for page := 0; ; page++ {
		code, v := s.json(t, "POST", "/api/v2/traces/query", q)
		if code != 200 || page > 3 {
			t.Fatalf("traces page %d = %d %v", page, code, v)
		}
		got = append(got, tfield(v, "items").([]any)...)
		next, _ := tfield(v, "next_cursor").(string)
		if next == "" {
			break
		}
		q = cloneMap(q)
		q["cursor"] = next
	}
	if len(got) != 4 {
		t.Fatalf("traces %v, want 4", got)
	}
	// Newest first: root-3 (failed) has 100 + 40 tokens in its llm child, and a first token.
	newest := got[0]
	want := map[string]any{"root_run": map[string]any{"name": "root-3", "status": "ERROR"},
		"trace_aggregates": map[string]any{"total_tokens": float64(140)}}
	if d := covers(want, newest, "trace"); d != "" || len(tfield(newest, "root_run").(map[string]any)) != 2 ||
		tfield(newest, "trace_aggregates", "total_cost") == nil || tfield(newest, "trace_aggregates", "first_token_time") == nil {
		t.Errorf("newest trace %v: %s", newest, d)
	}
	code, v := s.json(t, "POST", "/api/v2/traces/query", map[string]any{"project_id": alpha, "trace_ids": []string{roots[1]["id"].(string)},
		"trace_filter": `eq(status, "error")`})
	if items := tfield(v, "items").([]any); code != 200 || len(items) != 0 {
		t.Errorf("trace_ids with a trace_filter it fails = %d %v", code, v)
	}
	code, v = s.json(t, "POST", "/api/v2/traces/query", map[string]any{"project_id": alpha, "trace_ids": []string{roots[0]["id"].(string)},
		"trace_filter": `eq(status, "error")`, "selects": []string{"ID"}})
	if items := tfield(v, "items").([]any); code != 200 || len(items) != 1 || tfield(items[0], "root_run", "id") != roots[0]["id"] {
		t.Errorf("trace_ids with a trace_filter it meets = %d %v", code, v)
	}
	if code, v := s.json(t, "POST", "/api/v2/traces/query", map[string]any{"trace_ids": []string{"x"}}); code != 422 || len(tfield(v, "detail").([]any)) != 2 {
		t.Errorf("bad traces query = %d %v, want 422 with both problems", code, v)
	}
}

// TestSessionsGeneratedClient drives the session routes of the Python client's generated
// resource (client.sessions): create_v2, retrieve_v2 (with stats), update_v2 under /api/v2, and
// create, retrieve, update, delete under /api/v1. v2 answers carry type PROJECT, v1 ones do not.
func TestSessionsGeneratedClient(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	seedTraces(t, s, "seeded", 1, time.Now().Add(-time.Minute))
	_, list := s.send(t, "GET", "/sessions?name=seeded&limit=1", nil, nil)
	seeded := tfield(list.([]any)[0], "id").(string)

	code, v := s.send(t, "GET", "/api/v2/sessions/"+seeded+"?include_stats=true", nil, nil)
	if code != 200 || tfield(v, "type") != "PROJECT" || tfield(v, "run_count") != float64(1) || tfield(v, "name") != "seeded" {
		t.Fatalf("retrieve_v2 = %d %v", code, v)
	}
	if code, v = s.json(t, "POST", "/api/v2/sessions", map[string]any{"name": "experiment", "type": "EXPERIMENT"}); code != 422 {
		t.Fatalf("create_v2 of an experiment = %d %v, want 422: jetgraph makes tracing projects only", code, v)
	}
	code, v = s.json(t, "POST", "/api/v2/sessions", map[string]any{"name": "made-v2", "type": "PROJECT", "description": "d", "extra": map[string]any{"k": "v"}})
	if code != 200 || tfield(v, "type") != "PROJECT" || tfield(v, "description") != "d" || tfield(v, "extra", "k") != "v" {
		t.Fatalf("create_v2 = %d %v", code, v)
	}
	made := tfield(v, "id").(string)
	if code, v = s.json(t, "POST", "/api/v2/sessions?upsert=true", map[string]any{"name": "made-v2"}); code != 200 || tfield(v, "id") != made {
		t.Fatalf("create_v2 upsert = %d %v, want project %s", code, v, made)
	}
	if code, v = s.json(t, "POST", "/api/v2/sessions", map[string]any{"name": "made-v2"}); code != 409 {
		t.Fatalf("create_v2 of a taken name = %d %v, want 409", code, v)
	}
	code, v = s.json(t, "PATCH", "/api/v2/sessions/"+made, map[string]any{"name": "renamed-v2", "description": "e"})
	if code != 200 || tfield(v, "type") != "PROJECT" || tfield(v, "name") != "renamed-v2" || tfield(v, "description") != "e" {
		t.Fatalf("update_v2 = %d %v", code, v)
	}

	code, v = s.json(t, "POST", "/api/v1/sessions", map[string]any{"name": "made-v1"})
	if code != 200 || tfield(v, "name") != "made-v1" || tfield(v, "type") != nil {
		t.Fatalf("v1 create = %d %v", code, v)
	}
	v1 := tfield(v, "id").(string)
	if code, v = s.send(t, "GET", "/api/v1/sessions/"+v1, nil, nil); code != 200 || tfield(v, "id") != v1 {
		t.Fatalf("v1 retrieve = %d %v", code, v)
	}
	if code, v = s.json(t, "PATCH", "/api/v1/sessions/"+v1, map[string]any{"description": "x"}); code != 200 || tfield(v, "description") != "x" {
		t.Fatalf("v1 update = %d %v", code, v)
	}
	if code, v = s.send(t, "DELETE", "/api/v1/sessions/"+v1, nil, nil); code != 204 {
		t.Fatalf("v1 delete = %d %v", code, v)
	}
	if code, v = s.send(t, "GET", "/api/v2/sessions/"+v1, nil, nil); code != 404 {
		t.Fatalf("retrieve_v2 of a deleted project = %d %v, want 404", code, v)
	}
	if code, v = s.send(t, "GET", "/api/v2/sessions/nope", nil, nil); code != 422 {
		t.Fatalf("retrieve_v2 of a bad id = %d %v, want 422", code, v)
	}
}

// covers reports where got lacks something of want: every key of want is there with an equal
// value, lists as long ("" when it covers).
func covers(want, got any, at string) string {
	switch r := want.(type) {
	case map[string]any:
		l, ok := got.(map[string]any)
		if !ok {
			return at + ": not an object"
		}
		for k, rv := range r {
			lv, ok := l[k]
			if !ok {
				return at + "." + k + ": missing"
			}
			if d := covers(rv, lv, at+"."+k); d != "" {
				return d
			}
		}
	case []any:
		l, ok := got.([]any)
		if !ok || len(l) != len(r) {
			return fmt.Sprintf("%s: %d items, want %d", at, len(l), len(r))
		}
		for i := range r {
			if d := covers(r[i], l[i], fmt.Sprintf("%s[%d]", at, i)); d != "" {
				return d
			}
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return fmt.Sprintf("%s: %v, want %v", at, got, want)
		}
	}
	return ""
}

// TestRunAttachmentsV2 selects a run's ATTACHMENTS: name -> an absolute download URL (the Python
// client fetches it as it comes), which gives the bytes back.
func TestRunAttachmentsV2(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	run := newTracedRun(nil, "with-file", "chain", time.Now().Add(-time.Minute))
	run["session_name"] = "files"
	id := run["id"].(string)
	code, v := s.postMultipart(t, "", traceJSONPart("post."+id, run),
		tracePart{name: "attachment." + id + ".notes", ctype: "text/plain", data: []byte("some notes")})
	if code != 202 {
		t.Fatalf("multipart = %d %v", code, v)
	}
	r := s.runWhen(t, id, func(r map[string]any) bool { return r["s3_urls"] != nil })
	project := r["session_id"].(string)
	code, v = s.json(t, "POST", "/api/v2/runs/query", map[string]any{"project_ids": []string{project},
		"selects": []string{"NAME", "ATTACHMENTS"}})
	items, _ := tfield(v, "items").([]any)
	if code != 200 || len(items) != 1 {
		t.Fatalf("query = %d %v", code, v)
	}
	url, _ := tfield(items[0], "attachments", "notes").(string)
	if want := s.URL + "/runs/" + id + "/attachments/notes"; url != want {
		t.Fatalf("attachments = %v, want notes at %s", tfield(items[0], "attachments"), want)
	}
	if ctype, body := s.download(t, strings.TrimPrefix(url, s.URL+"/")); ctype != "text/plain" || string(body) != "some notes" {
		t.Errorf("download = %s %q", ctype, body)
	}
	code, v = s.send(t, "GET", "/api/v2/runs/"+id+"?project_id="+project+"&selects=ATTACHMENTS", nil, nil)
	if code != 200 || tfield(v, "attachments", "notes") != url {
		t.Errorf("retrieve = %d %v", code, v)
	}
}
