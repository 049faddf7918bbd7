package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/assistants"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/owners"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/httpapi"
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
	case req.User.Identity == "carol" && req.Action == engine.ActionCreate:
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
		Outputs: p.Streams, Auth: tokenRules{}})
	// Not the contract-checking server: the document does not list yet the rules' own answers
	// (their 403, the 500 of a bad filter) nor the 404 of a thread they hide on every route.
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return &authzStack{URL: ts.URL, P: p}
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
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
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
