package hosting

import (
	"net/http"
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
