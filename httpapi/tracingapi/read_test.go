package tracingapi_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/platform"
)

// seedTraces posts n traces to project: a chain root, an llm child (tokens, a first token, a
// model) and a tool child; every third root fails. It returns the runs by id, roots first.
func seedTraces(t *testing.T, s *traceStack, project string, n int, base time.Time) (roots, all []map[string]any) {
	t.Helper()
	var parts []tracePart
	for i := range n {
		start := base.Add(time.Duration(i) * time.Second)
		root := newTracedRun(nil, fmt.Sprintf("root-%d", i), "chain", start)
		llm := newTracedRun(root, "model", "llm", start.Add(100*time.Millisecond))
		tool := newTracedRun(root, "search", "tool", start.Add(300*time.Millisecond))
		for _, r := range []map[string]any{root, llm, tool} {
			r["session_name"] = project
		}
		root["end_time"] = start.Add(time.Duration(i+1) * 100 * time.Millisecond).UnixMilli()
		root["tags"] = []string{"seed", fmt.Sprintf("n%d", i%2)}
		if i%3 == 0 {
			root["error"] = "failed"
		}
		llm["end_time"] = start.Add(200 * time.Millisecond).UnixMilli()
		llm["extra"] = map[string]any{"metadata": map[string]any{"ls_model_name": "gpt-4o-mini", "ls_provider": "openai"}}
		llm["events"] = []any{map[string]any{"name": "new_token", "time": start.Add(150 * time.Millisecond).UnixMilli()}}
		llm["outputs"] = map[string]any{"usage_metadata": map[string]any{"input_tokens": 100, "output_tokens": 10 * (i + 1), "total_tokens": 100 + 10*(i+1)}}
		tool["end_time"] = start.Add(400 * time.Millisecond).UnixMilli()
		for _, r := range []map[string]any{root, llm, tool} {
			parts = append(parts, traceJSONPart("post."+r["id"].(string), r))
		}
		roots = append(roots, root)
		all = append(all, root, llm, tool)
	}
	if code, v := s.postMultipart(t, "zstd", parts...); code != 202 || tfield(v, "errors") != nil {
		t.Fatalf("seed = %d %v", code, v)
	}
	for _, r := range roots {
		s.runWhen(t, r["id"].(string), func(m map[string]any) bool { return m["total_tokens"].(float64) > 0 })
	}
	for _, r := range all {
		s.run(t, r["id"].(string))
	}
	return roots, all
}

// query posts a run query and returns the run ids and the next cursor.
func (s *traceStack) query(t *testing.T, q map[string]any) ([]string, any) {
	t.Helper()
	code, v := s.json(t, "POST", "/runs/query", q)
	if code != 200 {
		t.Fatalf("query %v = %d %v", q, code, v)
	}
	var got []string
	for _, r := range tfield(v, "runs").([]any) {
		got = append(got, tfield(r, "id").(string))
	}
	return got, tfield(v, "cursors", "next")
}

func traceIDs(runs []map[string]any, keep func(map[string]any) bool) []string {
	var out []string
	for _, r := range runs {
		if keep == nil || keep(r) {
			out = append(out, r["id"].(string))
		}
	}
	return out
}

func reversed(ids []string) []string {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

func sameIDSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestRunQueries(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	roots, all := seedTraces(t, s, "alpha", 7, base)
	seedTraces(t, s, "beta", 2, base)
	code, list := s.send(t, "GET", "/sessions?name=alpha&limit=1", nil, nil)
	if code != 200 || len(list.([]any)) != 1 {
		t.Fatalf("GET /sessions?name=alpha = %d %v", code, list)
	}
	alpha := tfield(list.([]any)[0], "id").(string)

	cases := map[string]struct {
		q    map[string]any
		want []string
	}{
		"session":        {map[string]any{"session": []string{alpha}}, traceIDs(all, nil)},
		"is_root":        {map[string]any{"session": []string{alpha}, "is_root": true}, traceIDs(roots, nil)},
		"run_type":       {map[string]any{"session": []string{alpha}, "run_type": "llm"}, traceIDs(all, func(r map[string]any) bool { return r["run_type"] == "llm" })},
		"trace":          {map[string]any{"trace": roots[2]["id"]}, traceIDs(all[6:9], nil)},
		"parent_run":     {map[string]any{"parent_run": roots[1]["id"]}, traceIDs(all[4:6], nil)},
		"error":          {map[string]any{"session": []string{alpha}, "error": true}, traceIDs(roots, func(r map[string]any) bool { return r["error"] != nil })},
		"id":             {map[string]any{"id": traceIDs(all[:2], nil)}, traceIDs(all[:2], nil)},
		"start_time":     {map[string]any{"session": []string{alpha}, "is_root": true, "start_time": base.Add(5 * time.Second).Format(time.RFC3339)}, traceIDs(roots[5:], nil)},
		"filter":         {map[string]any{"session": []string{alpha}, "filter": `and(eq(run_type, "chain"), gt(total_tokens, 150))`}, traceIDs(roots[5:], nil)},
		"filter tags":    {map[string]any{"session": []string{alpha}, "filter": `has(tags, "n1")`}, traceIDs(roots, func(r map[string]any) bool { return slices.Contains(r["tags"].([]string), "n1") })},
		"trace_filter":   {map[string]any{"session": []string{alpha}, "run_type": "tool", "trace_filter": `eq(name, "root-3")`}, traceIDs(all[11:12], nil)},
		"tree_filter":    {map[string]any{"session": []string{alpha}, "is_root": true, "tree_filter": `gt(total_tokens, 160)`}, traceIDs(roots[6:], nil)},
		"every project":  {map[string]any{"is_root": true, "filter": `eq(name, "root-1")`}, nil},
		"unknown parent": {map[string]any{"parent_run": "00000000-0000-4000-8000-000000000000"}, nil},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, next := s.query(t, c.q)
			if name == "every project" {
				if len(got) != 2 { // root-1 of alpha and of beta
					t.Errorf("got %d runs, want 2", len(got))
				}
				return
			}
			if !sameIDSet(got, c.want) || next != nil {
				t.Errorf("got %d runs %v (next %v), want %d %v", len(got), got, next, len(c.want), c.want)
			}
		})
	}

	// Newest first, and paging by cursor covers everything once.
	var paged []string
	var cursor any
	for page := 0; ; page++ {
		q := map[string]any{"session": []string{alpha}, "limit": 4, "select": []string{"inputs", "outputs", "app_path"}}
		if cursor != nil {
			q["cursor"] = cursor
		}
		code, v := s.json(t, "POST", "/runs/query", q)
		if code != 200 {
			t.Fatalf("page %d = %d %v", page, code, v)
		}
		for _, r := range tfield(v, "runs").([]any) {
			// What is selected (app_path is not kept), and the fields every client's run model
			// requires, whatever is selected.
			var keys []string
			for k := range r.(map[string]any) {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			want := []string{"dotted_order", "end_time", "id", "inputs", "name", "outputs", "parent_run_id",
				"run_type", "session_id", "start_time", "status", "trace_id"}
			if !slices.Equal(keys, want) {
				t.Fatalf("select inputs,outputs gave the fields %v, want %v", keys, want)
			}
			paged = append(paged, tfield(r, "id").(string))
		}
		if cursor = tfield(v, "cursors", "next"); cursor == nil {
			break
		}
	}
	if !sameIDSet(paged, traceIDs(all, nil)) || len(paged) != len(all) {
		t.Errorf("paging gave %d runs, want the %d once each", len(paged), len(all))
	}
	newest, _ := s.query(t, map[string]any{"session": []string{alpha}, "is_root": true, "limit": 1})
	if newest[0] != roots[6]["id"] {
		t.Errorf("first run %s, want the newest root %s", newest[0], roots[6]["id"])
	}

	// Both orders, paged by cursor, over a project's index and over a trace's runs.
	rootIDs := traceIDs(roots, nil) // oldest first
	for _, c := range []struct {
		order string
		q     map[string]any
		want  []string
	}{
		{"asc", map[string]any{"session": []string{alpha}, "is_root": true}, rootIDs},
		{"desc", map[string]any{"session": []string{alpha}, "is_root": true}, reversed(rootIDs)},
		{"", map[string]any{"session": []string{alpha}, "is_root": true}, reversed(rootIDs)},
		{"asc", map[string]any{"trace": roots[2]["id"]}, traceIDs(all[6:9], nil)},
		{"desc", map[string]any{"trace": roots[2]["id"]}, reversed(traceIDs(all[6:9], nil))},
	} {
		var got []string
		q := maps.Clone(c.q)
		q["limit"] = 2
		if c.order != "" {
			q["order"] = c.order
		}
		for page := 0; page < 10; page++ {
			ids, next := s.query(t, q)
			got = append(got, ids...)
			if next == nil {
				break
			}
			q["cursor"] = next
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("order %q of %v: %v, want %v", c.order, c.q, got, c.want)
		}
	}

	for name, q := range map[string]map[string]any{
		"bad filter": {"filter": "eq(run_type"}, "bad session": {"session": []string{"x"}},
		"bad cursor": {"cursor": "!!"}, "bad limit": {"limit": 0}, "bad order": {"order": "up"},
	} {
		if code, v := s.json(t, "POST", "/runs/query", q); code != 422 {
			t.Errorf("%s: %d %v, want 422", name, code, v)
		}
	}
}

func TestStatsAndSessions(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	roots, _ := seedTraces(t, s, "gamma", 5, base)
	code, p := s.json(t, "POST", "/sessions?upsert=true", map[string]any{"name": "gamma", "description": "ignored: exists"})
	if code != 200 || tfield(p, "name") != "gamma" {
		t.Fatalf("upsert of an existing project = %d %v", code, p)
	}
	id := tfield(p, "id").(string)

	code, stats := s.json(t, "POST", "/runs/stats", map[string]any{"session": []string{id}, "is_root": true})
	if code != 200 {
		t.Fatalf("stats = %d %v", code, stats)
	}
	code, withStats := s.send(t, "GET", "/sessions/"+id+"?include_stats=true", nil, nil)
	if code != 200 {
		t.Fatalf("GET /sessions/{id} = %d %v", code, withStats)
	}
	// Tokens 100+10(i+1) for i < 5: 650; error roots 0 and 3; latencies 0.1 .. 0.5 s.
	want := map[string]any{"run_count": 5.0, "total_tokens": 650.0, "prompt_tokens": 500.0, "completion_tokens": 150.0,
		"error_rate": 0.4, "streaming_rate": 1.0, "latency_p50": 0.3, "latency_p99": 0.496, "first_token_p50": 0.15}
	for k, w := range want {
		if got := tfield(stats, k); got != w {
			t.Errorf("runs/stats %s = %v, want %v", k, got, w)
		}
	}
	for _, k := range []string{"run_count", "latency_p50", "latency_p99", "first_token_p50", "first_token_p99", "total_tokens",
		"prompt_tokens", "completion_tokens", "total_cost", "prompt_cost", "completion_cost", "error_rate", "streaming_rate", "last_run_start_time"} {
		a, _ := json.Marshal(tfield(stats, k))
		b, _ := json.Marshal(tfield(withStats, k))
		if string(a) != string(b) {
			t.Errorf("%s: session roll-up %s, runs/stats of its roots %s", k, b, a)
		}
	}
	if c, _ := tfield(stats, "total_cost").(float64); c <= 0 {
		t.Errorf("total_cost = %v, want a price for gpt-4o-mini", tfield(stats, "total_cost"))
	}
	_ = roots

	// Sessions: create, conflict, list, get, default project.
	code, created := s.json(t, "POST", "/sessions", map[string]any{"name": "delta", "description": "d", "extra": map[string]any{"k": 1}})
	if code != 200 || tfield(created, "description") != "d" || tfield(created, "tenant_id") == nil {
		t.Fatalf("create = %d %v", code, created)
	}
	if code, v := s.json(t, "POST", "/sessions", map[string]any{"name": "delta"}); code != 409 {
		t.Errorf("create again without upsert = %d %v, want 409", code, v)
	}
	if code, v := s.json(t, "POST", "/sessions", map[string]any{}); code != 422 {
		t.Errorf("create without a name = %d %v, want 422", code, v)
	}
	run := newTracedRun(nil, "lonely", "chain", time.Now())
	s.postMultipart(t, "", traceJSONPart("post."+run["id"].(string), run))
	got := s.run(t, run["id"].(string))
	code, def := s.send(t, "GET", "/sessions?name=default", nil, nil)
	if code != 200 || len(def.([]any)) != 1 || tfield(def.([]any)[0], "id") != got["session_id"] {
		t.Errorf("default project = %d %v, run's session %v", code, def, got["session_id"])
	}
	code, page := s.send(t, "GET", "/sessions?limit=2&offset=1", nil, nil)
	if code != 200 || len(page.([]any)) != 2 {
		t.Errorf("GET /sessions?limit=2&offset=1 = %d %v", code, page)
	}
	if code, v := s.send(t, "GET", "/sessions/00000000-0000-4000-8000-000000000000", nil, nil); code != 404 {
		t.Errorf("unknown session = %d %v", code, v)
	}
	if code, v := s.send(t, "GET", "/sessions?name=nothing", nil, nil); code != 200 || len(v.([]any)) != 0 {
		t.Errorf("unknown name = %d %v, want an empty list", code, v)
	}
}
