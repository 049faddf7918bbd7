package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/assistants"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/owners"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/a2a"
	"github.com/jetgraph/jetgraph/httpapi/httpapitest"
)

// tokenRules authenticates "Bearer <name>" as user name and decides with owners.Rules, but for
// carol, whom a rule forbids to create, and broken, whose rule returns an invalid filter: a Go
// program's auth handler (engine.AuthHandler) as httpapi takes it.
type tokenRules struct{}

func (tokenRules) Authenticate(r *http.Request) (engine.User, error) {
	name, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || name == "" {
		return engine.User{}, engine.E(engine.Unauthorized, "Missing token")
	}
	return engine.User{Identity: name}, nil
}

func (tokenRules) Methods() []string { return []string{"api-key"} }

func (tokenRules) Authorize(ctx context.Context, req *engine.AuthRequest) (engine.Filter, error) {
	switch {
	case req.User.Identity == "carol" && (req.Action == engine.ActionCreate || req.Action == engine.ActionCreateRun):
		return engine.Filter{}, engine.E(engine.Forbidden, "carol may not create")
	case req.User.Identity == "broken":
		return engine.ParseFilter(map[string]any{"$or": "not a list"})
	}
	return owners.Rules{}.Authorize(ctx, req)
}

// authzStack is a whole runtime over HTTP whose users are told apart by tokenRules.
type authzStack struct {
	URL string
	P   *platform.Platform
}

func startAuthzStack(t *testing.T) *authzStack {
	t.Helper()
	p := platformtest.Start(t, platform.Config{Graphs: graphs.Examples()}, nil)
	srv := httpapi.New(httpapi.Deps{Threads: p.Threads, Assistants: p.Assistants, Store: p.Store, Events: p.Log,
		Health: p.Health, Runner: p.Runner, Graphs: p.Graphs, Runs: p.Runs, Streams: httpapi.StreamsOf(p.Streams),
		Outputs: p.Streams, Auth: tokenRules{},
		A2A: a2a.New(a2a.Deps{Assistants: p.Assistants, Runs: p.Runs, States: p.Runner, Threads: p.Threads, Logger: slog.New(slog.DiscardHandler)})})
	ts := httpapitest.NewServer(t, withRulesAnswers(t, httpapi.OpenAPI()), srv.Handler())
	return &authzStack{URL: ts.URL, P: p}
}

// authzClient bounds each request: a stream opened where the rules should refuse it fails the
// test instead of hanging it.
var authzClient = &http.Client{Timeout: 20 * time.Second}

// withRulesAnswers is doc with what the user's rules add to every operation of a server that has
// them: their refusal (403 with their message), a record they hide (404, as a missing one) and
// a rule that failed or returned an invalid filter (500 naming it). The served document does
// not list them yet (TODO of issue 27's docs part); the rest of each exchange is checked.
func withRulesAnswers(t *testing.T, doc []byte) []byte {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	detail := map[string]any{"application/json": map[string]any{"schema": map[string]any{
		"type": "object", "required": []any{"detail"}, "properties": map[string]any{"detail": map[string]any{}}}}}
	paths, _ := d["paths"].(map[string]any)
	for _, ops := range paths {
		for method, o := range ops.(map[string]any) {
			op, ok := o.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			responses, _ := op["responses"].(map[string]any)
			for _, code := range []string{"403", "404", "500"} {
				if _, has := responses[code]; !has && responses != nil {
					responses[code] = map[string]any{"description": "the user's rules' answer", "content": detail}
				}
			}
		}
	}
	out, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// as sends body ("" for none) as user and returns the status, the headers and the raw body.
func (s *authzStack) as(t *testing.T, user, method, path, body string) (int, http.Header, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+user)
	if path == "/mcp" {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := authzClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil { // a stream the rules should have refused, cut by the client's timeout
		t.Errorf("%s %s %s: %v", user, method, path, err)
	}
	return resp.StatusCode, resp.Header, raw
}

// must is as, failing the test unless the status is want; it returns the decoded body.
func (s *authzStack) must(t *testing.T, want int, user, method, path, body string) any {
	t.Helper()
	code, _, raw := s.as(t, user, method, path, body)
	if code != want {
		t.Fatalf("%s %s %s: %d, want %d: %s", user, method, path, code, want, raw)
	}
	var v any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &v)
	}
	return v
}

// TestThreadsAuthz: alice's thread and run are missing for bob on every thread and run route,
// and absent from his searches and counts; what a user creates is theirs; a rule's refusal and a
// rule's bad filter are answered as such.
func TestThreadsAuthz(t *testing.T) {
	s := startAuthzStack(t)
	th := s.must(t, 200, "alice", "POST", "/threads", `{"metadata":{"k":"v"}}`)
	if field(th, "metadata", "owner") != "alice" || field(th, "metadata", "k") != "v" {
		t.Fatalf("the created thread carries the metadata the rules left: %v", th)
	}
	tid := field(th, "thread_id").(string)
	run := s.must(t, 200, "alice", "POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"echo","input":{"messages":"hi"}}`)
	if run == nil {
		t.Fatal("alice's run on a system assistant")
	}
	runs := s.must(t, 200, "alice", "GET", "/threads/"+tid+"/runs", "").([]any)
	if len(runs) != 1 || field(runs[0], "metadata", "owner") != "alice" {
		t.Fatalf("alice's runs: %v", runs)
	}
	rid := field(runs[0], "run_id").(string)
	state := s.must(t, 200, "alice", "GET", "/threads/"+tid+"/state", "")
	cp, _ := field(state, "checkpoint", "checkpoint_id").(string)
	if cp == "" {
		t.Fatalf("alice's state: %v", state)
	}

	threadGone := "Thread with ID " + tid + " not found"
	runGone := "Run not found"
	missing := []struct {
		method, path, body, detail string
	}{
		{"GET", "/threads/" + tid, "", threadGone},
		{"PATCH", "/threads/" + tid, `{"metadata":{"x":1}}`, threadGone},
		{"PATCH", "/threads/" + tid, `{"ttl":5}`, threadGone},
		{"DELETE", "/threads/" + tid, "", threadGone},
		{"GET", "/threads/" + tid + "/state", "", threadGone},
		{"GET", "/threads/" + tid + "/state/" + cp, "", threadGone},
		{"POST", "/threads/" + tid + "/state/checkpoint", `{"checkpoint":{"checkpoint_id":"` + cp + `"}}`, threadGone},
		{"POST", "/threads/" + tid + "/state", `{"values":{"messages":"x"}}`, threadGone},
		{"PATCH", "/threads/" + tid + "/state", `{"metadata":{"x":1}}`, threadGone},
		{"GET", "/threads/" + tid + "/history", "", threadGone},
		{"POST", "/threads/" + tid + "/history", `{}`, threadGone},
		{"POST", "/threads/" + tid + "/copy", "", threadGone},
		{"POST", "/threads/" + tid + "/fork", `{"checkpoint_id":"` + cp + `"}`, threadGone},
		{"GET", "/threads/" + tid + "/stream", "", threadGone},
		{"POST", "/threads/" + tid + "/stream/events", `{"channels":["values"]}`, threadGone},
		{"GET", "/threads/" + tid + "/stream/events", "", threadGone}, // the WebSocket, refused before the upgrade
		{"GET", "/threads/" + tid + "/events", "", "No events of thread " + tid},
		{"GET", "/events/thread/" + tid, "", "No events of thread " + tid},
		{"POST", "/threads/" + tid + "/runs", `{"assistant_id":"echo"}`, threadGone},
		{"POST", "/threads/" + tid + "/runs/wait", `{"assistant_id":"echo"}`, threadGone},
		// (a resume's check of the thread's status tells nothing of a thread the user may not see)
		{"POST", "/threads/" + tid + "/runs", `{"assistant_id":"echo","command":{"resume":"x"}}`, threadGone},
		{"POST", "/threads/" + tid + "/runs", `{"assistant_id":"echo","if_not_exists":"create"}`, threadGone},
		{"POST", "/threads/" + tid + "/runs/stream", `{"assistant_id":"echo"}`, threadGone},
		{"GET", "/threads/" + tid + "/runs", "", threadGone},
		{"GET", "/threads/" + tid + "/runs/" + rid, "", runGone},
		{"GET", "/runs/" + rid, "", runGone},
		{"GET", "/threads/" + tid + "/runs/" + rid + "/join", "", runGone},
		{"GET", "/threads/" + tid + "/runs/" + rid + "/stream", "", runGone},
		{"GET", "/runs/" + rid + "/stream", "", runGone},
		{"POST", "/threads/" + tid + "/runs/" + rid + "/cancel", "", runGone},
		{"DELETE", "/threads/" + tid + "/runs/" + rid, "", runGone},
		{"POST", "/runs/cancel", `{"run_ids":["` + rid + `"]}`, runGone},
		{"POST", "/runs/cancel", `{"thread_id":"` + tid + `","run_ids":["` + rid + `"]}`, runGone},
		{"POST", "/threads/prune", `{"thread_ids":["` + tid + `"]}`, "At least one thread not found or not authorized"},
	}
	for _, m := range missing {
		t.Run("bob "+m.method+" "+m.path, func(t *testing.T) {
			code, _, raw := s.as(t, "bob", m.method, m.path, m.body)
			var body struct{ Detail any }
			_ = json.Unmarshal(raw, &body)
			if code != 404 || body.Detail != m.detail {
				t.Errorf("%d %s, want 404 %q", code, raw, m.detail)
			}
		})
	}
	t.Run("bob's if_exists on alice's thread", func(t *testing.T) {
		for _, ifExists := range []string{"raise", "do_nothing"} {
			code, _, raw := s.as(t, "bob", "POST", "/threads", `{"thread_id":"`+tid+`","if_exists":"`+ifExists+`"}`)
			if code != 409 || strings.Contains(string(raw), "alice") {
				t.Errorf("%s: %d %s, want 409 telling nothing of it", ifExists, code, raw)
			}
		}
	})
	t.Run("bob's commands on alice's thread", func(t *testing.T) {
		for _, cmd := range []string{`{"id":1,"method":"state.get","params":{}}`, `{"id":2,"method":"run.start","params":{"assistant_id":"echo"}}`} {
			code, _, raw := s.as(t, "bob", "POST", "/threads/"+tid+"/commands", cmd)
			if code != 200 || !strings.Contains(string(raw), threadGone) || strings.Contains(string(raw), "echo: hi") {
				t.Errorf("%s: %d %s, want the thread missing", cmd, code, raw)
			}
		}
	})
	// Nothing of bob's requests changed alice's thread.
	if got := s.must(t, 200, "alice", "GET", "/threads/"+tid, ""); field(got, "metadata", "x") != nil || field(got, "status") != "idle" {
		t.Fatalf("alice's thread after bob: %v", got)
	}
	if got := s.must(t, 200, "alice", "GET", "/threads/"+tid+"/runs", "").([]any); len(got) != 1 {
		t.Fatalf("alice's runs after bob: %v", got)
	}

	t.Run("searches and counts", func(t *testing.T) {
		for range 2 {
			s.must(t, 200, "alice", "POST", "/threads", `{"metadata":{"k":"v"}}`)
		}
		for range 2 {
			s.must(t, 200, "bob", "POST", "/threads", `{"metadata":{"k":"v"}}`)
		}
		for _, c := range []struct {
			user string
			want int
		}{{"alice", 3}, {"bob", 2}, {"dave", 0}} {
			if n := s.must(t, 200, c.user, "POST", "/threads/count", `{"metadata":{"k":"v"}}`); n != float64(c.want) {
				t.Errorf("%s counts %v, want %d", c.user, n, c.want)
			}
			code, h, raw := s.as(t, c.user, "POST", "/threads/search", `{"limit":1,"offset":1}`)
			var page []map[string]any
			_ = json.Unmarshal(raw, &page)
			wantLen := min(1, max(c.want-1, 0))
			if code != 200 || len(page) != wantLen || h.Get("X-Pagination-Total") != strconv.Itoa(c.want) {
				t.Errorf("%s's second page: %d %d threads, total %s; want %d of %d", c.user, code, len(page), h.Get("X-Pagination-Total"), wantLen, c.want)
			}
			for _, th := range page {
				if field(th, "metadata", "owner") != c.user {
					t.Errorf("%s's search shows %v", c.user, th)
				}
			}
		}
	})

	t.Run("copy", func(t *testing.T) {
		cp := s.must(t, 200, "alice", "POST", "/threads/"+tid+"/copy", "")
		if field(cp, "metadata", "owner") != "alice" || field(cp, "metadata", "k") != "v" {
			t.Fatalf("alice's copy: %v", cp)
		}
		// carol may read her own thread but not create one: no copy.
		mine, err := s.P.Threads.Create(context.Background(), threadsCreate(map[string]any{"owner": "carol"}))
		if err != nil {
			t.Fatal(err)
		}
		s.must(t, 200, "carol", "GET", "/threads/"+mine.ThreadID, "")
		code, _, raw := s.as(t, "carol", "POST", "/threads/"+mine.ThreadID+"/copy", "")
		if code != 403 || !strings.Contains(string(raw), "carol may not create") {
			t.Fatalf("carol's copy: %d %s, want the rule's 403", code, raw)
		}
		if n := s.must(t, 200, "carol", "POST", "/threads/count", `{}`); n != 1.0 {
			t.Fatalf("carol's refused copy made a thread: %v", n)
		}
	})

	t.Run("assistants", func(t *testing.T) {
		a, err := s.P.Assistants.Create(context.Background(), assistants.Create{GraphID: "echo", Metadata: map[string]any{"owner": "alice"}})
		if err != nil {
			t.Fatal(err)
		}
		bobs := field(s.must(t, 200, "bob", "POST", "/threads", `{}`), "thread_id").(string)
		code, _, raw := s.as(t, "bob", "POST", "/threads/"+bobs+"/runs", `{"assistant_id":"`+a.AssistantID+`"}`)
		if code != 404 || !strings.Contains(string(raw), `No assistant found for \"`+a.AssistantID+`\"`) {
			t.Errorf("bob's run of alice's assistant: %d %s, want 404", code, raw)
		}
		s.must(t, 200, "alice", "POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"`+a.AssistantID+`","input":{"messages":"again"}}`)
		out := s.must(t, 200, "bob", "POST", "/threads/"+bobs+"/runs/wait", `{"assistant_id":"echo","input":{"messages":"yo"}}`)
		if !strings.Contains(string(mustJSON(out)), "echo: yo") {
			t.Errorf("bob's run of the system assistant: %v", out)
		}
	})

	t.Run("stateless and if_not_exists runs are the user's", func(t *testing.T) {
		out := s.must(t, 200, "bob", "POST", "/runs/wait", `{"assistant_id":"echo","input":{"messages":"s"},"on_completion":"keep"}`)
		if !strings.Contains(string(mustJSON(out)), "echo: s") {
			t.Fatalf("bob's stateless run: %v", out)
		}
		nt := "6b1f3c1e-9a57-4d0c-9f5e-0d6f7c1d2e3f"
		r := s.must(t, 200, "bob", "POST", "/threads/"+nt+"/runs", `{"assistant_id":"echo","if_not_exists":"create","input":{"messages":"n"}}`)
		got := s.must(t, 200, "bob", "GET", "/threads/"+nt, "")
		if field(got, "metadata", "owner") != "bob" || field(r, "metadata", "owner") != "bob" {
			t.Fatalf("the thread a run created: %v (run %v)", got, r)
		}
		s.must(t, 404, "alice", "GET", "/threads/"+nt, "")
		s.must(t, 200, "bob", "GET", "/threads/"+nt+"/runs/"+field(r, "run_id").(string)+"/join", "")
	})

	t.Run("bob's bulk cancel leaves alice's runs", func(t *testing.T) {
		later := s.must(t, 200, "alice", "POST", "/threads/"+tid+"/runs", `{"assistant_id":"echo","after_seconds":600}`)
		lid := field(later, "run_id").(string)
		s.must(t, 204, "bob", "POST", "/runs/cancel", `{"status":"all"}`)
		if got := s.must(t, 200, "alice", "GET", "/threads/"+tid+"/runs/"+lid, ""); field(got, "status") != "pending" {
			t.Fatalf("alice's run after bob cancelled all of his: %v", got)
		}
		s.must(t, 204, "alice", "POST", "/runs/cancel", `{"status":"all"}`)
		eventually(t, "alice's bulk cancel reaches her run", func() bool {
			got := s.must(t, 200, "alice", "GET", "/threads/"+tid+"/runs/"+lid, "")
			return field(got, "status") != "pending"
		})
	})

	t.Run("a rule's refusal and a rule's bad filter", func(t *testing.T) {
		code, _, raw := s.as(t, "carol", "POST", "/threads", `{}`)
		if code != 403 || !strings.Contains(string(raw), "carol may not create") {
			t.Errorf("carol's create: %d %s, want 403 with the rule's message", code, raw)
		}
		for _, path := range []string{"/threads/" + tid, "/threads/" + tid + "/runs/" + rid} {
			code, _, raw = s.as(t, "broken", "GET", path, "")
			if code != 500 || !strings.Contains(string(raw), "invalid filter") || strings.Contains(string(raw), "alice") {
				t.Errorf("broken's %s: %d %s, want a 500 naming the filter", path, code, raw)
			}
		}
		code, _, raw = s.as(t, "broken", "POST", "/threads/search", `{}`)
		if code != 500 || !strings.Contains(string(raw), "$or must be a list") {
			t.Errorf("broken's search: %d %s", code, raw)
		}
	})

	t.Run("alice deletes her own", func(t *testing.T) {
		s.must(t, 204, "alice", "DELETE", "/threads/"+tid+"/runs/"+rid, "")
		s.must(t, 204, "alice", "DELETE", "/threads/"+tid, "")
		s.must(t, 404, "alice", "GET", "/threads/"+tid, "")
	})
}

// threadsCreate is a creation of a thread with metadata, made through the engine (no rules).
func threadsCreate(md map[string]any) threads.Create { return threads.Create{Metadata: md} }

// TestA2AAuthz: an A2A task is a run and its context a thread: bob neither reads, lists nor
// continues alice's.
func TestA2AAuthz(t *testing.T) {
	s := startAuthzStack(t)
	// The graph's system assistant, which both may use: what keeps bob out is the rules on
	// alice's threads and runs (an assistant of alice's is a 404 to bob before A2A reads a task).
	system, ok := s.P.Assistants.ID("echo")
	if !ok {
		t.Fatal("no system assistant for echo")
	}
	path := "/a2a/" + system
	send := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"secret"}]}}}`
	task := s.must(t, 200, "alice", "POST", path, send)
	taskID, _ := field(task, "result", "id").(string)
	contextID, _ := field(task, "result", "contextId").(string)
	if taskID == "" || contextID == "" || !strings.Contains(string(mustJSON(task)), "echo: secret") {
		t.Fatalf("alice's task: %v", task)
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"` + taskID + `"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tasks/list","params":{"contextId":"` + contextID + `"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tasks/list","params":{}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tasks/cancel","params":{"id":"` + taskID + `"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"message/send","params":{"message":{"kind":"message","messageId":"m2","role":"user","contextId":"` + contextID + `","parts":[{"kind":"text","text":"more"}]}}}`,
	} {
		_, _, raw := s.as(t, "bob", "POST", path, body)
		leak := strings.Contains(string(raw), "secret") || strings.Contains(string(raw), "echo: more") ||
			!strings.Contains(body, contextID) && strings.Contains(string(raw), contextID)
		if leak || !strings.Contains(string(raw), `"error"`) && !strings.Contains(string(raw), `"tasks":[]`) {
			t.Errorf("bob's %s: %s", body, raw)
		}
	}
	if got := s.must(t, 200, "alice", "GET", "/threads/"+contextID+"/runs", "").([]any); len(got) != 1 {
		t.Fatalf("alice's context after bob: %d runs", len(got))
	}
}

// TestMCPAuthz: a tool call runs its assistant as the caller, under the caller's rules.
func TestMCPAuthz(t *testing.T) {
	s := startAuthzStack(t)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"messages":[{"role":"user","content":"via mcp"}]}}}`
	code, _, raw := s.as(t, "bob", "POST", "/mcp", call)
	if code != 200 || !strings.Contains(string(raw), "echo: via mcp") {
		t.Fatalf("bob's tool call: %d %s", code, raw)
	}
	code, _, raw = s.as(t, "carol", "POST", "/mcp", call)
	if strings.Contains(string(raw), "echo: via mcp") || !strings.Contains(string(raw), "carol may not create") {
		t.Fatalf("carol's tool call, whose runs the rules refuse: %d %s", code, raw)
	}
}
