package hosting

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// TestAuthCache holds auth.cache to the reference's rules: keyed by the named headers only (a
// request with none is not cached), answers kept for the TTL, the least recently used dropped
// past the size, and no cache at all without cache_keys.
func TestAuthCache(t *testing.T) {
	if newAuthCache(nil) != nil || newAuthCache(&graphs.AuthCache{TTL: time.Minute, MaxSize: 2}) != nil {
		t.Fatal("a cache without cache_keys")
	}
	now := time.Unix(0, 0)
	c := newAuthCache(&graphs.AuthCache{Keys: []string{"authorization"}, TTL: time.Minute, MaxSize: 2})
	c.now = func() time.Time { return now }
	req := func(token string) http.Header {
		h := http.Header{"X-Other": {"1"}}
		if token != "" {
			h.Set("Authorization", "Bearer "+token)
		}
		return h
	}
	if c.key(req("")) != "" {
		t.Fatal("a request without the cache's headers has a key")
	}
	c.put(c.key(req("a")), engine.User{Identity: "a"})
	c.put(c.key(req("b")), engine.User{Identity: "b"})
	for _, tc := range []struct {
		token, want string
		ok          bool
	}{{"a", "a", true}, {"b", "b", true}, {"c", "", false}} {
		if u, ok := c.get(c.key(req(tc.token))); ok != tc.ok || u.Identity != tc.want {
			t.Errorf("get(%s) = %q, %v", tc.token, u.Identity, ok)
		}
	}
	c.get(c.key(req("a")))                             // a is now the most recently used
	c.put(c.key(req("c")), engine.User{Identity: "c"}) // b goes
	if _, ok := c.get(c.key(req("b"))); ok {
		t.Error("the least recently used entry was kept past max_size")
	}
	now = now.Add(61 * time.Second)
	if _, ok := c.get(c.key(req("a"))); ok {
		t.Error("an entry was kept past its TTL")
	}
}

// TestAuthStatusHandles holds the choice of asking the host to the reference's lookup of a
// handler: the pair, the resource's "*", the action's "*", or "*" for both (a global handler).
func TestAuthStatusHandles(t *testing.T) {
	for _, c := range []struct {
		on       [][2]string
		resource engine.AuthResource
		action   engine.AuthAction
		want     bool
	}{
		{nil, engine.ResourceThreads, engine.ActionRead, false},
		{[][2]string{{"threads", "create"}}, engine.ResourceThreads, engine.ActionCreate, true},
		{[][2]string{{"threads", "create"}}, engine.ResourceThreads, engine.ActionRead, false},
		{[][2]string{{"threads", "create"}}, engine.ResourceAssistants, engine.ActionCreate, false},
		{[][2]string{{"threads", "*"}}, engine.ResourceThreads, engine.ActionCreateRun, true},
		{[][2]string{{"threads", "*"}}, engine.ResourceCrons, engine.ActionRead, false},
		{[][2]string{{"*", "search"}}, engine.ResourceStore, engine.ActionSearch, true},
		{[][2]string{{"*", "search"}}, engine.ResourceStore, engine.ActionPut, false},
		{[][2]string{{"crons", "read"}, {"*", "*"}}, engine.ResourceStore, engine.ActionListNamespaces, true},
	} {
		st := &AuthStatus{OK: true, On: c.on}
		if got := st.handles(c.resource, c.action); got != c.want {
			t.Errorf("%v handles %s.%s = %v, want %v", c.on, c.resource, c.action, got, c.want)
		}
	}
}

// TestUserOf keeps what a handler's user says, is_authenticated false included (the reference
// serves such a user and its rules and graphs read the flag).
func TestUserOf(t *testing.T) {
	u := userOf(map[string]any{"identity": "g", "is_authenticated": false, "permissions": []any{"p"}, "email": "e"})
	if u.Identity != "g" || !u.Unauthenticated || u.Object()["is_authenticated"] != false || u.Fields["email"] != "e" || len(u.Permissions) != 1 {
		t.Errorf("user %+v, object %v", u, u.Object())
	}
	if u := userOf(map[string]any{"identity": "a", "is_authenticated": true}); u.Unauthenticated || u.Object()["is_authenticated"] != true {
		t.Errorf("an authenticated user: %+v", u)
	}
	if u := userOf(map[string]any{"identity": "a"}); u.Unauthenticated {
		t.Errorf("a user without is_authenticated is not authenticated: %+v", u)
	}
}

// TestKeptTypes holds a handler's answer to the operation's own types where it changed nothing.
func TestKeptTypes(t *testing.T) {
	sent := map[string]any{"limit": 10, "namespace": []string{"a"}, "metadata": map[string]any{"k": "v"}, "gone": true}
	got := keptTypes(sent, map[string]any{"limit": float64(10), "namespace": []any{"u", "a"}, "metadata": map[string]any{"k": "v"}, "new": "x"})
	if _, ok := got["limit"].(int); !ok {
		t.Errorf("limit %T, want the int sent", got["limit"])
	}
	if ns, ok := got["namespace"].([]any); !ok || len(ns) != 2 {
		t.Errorf("the changed namespace %v (%T), want the handler's", got["namespace"], got["namespace"])
	}
	if _, ok := got["gone"]; ok || got["new"] != "x" {
		t.Errorf("a field the handler removed or added: %v", got)
	}
}

// TestAuthStatusOpen lists what the reference warns of: the operations no handler answers, none
// for an Auth without handlers or with a catch-all one.
func TestAuthStatusOpen(t *testing.T) {
	if got := (&AuthStatus{OK: true}).open(); got != nil {
		t.Errorf("no handlers: %v", got)
	}
	if got := (&AuthStatus{OK: true, On: [][2]string{{"*", "*"}}}).open(); got != nil {
		t.Errorf("a global handler: %v", got)
	}
	got := (&AuthStatus{OK: true, On: [][2]string{{"threads", "*"}, {"assistants", "*"}, {"crons", "*"}, {"store", "put"}, {"*", "search"}}}).open()
	if want := []string{"store.delete", "store.get", "store.list_namespaces"}; !slices.Equal(got, want) {
		t.Errorf("open %v, want %v", got, want)
	}
}
