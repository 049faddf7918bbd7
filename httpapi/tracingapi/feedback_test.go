package tracingapi_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/tracing"
)

// waitFor polls f until it returns true (or 15 s pass): ingestion answers before the
// projection applies what it appended.
func waitFor(t *testing.T, what string, f func() (bool, any)) {
	t.Helper()
	var last any
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		var ok bool
		if ok, last = f(); ok {
			return
		}
	}
	t.Fatalf("%s never happened; last: %v", what, last)
}

// postTrace ingests a root run with a child into project and returns the root and the child.
func (s *traceStack) postTrace(t *testing.T, project string) (root, child map[string]any) {
	t.Helper()
	root, child = newTrace(project)
	s.postRuns(t, root, child)
	return root, child
}

// newTrace is a root run and its child in project, as postTrace posts them.
func newTrace(project string) (root, child map[string]any) {
	start := time.Now().Add(-time.Minute)
	root = newTracedRun(nil, "root", "chain", start)
	child = newTracedRun(root, "child", "llm", start.Add(time.Millisecond))
	root["session_name"], child["session_name"] = project, project
	return root, child
}

// postRuns posts runs in one multipart request.
func (s *traceStack) postRuns(t *testing.T, runs ...map[string]any) {
	t.Helper()
	var parts []tracePart
	for _, r := range runs {
		parts = append(parts, traceJSONPart("post."+r["id"].(string), r))
	}
	code, v := s.postMultipart(t, "", parts...)
	if code != 202 {
		t.Fatalf("multipart = %d %v", code, v)
	}
}

// feedbackIDs lists the ids GET /feedback answers for query.
func (s *traceStack) feedbackIDs(t *testing.T, query string) []string {
	t.Helper()
	code, v := s.send(t, "GET", "/feedback?"+query, nil, nil)
	if code != 200 {
		t.Fatalf("GET /feedback?%s = %d %v", query, code, v)
	}
	var ids []string
	for _, f := range v.([]any) {
		ids = append(ids, tfield(f, "id").(string))
	}
	slices.Sort(ids)
	return ids
}

// locs returns the locations of an answer's problems ("errors" of a 202, "detail" of a 422),
// their parts joined by dots.
func locs(v any) []string {
	list, _ := tfield(v, "errors").([]any)
	if d, ok := tfield(v, "detail").([]any); ok {
		list = d
	}
	var out []string
	for _, p := range list {
		var parts []string
		for _, x := range tfield(p, "loc").([]any) {
			parts = append(parts, fmt.Sprint(x))
		}
		out = append(out, strings.Join(parts, "."))
	}
	return out
}

// hasLoc reports whether an answer has a problem at each of the locations want.
func hasLoc(v any, want ...string) bool {
	got := locs(v)
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

func sortedIDs(ids ...string) []string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return ids
}

func TestFeedbackLifecycle(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	start := time.Now().Add(-time.Minute)
	root := newTracedRun(nil, "rated", "chain", start)
	root["session_name"] = "feedback"
	rid := root["id"].(string)

	// Feedback on a run that has not arrived yet is accepted (the clients trace in the background).
	code, early := s.json(t, "POST", "/feedback", map[string]any{"run_id": rid, "key": "helpful", "score": 1,
		"feedback_source": map[string]any{"type": "api", "metadata": map[string]any{}}, "comment": "good"})
	if code != 200 || tfield(early, "key") != "helpful" || tfield(early, "run_id") != rid || tfield(early, "created_at") == nil {
		t.Fatalf("POST /feedback before its run = %d %v", code, early)
	}
	first := tfield(early, "id").(string)
	if code, v := s.send(t, "GET", "/feedback/"+first, nil, nil); code != 200 || tfield(v, "comment") != "good" || tfield(v, "score") != 1.0 {
		t.Fatalf("GET /feedback/{id} = %d %v", code, v)
	}

	// The run arrives, with feedback in the same request as a multipart part.
	second := uuid.NewString()
	code, v := s.postMultipart(t, "", traceJSONPart("post."+rid, root),
		traceJSONPart("feedback."+second, map[string]any{"id": second, "run_id": rid, "trace_id": rid, "key": "helpful", "score": 0}))
	if code != 202 || tfield(v, "errors") != nil {
		t.Fatalf("multipart = %d %v", code, v)
	}
	run := s.runWhen(t, rid, func(r map[string]any) bool { return tfield(r, "feedback_stats", "helpful", "n") == 2.0 })
	if avg := tfield(run, "feedback_stats", "helpful", "avg"); avg != 0.5 {
		t.Errorf("run feedback_stats.helpful.avg = %v, want 0.5", avg)
	}

	// A categorical feedback from a model, and feedback on the project itself.
	_, third := s.json(t, "POST", "/feedback", map[string]any{"run_id": rid, "key": "tone", "value": "warm",
		"feedback_source": map[string]any{"type": "model"}})
	pid := tfield(run, "session_id").(string)
	_, fourth := s.json(t, "POST", "/feedback", map[string]any{"session_id": pid, "key": "overall", "score": true})
	thirdID, fourthID := tfield(third, "id").(string), tfield(fourth, "id").(string)

	code, p := s.send(t, "GET", "/sessions/"+pid+"?include_stats=true", nil, nil)
	if code != 200 {
		t.Fatalf("GET /sessions/{id} = %d %v", code, p)
	}
	checks := map[string][2]any{
		"helpful.n":     {tfield(p, "feedback_stats", "helpful", "n"), 2.0},
		"helpful.avg":   {tfield(p, "feedback_stats", "helpful", "avg"), 0.5},
		"helpful.min":   {tfield(p, "feedback_stats", "helpful", "min"), 0.0},
		"helpful.max":   {tfield(p, "feedback_stats", "helpful", "max"), 1.0},
		"helpful.stdev": {tfield(p, "feedback_stats", "helpful", "stdev"), 0.5},
		"tone.values":   {tfield(p, "feedback_stats", "tone", "values", "warm"), 1.0},
		"tone.avg":      {tfield(p, "feedback_stats", "tone", "avg"), nil},
		"overall.avg":   {tfield(p, "feedback_stats", "overall", "avg"), 1.0},
	}
	for what, c := range checks {
		if c[0] != c[1] {
			t.Errorf("project feedback_stats.%s = %v, want %v", what, c[0], c[1])
		}
	}

	// Lists, by run, key, source, project; paged.
	lists := map[string][]string{
		"run=" + rid:                        sortedIDs(first, second, thirdID),
		"run=" + rid + "&key=helpful":       sortedIDs(first, second),
		"key=helpful&key=overall":           sortedIDs(first, second, fourthID),
		"run=" + rid + "&source=model":      {thirdID},
		"session=" + pid:                    sortedIDs(first, second, thirdID, fourthID),
		"key=nothing":                       nil,
		"run=" + uuid.NewString():           nil,
		"run=" + rid + "&limit=2&offset=2":  {fmt.Sprint(s.feedbackOrder(t, "run="+rid)[2])},
		"run=" + rid + "&limit=2":           sortedIDs(s.feedbackOrder(t, "run="+rid)[:2]...),
		"run=" + rid + "&offset=3&limit=10": nil,
	}
	for q, want := range lists {
		if got := s.feedbackIDs(t, q); !slices.Equal(got, want) {
			t.Errorf("GET /feedback?%s = %v, want %v", q, got, want)
		}
	}

	// Update: only the fields given change; the statistics follow.
	code, up := s.json(t, "PATCH", "/feedback/"+first, map[string]any{"score": 0, "comment": nil})
	if code != 200 || tfield(up, "score") != 0.0 || tfield(up, "comment") != nil || tfield(up, "key") != "helpful" ||
		tfield(up, "modified_at") == tfield(up, "created_at") {
		t.Fatalf("PATCH /feedback/{id} = %d %v", code, up)
	}
	if avg := tfield(s.run(t, rid), "feedback_stats", "helpful", "avg"); avg != 0.0 {
		t.Errorf("after the update, helpful.avg = %v, want 0", avg)
	}

	// Delete: gone from reads, lists and statistics.
	if code, v := s.send(t, "DELETE", "/feedback/"+first, nil, nil); code != 200 {
		t.Fatalf("DELETE /feedback/{id} = %d %v", code, v)
	}
	for _, m := range []string{"GET", "DELETE"} {
		if code, v := s.send(t, m, "/feedback/"+first, nil, nil); code != 404 {
			t.Errorf("%s of a deleted feedback = %d %v", m, code, v)
		}
	}
	if code, v := s.json(t, "PATCH", "/feedback/"+first, map[string]any{"score": 1}); code != 404 {
		t.Errorf("PATCH of a deleted feedback = %d %v", code, v)
	}
	if got := s.feedbackIDs(t, "run="+rid); !slices.Equal(got, sortedIDs(second, thirdID)) {
		t.Errorf("after the delete, GET /feedback?run = %v", got)
	}
	if n := tfield(s.run(t, rid), "feedback_stats", "helpful", "n"); n != 1.0 {
		t.Errorf("after the delete, helpful.n = %v, want 1", n)
	}

	// A second post of an id replaces it (a client's retry), keeping when it was created.
	code, again := s.json(t, "POST", "/feedback", map[string]any{"id": second, "run_id": rid, "key": "helpful", "score": 0.25})
	if code != 200 || tfield(again, "score") != 0.25 {
		t.Fatalf("POST of an existing id = %d %v", code, again)
	}
	if got := s.feedbackIDs(t, "run="+rid+"&key=helpful"); !slices.Equal(got, []string{second}) {
		t.Errorf("after a second post of an id, helpful feedback = %v", got)
	}
}

// feedbackOrder lists the ids GET /feedback answers for query, in its order.
func (s *traceStack) feedbackOrder(t *testing.T, query string) []string {
	t.Helper()
	_, v := s.send(t, "GET", "/feedback?"+query, nil, nil)
	var ids []string
	for _, f := range v.([]any) {
		ids = append(ids, tfield(f, "id").(string))
	}
	return ids
}

func TestFeedbackRefusedWithEveryProblem(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	run := uuid.NewString()
	cases := map[string]struct {
		body map[string]any
		locs []string
	}{
		"bad ids": {map[string]any{"run_id": "nope", "trace_id": 3, "key": "k", "session_id": "x"},
			[]string{"body.run_id", "body.session_id", "body.trace_id"}},
		"no key":             {map[string]any{"run_id": run}, []string{"body.key"}},
		"empty key":          {map[string]any{"run_id": run, "key": " "}, []string{"body.key"}},
		"long key":           {map[string]any{"run_id": run, "key": strings.Repeat("k", 257)}, []string{"body.key"}},
		"no run nor project": {map[string]any{"key": "k"}, []string{"body.run_id"}},
		"bad values": {map[string]any{"run_id": run, "key": "k", "score": "high", "comment": 3, "extra": []any{},
			"feedback_source": "api", "start_time": "yesterday", "error": "no"},
			[]string{"body.comment", "body.error", "body.extra", "body.feedback_source", "body.score", "body.start_time"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			code, v := s.json(t, "POST", "/feedback", c.body)
			if code != 422 {
				t.Fatalf("POST /feedback = %d %v", code, v)
			}
			for _, loc := range c.locs {
				if !hasLoc(v, loc) {
					t.Errorf("no problem at %s in %v", loc, v)
				}
			}
			if got := locs(v); !slices.Equal(got, c.locs) {
				t.Errorf("problems at %v, want %v", got, c.locs)
			}
		})
	}
	_, ok := s.json(t, "POST", "/feedback", map[string]any{"run_id": run, "key": "k"})
	id := tfield(ok, "id").(string)
	for _, c := range []struct{ method, path, loc string }{
		{"GET", "/feedback/nope", "path.feedback_id"},
		{"DELETE", "/feedback/nope", "path.feedback_id"},
		{"GET", "/feedback?run=nope", "query.run.0"},
		{"GET", "/feedback?limit=101", "query.limit"},
		{"GET", "/feedback?limit=0", "query.limit"},
	} {
		if code, v := s.send(t, c.method, c.path, nil, nil); code != 422 || !hasLoc(v, c.loc) {
			t.Errorf("%s %s = %d %v, want 422 at %s", c.method, c.path, code, v, c.loc)
		}
	}
	if code, v := s.json(t, "PATCH", "/feedback/"+id, map[string]any{"score": "x", "comment": false}); code != 422 ||
		!hasLoc(v, "body.score") || !hasLoc(v, "body.comment") {
		t.Errorf("PATCH with bad values = %d %v", code, v)
	}
	if code, v := s.json(t, "POST", "/feedback/"+uuid.NewString(), nil); code != 405 && code != 404 {
		t.Errorf("POST /feedback/{id} = %d %v", code, v)
	}

	// In multipart ingestion, a bad feedback part is refused and named; the rest is kept.
	root := newTracedRun(nil, "r", "chain", time.Now())
	bad, good := uuid.NewString(), uuid.NewString()
	code, v := s.postMultipart(t, "", traceJSONPart("post."+root["id"].(string), root),
		traceJSONPart("feedback."+bad, map[string]any{"run_id": root["id"], "trace_id": root["id"], "score": "x"}),
		traceJSONPart("feedback."+good, map[string]any{"run_id": root["id"], "trace_id": root["id"], "key": "fine"}))
	if code != 202 || !slices.Contains(locs(v), "body.feedback."+bad+".key") || !slices.Contains(locs(v), "body.feedback."+bad+".score") ||
		tfield(v, "accepted") != 2.0 {
		t.Fatalf("multipart with a bad feedback part = %d %v", code, v)
	}
	if code, _ := s.send(t, "GET", "/feedback/"+good, nil, nil); code != 200 {
		t.Errorf("the good feedback part = %d", code)
	}
	if code, _ := s.send(t, "GET", "/feedback/"+bad, nil, nil); code != 404 {
		t.Errorf("the bad feedback part = %d, want 404", code)
	}
}

func TestProjectUpdateAndDelete(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	root1, child1 := s.postTrace(t, "doomed")
	root2, _ := s.postTrace(t, "doomed")
	kept, _ := s.postTrace(t, "kept")
	c1 := s.run(t, child1["id"].(string))
	s.run(t, root2["id"].(string))
	keptRun := s.run(t, kept["id"].(string))
	pid, keptID := c1["session_id"].(string), keptRun["session_id"].(string)
	_, fb := s.json(t, "POST", "/feedback", map[string]any{"run_id": child1["id"], "trace_id": root1["id"], "key": "k", "score": 1})
	_, pfb := s.json(t, "POST", "/feedback", map[string]any{"session_id": pid, "key": "overall", "score": 1})
	_, keptFb := s.json(t, "POST", "/feedback", map[string]any{"run_id": kept["id"], "key": "k", "score": 1})

	// Update: every field the clients send, null meaning unchanged.
	end := time.Now().UTC().Truncate(time.Microsecond)
	code, p := s.json(t, "PATCH", "/sessions/"+pid, map[string]any{"name": "doomed-2", "description": "to go",
		"extra": map[string]any{"metadata": map[string]any{"v": 1}}, "end_time": end.Format(time.RFC3339Nano)})
	if code != 200 || tfield(p, "name") != "doomed-2" || tfield(p, "description") != "to go" ||
		tfield(p, "extra", "metadata", "v") != 1.0 || tfield(p, "id") != pid || tfield(p, "end_time") == nil {
		t.Fatalf("PATCH /sessions/{id} = %d %v", code, p)
	}
	if got, _ := time.Parse(time.RFC3339Nano, tfield(p, "end_time").(string)); !got.Equal(end) {
		t.Errorf("end_time = %v, want %v", tfield(p, "end_time"), end)
	}
	code, p = s.json(t, "PATCH", "/sessions/"+pid, map[string]any{"name": nil, "description": nil, "extra": nil, "end_time": nil})
	if code != 200 || tfield(p, "name") != "doomed-2" || tfield(p, "description") != "to go" {
		t.Fatalf("PATCH with nulls = %d %v", code, p)
	}
	_, byName := s.send(t, "GET", "/sessions?name=doomed-2", nil, nil)
	_, byOld := s.send(t, "GET", "/sessions?name=doomed", nil, nil)
	if len(byName.([]any)) != 1 || len(byOld.([]any)) != 0 {
		t.Fatalf("by name after the rename: new %v, old %v", byName, byOld)
	}
	for _, c := range []struct {
		path string
		body map[string]any
		code int
		loc  string
	}{
		{"/sessions/" + pid, map[string]any{"name": "kept"}, 409, ""},
		{"/sessions/" + uuid.NewString(), map[string]any{"name": "x"}, 404, ""},
		{"/sessions/" + pid, map[string]any{"name": ""}, 422, "body.name"},
		{"/sessions/" + pid, map[string]any{"end_time": "soon", "extra": 1}, 422, "body.end_time"},
		{"/sessions/nope", map[string]any{}, 422, "path.session_id"},
	} {
		if code, v := s.json(t, "PATCH", c.path, c.body); code != c.code || c.loc != "" && !hasLoc(v, c.loc) {
			t.Errorf("PATCH %s %v = %d %v, want %d %s", c.path, c.body, code, v, c.code, c.loc)
		}
	}
	// Runs traced under the old name now make a new project of that name.
	again, _ := s.postTrace(t, "doomed")
	if id := s.run(t, again["id"].(string))["session_id"]; id == pid {
		t.Errorf("a run named by the old name went to the renamed project")
	}

	// Delete: the project goes with its runs and their feedback; others stay.
	if code, v := s.send(t, "DELETE", "/sessions/"+pid, nil, nil); code != 204 {
		t.Fatalf("DELETE /sessions/{id} = %d %v", code, v)
	}
	gone := []string{"/sessions/" + pid, "/runs/" + root1["id"].(string), "/runs/" + child1["id"].(string), "/runs/" + root2["id"].(string),
		"/feedback/" + tfield(fb, "id").(string), "/feedback/" + tfield(pfb, "id").(string)}
	for _, path := range gone {
		if code, v := s.send(t, "GET", path, nil, nil); code != 404 {
			t.Errorf("GET %s after the delete = %d %v", path, code, v)
		}
	}
	for _, path := range []string{"/sessions/" + keptID, "/runs/" + kept["id"].(string), "/feedback/" + tfield(keptFb, "id").(string)} {
		if code, v := s.send(t, "GET", path, nil, nil); code != 200 {
			t.Errorf("GET %s after deleting another project = %d %v", path, code, v)
		}
	}
	if code, v := s.send(t, "DELETE", "/sessions/"+pid, nil, nil); code != 404 {
		t.Errorf("DELETE of a deleted project = %d %v", code, v)
	}
	if ids, _ := s.query(t, map[string]any{"session": []string{pid}}); len(ids) != 0 {
		t.Errorf("runs of the deleted project: %v", ids)
	}

	// Delete many, as DELETE /sessions?session_ids=...: all or none.
	other, _ := s.postTrace(t, "other")
	otherID := s.run(t, other["id"].(string))["session_id"].(string)
	q := url.Values{"session_ids": {keptID, uuid.NewString()}}
	if code, v := s.send(t, "DELETE", "/sessions?"+q.Encode(), nil, nil); code != 404 {
		t.Fatalf("DELETE /sessions with an unknown id = %d %v", code, v)
	}
	if code, _ := s.send(t, "GET", "/sessions/"+keptID, nil, nil); code != 200 {
		t.Fatalf("a refused delete deleted %s", keptID)
	}
	for _, c := range []struct{ query, loc string }{{"", "query.session_ids"}, {"session_ids=nope", "query.session_ids.0"}} {
		if code, v := s.send(t, "DELETE", "/sessions?"+c.query, nil, nil); code != 422 || !hasLoc(v, c.loc) {
			t.Errorf("DELETE /sessions?%s = %d %v", c.query, code, v)
		}
	}
	q = url.Values{"session_ids": {keptID + "," + otherID}}
	if code, v := s.send(t, "DELETE", "/sessions?"+q.Encode(), nil, nil); code != 204 {
		t.Fatalf("DELETE /sessions?session_ids = %d %v", code, v)
	}
	for _, id := range []string{keptID, otherID} {
		if code, _ := s.send(t, "GET", "/sessions/"+id, nil, nil); code != 404 {
			t.Errorf("project %s after the bulk delete = %d", id, code)
		}
	}
}

func TestPresignedFeedbackTokens(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{Service: tracing.Config{APIKeys: map[string]string{"ka": "acme", "kb": "bravo"}}})
	s.Key = "ka"
	root, _ := s.postTrace(t, "tokens")
	rid := root["id"].(string)
	s.run(t, rid)

	// One request, one token (the JS client, Python's create_presigned_feedback_token).
	fid := uuid.NewString()
	code, tok := s.json(t, "POST", "/feedback/tokens", map[string]any{"run_id": rid, "feedback_key": "thumbs", "id": fid,
		"expires_in": map[string]any{"days": 0, "hours": 3, "minutes": 0}, "feedback_config": map[string]any{"type": "continuous"}})
	if code != 200 || tfield(tok, "url") == nil || tfield(tok, "expires_at") == nil {
		t.Fatalf("POST /feedback/tokens = %d %v", code, tok)
	}
	u, err := url.Parse(tfield(tok, "url").(string))
	if err != nil || !strings.HasSuffix(s.URL+"/feedback/tokens/"+tfield(tok, "id").(string), u.Path) {
		t.Fatalf("token url %v", tfield(tok, "url"))
	}
	// Used without an API key: by GET with the query, then by POST with a body; the feedback
	// belongs to the token's tenant and, with an id in the token, is the same feedback each time.
	tokenPath := strings.TrimPrefix(u.Path, "/tracing")
	if code, v := s.send(t, "GET", tokenPath+"?score=1&comment=nice", nil, map[string]string{"X-Api-Key": ""}); code != 200 ||
		tfield(v, "id") != fid || tfield(v, "score") != 1.0 || tfield(v, "key") != "thumbs" || tfield(v, "feedback_source", "type") != "app" {
		t.Fatalf("GET token url = %d %v", code, v)
	}
	code, v := s.send(t, "POST", tokenPath, strings.NewReader(`{"score":0,"value":"down","comment":null,"correction":null,"metadata":{"page":"x"}}`),
		map[string]string{"X-Api-Key": "", "Content-Type": "application/json"})
	if code != 200 || tfield(v, "score") != 0.0 || tfield(v, "value") != "down" || tfield(v, "feedback_source", "metadata", "page") != "x" {
		t.Fatalf("POST token url = %d %v", code, v)
	}
	if got := s.feedbackIDs(t, "run="+rid); !slices.Equal(got, []string{fid}) {
		t.Errorf("feedback of the run = %v, want the token's %s", got, fid)
	}
	if code, _ := s.send(t, "GET", "/feedback/"+fid, nil, map[string]string{"X-Api-Key": "kb"}); code != 404 {
		t.Errorf("another tenant reads the token's feedback: %d", code)
	}

	// A list, a list (Python's create_presigned_feedback_tokens); without an id, new feedback each use.
	code, toks := s.json(t, "POST", "/feedback/tokens", []any{
		map[string]any{"run_id": rid, "feedback_key": "a", "expires_in": nil, "expires_at": time.Now().Add(time.Hour).Format(time.RFC3339)},
		map[string]any{"run_id": rid, "feedback_key": "b", "expires_in": map[string]any{"minutes": 5}, "expires_at": nil},
	})
	if code != 200 || len(toks.([]any)) != 2 {
		t.Fatalf("POST /feedback/tokens with a list = %d %v", code, toks)
	}
	bPath := "/feedback/tokens/" + tfield(toks.([]any)[1], "id").(string)
	for range 2 {
		if code, v := s.send(t, "GET", bPath+"?score=true", nil, nil); code != 200 || tfield(v, "score") != true {
			t.Fatalf("GET token b = %d %v", code, v)
		}
	}
	if got := s.feedbackIDs(t, "run="+rid+"&key=b"); len(got) != 2 {
		t.Errorf("two uses of a token without id made %d feedback", len(got))
	}

	// Refusals.
	for _, c := range []struct {
		body any
		loc  []string
	}{
		{map[string]any{"run_id": "x", "feedback_key": ""}, []string{"body.run_id", "body.feedback_key"}},
		{map[string]any{"run_id": rid, "feedback_key": "k", "expires_in": map[string]any{"hours": -1}}, []string{"body.expires_in"}},
		{map[string]any{"run_id": rid, "feedback_key": "k", "expires_at": "2001-01-01T00:00:00Z"}, []string{"body.expires_at"}},
		{[]any{map[string]any{"run_id": rid, "feedback_key": "k"}, 3}, []string{"body.1"}},
	} {
		if code, v := s.json(t, "POST", "/feedback/tokens", c.body); code != 422 || !hasLoc(v, c.loc...) {
			t.Errorf("POST /feedback/tokens %v = %d %v, want 422 at %v", c.body, code, v, c.loc)
		}
	}
	for path, want := range map[string]int{"/feedback/tokens/" + uuid.NewString(): 404, "/feedback/tokens/nope": 422, bPath + "?score=high": 422} {
		if code, v := s.send(t, "GET", path, nil, nil); code != want {
			t.Errorf("GET %s = %d %v, want %d", path, code, v, want)
		}
	}
	// Expired: refused (the token lasts a second; wait until it is over).
	_, short := s.json(t, "POST", "/feedback/tokens", map[string]any{"run_id": rid, "feedback_key": "late",
		"expires_at": time.Now().Add(time.Second).Format(time.RFC3339Nano)})
	waitFor(t, "the token to expire", func() (bool, any) {
		code, v := s.send(t, "GET", "/feedback/tokens/"+tfield(short, "id").(string)+"?score=1", nil, nil)
		return code == 404, v
	})
}
