package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"

	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/httpapi"
)

// startDevStack starts a stack serving the examples with the development routes (--dev).
func startDevStack(t *testing.T) *stack {
	t.Helper()
	p := platformtest.Start(t, platform.Config{Graphs: graphs.Examples()}, nil)
	srv := httpapi.New(httpapi.Deps{Threads: p.Threads, Assistants: p.Assistants, Store: p.Store, Events: p.Log, Health: p.Health,
		Runner: p.Runner, Graphs: p.Graphs, Runs: p.Runs, Truncate: p.Truncate})
	ts := serve(t, srv.Handler())
	return &stack{URL: ts.URL, P: p}
}

func TestTruncateIsServedOnlyInDevelopment(t *testing.T) {
	s := startStack(t)
	if code, _, _ := s.call(t, "POST", "/internal/truncate", `{"threads":true}`); code != 404 {
		t.Fatalf("without --dev: %d, want 404", code)
	}
}

func TestTruncate(t *testing.T) {
	s := startDevStack(t)
	count := func(path string) int {
		t.Helper()
		_, _, out := s.call(t, "POST", path, `{}`)
		return int(out.(float64))
	}
	fill := func() (thread, run string) {
		t.Helper()
		s.call(t, "POST", "/assistants", `{"graph_id":"echo","name":"mine"}`)
		_, _, th := s.call(t, "POST", "/threads", `{}`)
		thread = field(th, "thread_id").(string)
		code, _, r := s.call(t, "POST", "/threads/"+thread+"/runs", `{"assistant_id":"delay","input":{"messages":["x"],"delay":60000}}`)
		if code != 200 {
			t.Fatalf("run: %d %v", code, r)
		}
		if code, _, out := s.call(t, "PUT", "/store/items", `{"namespace":["a"],"key":"k","value":{"v":1}}`); code != 204 {
			t.Fatalf("store put: %d %v", code, out)
		}
		return thread, field(r, "run_id").(string)
	}
	system := count("/assistants/count")

	code, _, out := s.call(t, "POST", "/internal/truncate", `{"runs":"maybe","thread":true}`)
	if code != 422 || !strings.Contains(fmt.Sprint(out), "bool_parsing") || !strings.Contains(fmt.Sprint(out), "extra_forbidden") {
		t.Fatalf("bad flags: %d %v", code, out)
	}

	// The store alone: the rest stays.
	thread, run := fill()
	if code, _, out := s.call(t, "POST", "/internal/truncate", `{"store":true}`); code != 200 || fmt.Sprint(out) != "map[ok:true]" {
		t.Fatalf("truncate store: %d %v", code, out)
	}
	if code, _, item := s.call(t, "GET", "/store/items?namespace=a&key=k", ""); code != 200 || item != nil {
		t.Errorf("store item after truncating the store: %d %v", code, item)
	}
	if code, _, _ := s.call(t, "GET", "/threads/"+thread, ""); code != 200 {
		t.Errorf("thread after truncating the store: %d", code)
	}

	// Everything, as the LangGraph test suites' helper sends it: the running run is stopped first.
	if code, _, out := s.call(t, "POST", "/internal/truncate", `{"runs":true,"threads":true,"assistants":true,"checkpoint":true,"store":true}`); code != 200 {
		t.Fatalf("truncate all: %d %v", code, out)
	}
	if n := count("/threads/count"); n != 0 {
		t.Errorf("%d threads left", n)
	}
	if code, _, _ := s.call(t, "GET", "/threads/"+thread+"/runs/"+run, ""); code != 404 {
		t.Errorf("run after the truncation: %d", code)
	}
	if n := count("/assistants/count"); n != system {
		t.Errorf("%d assistants left, want the %d system ones", n, system)
	}
	// The runtime goes on: new threads and runs, on the same log.
	_, _, th := s.call(t, "POST", "/threads", `{}`)
	id := field(th, "thread_id").(string)
	if code, _, out := s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"echo","input":{"messages":["again"]}}`); code != 200 {
		t.Fatalf("run after the truncation: %d %v", code, out)
	}
	if code, _, out := s.call(t, "POST", "/threads/"+thread+"/runs/wait", `{"assistant_id":"echo","input":{"messages":["x"]},"if_not_exists":"create"}`); code != 200 {
		t.Fatalf("a truncated thread's id again: %d %v", code, out)
	}
	if err := s.P.Runtime.Halted(); err != nil {
		t.Errorf("the projection halted: %v", err)
	}
}

// adminToken is tokenRules with one more user, root, who has the admin permission.
type adminToken struct{ tokenRules }

func (a adminToken) Authenticate(r *http.Request) (engine.User, error) {
	u, err := a.tokenRules.Authenticate(r)
	if u.Identity == "root" {
		u.Permissions = []string{engine.AdminPermission}
	}
	return u, err
}

// TestTruncateNeedsAdminUnderAuth: with the runtime authenticated, /internal/truncate empties
// every user's data, so only an admin may call it, whatever the rules say of threads.
func TestTruncateNeedsAdminUnderAuth(t *testing.T) {
	p := platformtest.Start(t, platform.Config{Graphs: graphs.Examples()}, nil)
	srv := httpapi.New(httpapi.Deps{Threads: p.Threads, Assistants: p.Assistants, Store: p.Store, Events: p.Log, Health: p.Health,
		Runner: p.Runner, Graphs: p.Graphs, Runs: p.Runs, Truncate: p.Truncate, Auth: adminToken{}})
	s := &authzStack{URL: serve(t, srv.Handler()).URL, P: p}
	s.must(t, 200, "alice", "POST", "/threads", `{}`)
	if code, _, raw := s.as(t, "alice", "POST", "/internal/truncate", `{"threads":true}`); code != 403 || !strings.Contains(string(raw), "admin permission") {
		t.Errorf("alice's truncate: %d %s, want 403 naming the admin permission", code, raw)
	}
	if got := s.must(t, 200, "alice", "POST", "/threads/count", `{}`); got != float64(1) {
		t.Errorf("alice's threads after her refused truncate: %v, want 1", got)
	}
	s.must(t, 200, "root", "POST", "/internal/truncate", `{"threads":true}`)
	if got := s.must(t, 200, "alice", "POST", "/threads/count", `{}`); got != float64(0) {
		t.Errorf("alice's threads after root's truncate: %v, want 0", got)
	}
}
