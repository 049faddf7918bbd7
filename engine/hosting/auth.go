package hosting

import (
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// frameAuthenticate asks the host's auth handler who a request is (PROTOCOL.md, "Auth handler").
const frameAuthenticate = "authenticate"

// MethodCustom is the way of authenticating of the user's own auth handler (Auth.Methods).
const MethodCustom = "custom"

// AuthStatus is what a host said of the auth handler it loaded (langgraph.json's auth.path).
type AuthStatus struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// OnHandlers is how many @auth.on handlers the Auth object has: not applied yet.
	OnHandlers int `json:"on_handlers"`
}

// Auth is the user's auth handler, run by the hosts of a pool: an httpapi.Authenticator.
type Auth struct {
	pool  *Pool
	spec  string
	cache *authCache
}

// Methods names the way of authenticating Auth is: the user's handler.
func (a *Auth) Methods() []string { return []string{MethodCustom} }

// Status is what the running host (or, before one ran, the first) said of the handler; nil
// before any host started.
func (a *Auth) Status() *AuthStatus {
	h := a.pool.pick()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hello.Auth
}

// Err is why the handler does not serve (not started yet, failed to load), nil while it does.
func (a *Auth) Err() error {
	st := a.Status()
	switch {
	case st == nil:
		return fmt.Errorf("the auth handler %s: its host has not started yet", a.spec)
	case !st.OK:
		return fmt.Errorf("the auth handler %s: %s", a.spec, st.Error)
	}
	return nil
}

// authAnswer is the host's answer to an authenticate frame: the user, or the handler's 401/403.
type authAnswer struct {
	User   map[string]any `json:"user"`
	Status int            `json:"status"`
	Detail string         `json:"detail"`
}

// Authenticate asks the user's handler who r is. The handler's Auth.exceptions.HTTPException
// 401 or 403 is that error with its detail (the reference drops its headers); any other
// failure of the handler is a 500 whose answer says nothing of it (the log has it).
func (a *Auth) Authenticate(r *http.Request) (engine.User, error) {
	const op = "hosting.authenticate"
	key := a.cache.key(r.Header)
	if u, ok := a.cache.get(key); ok {
		return u, nil
	}
	if err := a.Err(); err != nil {
		return engine.User{}, engine.E(engine.Op(op), engine.Unavailable, "The auth handler is not loaded", err)
	}
	fields := map[string]any{"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery,
		"headers": requestHeaders(r), "scheme": scheme(r)}
	raw, err := a.pool.do(r.Context(), frameAuthenticate, fields, &request{})
	if err != nil {
		if r.Context().Err() == nil { // a client that went away is no failure of the handler
			a.pool.hosts[0].log.Error("the auth handler failed", "handler", a.spec, "error", err)
		}
		return engine.User{}, engine.E(engine.Op(op), engine.Other, "Internal Server Error", err)
	}
	var ans authAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return engine.User{}, engine.E(engine.Op(op), engine.Other, "Internal Server Error", err)
	}
	switch ans.Status {
	case http.StatusUnauthorized:
		return engine.User{}, engine.E(engine.Op(op), engine.Unauthorized, ans.Detail)
	case http.StatusForbidden:
		return engine.User{}, engine.E(engine.Op(op), engine.Forbidden, ans.Detail)
	}
	u := userOf(ans.User)
	if u.Identity == "" {
		return engine.User{}, engine.E(engine.Op(op), engine.Other, "Internal Server Error")
	}
	a.cache.put(key, u)
	return u, nil
}

// userOf is the handler's user (identity, display_name, permissions and its other fields).
func userOf(obj map[string]any) engine.User {
	u := engine.User{Fields: map[string]any{}}
	for k, v := range obj {
		switch k {
		case "identity":
			u.Identity, _ = v.(string)
		case "display_name":
			u.Display, _ = v.(string)
		case "permissions":
			perms, _ := v.([]any)
			for _, p := range perms {
				if s, ok := p.(string); ok {
					u.Permissions = append(u.Permissions, s)
				}
			}
		case "is_authenticated":
		default:
			u.Fields[k] = v
		}
	}
	return u
}

// requestHeaders are r's headers as the hosts take them: lower-case names, host first, the
// connection's own left out.
func requestHeaders(r *http.Request) [][2]string {
	headers := [][2]string{{"host", r.Host}}
	for k, vs := range r.Header {
		if hopHeaders[strings.ToLower(k)] {
			continue
		}
		for _, v := range vs {
			headers = append(headers, [2]string{strings.ToLower(k), v})
		}
	}
	return headers
}

// authCache keeps the handler's users per the values of auth.cache's headers, for its TTL,
// the least recently used dropped past its size. A nil cache keeps nothing.
type authCache struct {
	conf *graphs.AuthCache
	now  func() time.Time

	mu    sync.Mutex
	order *list.List // of *cached, most recently used first
	byKey map[string]*list.Element
}

type cached struct {
	key     string
	user    engine.User
	expires time.Time
}

func newAuthCache(conf *graphs.AuthCache) *authCache {
	if conf == nil || len(conf.Keys) == 0 {
		return nil // the reference caches only by named headers
	}
	return &authCache{conf: conf, now: time.Now, order: list.New(), byKey: map[string]*list.Element{}}
}

// key is the cache key of a request's headers, "" (not cached) when it has none of them.
func (c *authCache) key(h http.Header) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, k := range c.conf.Keys {
		if vs, ok := h[http.CanonicalHeaderKey(k)]; ok {
			b.WriteString(k)
			b.WriteByte(0)
			b.WriteString(strings.Join(vs, ","))
			b.WriteByte(0)
		}
	}
	return b.String()
}

func (c *authCache) get(key string) (engine.User, bool) {
	if c == nil || key == "" {
		return engine.User{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return engine.User{}, false
	}
	e := el.Value.(*cached)
	if c.now().After(e.expires) {
		c.order.Remove(el)
		delete(c.byKey, key)
		return engine.User{}, false
	}
	c.order.MoveToFront(el)
	return e.user, true
}

func (c *authCache) put(key string, u engine.User) {
	if c == nil || key == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.order.Remove(el)
	}
	c.byKey[key] = c.order.PushFront(&cached{key: key, user: u, expires: c.now().Add(c.conf.TTL)})
	for c.order.Len() > c.conf.MaxSize {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*cached).key)
	}
}

// WaitLoaded waits for the handler's host to start and reports whether the handler loaded,
// warning when the Auth object has @auth.on handlers, which are not applied yet.
func (a *Auth) WaitLoaded(ctx context.Context) error {
	if err := a.pool.pick().WaitReady(ctx); err != nil {
		return fmt.Errorf("the auth handler %s: its host did not start: %w", a.spec, err)
	}
	if err := a.Err(); err != nil {
		return err
	}
	if st := a.Status(); st.OnHandlers > 0 {
		a.pool.hosts[0].log.Warn("the auth handler's @auth.on handlers (authorization, filters) are not applied yet: only @auth.authenticate decides, and every authenticated user reaches every resource",
			"handler", a.spec, "on_handlers", st.OnHandlers)
	}
	return nil
}
