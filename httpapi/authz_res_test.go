package httpapi_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/assistants"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/owners"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/httpapitest"
)

// tokenAuth is a Go program's auth handler as the tests use it: a bearer token names the user,
// owners.Rules decides what they may touch.
type tokenAuth struct {
	owners.Rules
	users map[string]string // token: identity
}

func (a tokenAuth) Authenticate(r *http.Request) (engine.User, error) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if id, known := a.users[token]; ok && known {
		return engine.User{Identity: id}, nil
	}
	return engine.User{}, engine.E(engine.Op("test.authenticate"), engine.Unauthorized, "Unknown or missing token")
}

func (tokenAuth) Methods() []string { return []string{"custom"} }

// ownersStack is a stack serving crons and the store whose every request is authenticated by a
// bearer token (alice's or bob's) and authorized by owners.Rules.
func ownersStack(t *testing.T) *stack {
	t.Helper()
	base := startStackWith(t, graphs.Examples())
	p := base.P
	d := httpapi.Deps{Threads: p.Threads, Assistants: p.Assistants, Store: p.Store, Events: p.Log, Health: p.Health,
		Runner: p.Runner, Graphs: p.Graphs, Runs: p.Runs, Crons: p.Crons,
		Auth: tokenAuth{users: map[string]string{"tok-alice": "alice", "tok-bob": "bob"}}}
	h := httpapi.New(d).Handler()
	// The exchanges are checked against the document this server serves: its guarded routes
	// answer 401 too.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/openapi.json", nil))
	return &stack{URL: httpapitest.NewServer(t, rec.Body.Bytes(), h).URL, P: p}
}

// as calls the stack as user ("" for no token) and fails the test unless the status is want.
func (s *stack) as(t *testing.T, user string, want int, method, path, body string) any {
	t.Helper()
	h := map[string]string{"Content-Type": "application/json"}
	if user != "" {
		h["Authorization"] = "Bearer tok-" + user
	}
	code, _, v := s.do(t, method, path, body, h)
	if code != want {
		t.Fatalf("%s %s %s as %q: %d %v, want %d", method, path, body, user, code, v, want)
	}
	return v
}

// TestOwnersResources: with owners.Rules, alice's assistants, crons and store items are hers:
// bob's every route answers 404 (or null, or an empty list) for them, never their content; his
// searches and counts hold only his own (and the system assistants, which everyone may read and
// run); what each creates carries their owner; the store is split by user.
func TestOwnersResources(t *testing.T) {
	s := ownersStack(t)
	s.as(t, "", 401, "POST", "/assistants/search", `{}`)
	s.as(t, "", 401, "PUT", "/store/items", `{"namespace":["notes"],"key":"k","value":{"v":1}}`)

	asst := s.as(t, "alice", 200, "POST", "/assistants", `{"graph_id":"echo","metadata":{"team":"a"}}`)
	if md := field(asst, "metadata"); !reflect.DeepEqual(md, map[string]any{"team": "a", "owner": "alice"}) {
		t.Fatalf("alice's assistant's metadata: %v", md)
	}
	a := field(asst, "assistant_id").(string)
	// Her thread (the threads' own rules are another part's: the owner is given here).
	th := field(s.as(t, "alice", 200, "POST", "/threads", `{"metadata":{"owner":"alice"}}`), "thread_id").(string)
	cron := s.as(t, "alice", 200, "POST", "/threads/"+th+"/runs/crons", `{"assistant_id":"`+a+`","schedule":"0 0 1 1 *"}`)
	if field(cron, "metadata", "owner") != "alice" {
		t.Fatalf("alice's cron's metadata: %v", field(cron, "metadata"))
	}
	c := field(cron, "cron_id").(string)
	s.as(t, "alice", 204, "PUT", "/store/items", `{"namespace":["notes"],"key":"k","value":{"v":"alice's"}}`)

	// Bob's own, to count and page.
	bobThread := field(s.as(t, "bob", 200, "POST", "/threads", `{"metadata":{"owner":"bob"}}`), "thread_id").(string)
	var bobs []string
	for range 3 {
		bobs = append(bobs, field(s.as(t, "bob", 200, "POST", "/assistants", `{"graph_id":"echo"}`), "assistant_id").(string))
	}
	bobCron := field(s.as(t, "bob", 200, "POST", "/runs/crons", `{"assistant_id":"`+bobs[0]+`","schedule":"0 0 1 1 *"}`), "cron_id").(string)
	s.as(t, "bob", 204, "PUT", "/store/items", `{"namespace":["notes"],"key":"k","value":{"v":"bob's"}}`)

	echo := assistants.SystemID("echo")
	for _, tc := range []struct {
		name, method, path, body string
		want                     int
	}{
		{"get assistant", "GET", "/assistants/" + a, "", 404},
		{"patch assistant", "PATCH", "/assistants/" + a, `{"metadata":{"owner":"bob"}}`, 404},
		{"set latest", "POST", "/assistants/" + a + "/latest", `{"version":1}`, 404},
		{"versions", "POST", "/assistants/" + a + "/versions", `{}`, 404},
		{"graph", "GET", "/assistants/" + a + "/graph", "", 404},
		{"schemas", "GET", "/assistants/" + a + "/schemas", "", 404},
		{"subgraphs", "GET", "/assistants/" + a + "/subgraphs", "", 404},
		{"create over it, do_nothing", "POST", "/assistants", `{"assistant_id":"` + a + `","graph_id":"echo","if_exists":"do_nothing"}`, 409},
		{"stateless run with it", "POST", "/runs/wait", `{"assistant_id":"` + a + `","input":{}}`, 404},
		{"run with it on his thread", "POST", "/threads/" + bobThread + "/runs", `{"assistant_id":"` + a + `","input":{}}`, 404},
		{"cron with it", "POST", "/runs/crons", `{"assistant_id":"` + a + `","schedule":"0 0 1 1 *"}`, 404},
		{"cron on her thread", "POST", "/threads/" + th + "/runs/crons", `{"assistant_id":"echo","schedule":"0 0 1 1 *"}`, 404},
		{"patch cron", "PATCH", "/runs/crons/" + c, `{"schedule":"0 0 2 1 *"}`, 404},
		{"delete cron", "DELETE", "/runs/crons/" + c, "", 404},
		{"delete assistant", "DELETE", "/assistants/" + a, "", 404},
		{"patch a system assistant", "PATCH", "/assistants/" + echo, `{"metadata":{"x":1}}`, 404},
		{"delete a system assistant", "DELETE", "/assistants/" + echo, "", 404},
		{"delete her item (his own namespace)", "DELETE", "/store/items", `{"namespace":["alice","notes"],"key":"k"}`, 204},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := s.as(t, "bob", tc.want, tc.method, tc.path, tc.body)
			if strings.Contains(fmt.Sprint(v), "alice") {
				t.Errorf("the answer shows alice's: %v", v)
			}
		})
	}

	// What bob reads: his own, and the system assistants.
	if got := s.as(t, "bob", 200, "GET", "/assistants/"+echo, ""); field(got, "assistant_id") != echo {
		t.Errorf("bob reads the system assistant: %v", got)
	}
	if got := s.as(t, "bob", 200, "GET", "/assistants/echo/schemas", ""); field(got, "graph_id") != "echo" {
		t.Errorf("bob reads the system assistant's schemas: %v", got)
	}
	s.as(t, "bob", 200, "POST", "/threads/"+bobThread+"/runs/wait", `{"assistant_id":"echo","input":{"messages":[]}}`)
	ids := asstIDs(s.as(t, "bob", 200, "POST", "/assistants/search", `{"graph_id":"echo","limit":10}`))
	slices.Sort(ids)
	want := append(slices.Clone(bobs), echo)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("bob's search: %v, want his %v and the system one", ids, want)
	}
	code, h, page := s.do(t, "POST", "/assistants/search", `{"graph_id":"echo","limit":2,"offset":2}`,
		map[string]string{"Authorization": "Bearer tok-bob", "Content-Type": "application/json"})
	if code != 200 || h.Get("X-Pagination-Total") != "4" || len(page.([]any)) != 2 {
		t.Errorf("bob's second page: %d total %s, %v", code, h.Get("X-Pagination-Total"), page)
	}
	if n := s.as(t, "bob", 200, "POST", "/assistants/count", `{"graph_id":"echo"}`); n != 4.0 {
		t.Errorf("bob's count: %v, want 4", n)
	}
	if n := s.as(t, "alice", 200, "POST", "/assistants/count", `{"metadata":{"owner":"alice"}}`); n != 1.0 {
		t.Errorf("alice's count of hers: %v, want 1", n)
	}
	crons := s.as(t, "bob", 200, "POST", "/runs/crons/search", `{}`).([]any)
	if len(crons) != 1 || field(crons[0], "cron_id") != bobCron {
		t.Errorf("bob's crons: %v, want only %s", crons, bobCron)
	}
	if n := s.as(t, "bob", 200, "POST", "/runs/crons/count", `{}`); n != 1.0 {
		t.Errorf("bob's cron count: %v, want 1", n)
	}
	if n := s.as(t, "alice", 200, "POST", "/runs/crons/count", `{}`); n != 1.0 {
		t.Errorf("alice's cron count: %v, want 1", n)
	}

	// The store: each reads their own under the same name, and lists only their namespaces.
	for _, user := range []string{"alice", "bob"} {
		item := s.as(t, user, 200, "GET", "/store/items?namespace=notes&key=k", "")
		if field(item, "value", "v") != user+"'s" || !reflect.DeepEqual(field(item, "namespace"), []any{user, "notes"}) {
			t.Errorf("%s's item: %v", user, item)
		}
		found := s.as(t, user, 200, "POST", "/store/items/search", `{"namespace_prefix":[]}`)
		if items := field(found, "items").([]any); len(items) != 1 || field(items[0], "value", "v") != user+"'s" {
			t.Errorf("%s's search: %v", user, found)
		}
		ns := s.as(t, user, 200, "POST", "/store/namespaces", `{}`)
		if !reflect.DeepEqual(field(ns, "namespaces"), []any{[]any{user, "notes"}}) {
			t.Errorf("%s's namespaces: %v", user, ns)
		}
	}
	if v := s.as(t, "bob", 200, "GET", "/store/items?namespace=alice.notes&key=k", ""); v != nil {
		t.Errorf("bob reads alice's item by its full name: %v", v)
	}
	if v := s.as(t, "bob", 200, "POST", "/store/items/search", `{"namespace_prefix":["alice"]}`); len(field(v, "items").([]any)) != 0 {
		t.Errorf("bob searches alice's namespace: %v", v)
	}
	if v := s.as(t, "bob", 200, "POST", "/store/namespaces", `{"prefix":["alice"]}`); len(field(v, "namespaces").([]any)) != 0 {
		t.Errorf("bob lists alice's namespaces: %v", v)
	}

	// Alice still has everything bob tried to touch.
	if got := s.as(t, "alice", 200, "GET", "/assistants/"+a, ""); field(got, "metadata", "owner") != "alice" || field(got, "version") != 1.0 {
		t.Errorf("alice's assistant after bob: %v", got)
	}
	if got := s.as(t, "alice", 200, "POST", "/runs/crons/search", `{}`).([]any); len(got) != 1 || field(got[0], "schedule") != "0 0 1 1 *" {
		t.Errorf("alice's crons after bob: %v", got)
	}
	if got := s.as(t, "alice", 200, "GET", "/store/items?namespace=notes&key=k", ""); field(got, "value", "v") != "alice's" {
		t.Errorf("alice's item after bob: %v", got)
	}
	s.as(t, "alice", 200, "PATCH", "/runs/crons/"+c, `{"schedule":"0 0 2 1 *"}`)
	s.as(t, "alice", 200, "POST", "/assistants/"+a+"/versions", `{}`)
	s.as(t, "alice", 204, "DELETE", "/runs/crons/"+c, "")
	s.as(t, "alice", 204, "DELETE", "/assistants/"+a, "")
}
