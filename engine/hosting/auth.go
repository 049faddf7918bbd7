package hosting

import (
	"bytes"
	"cmp"
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// The frames of the host's auth handler (PROTOCOL.md, "Auth handler"): who a request is, and
// what its @auth.on handler says of an operation.
const (
	frameAuthenticate = "authenticate"
	frameAuthorize    = "authorize"
)

// MethodCustom is the way of authenticating of the user's own auth handler (Auth.Methods).
const MethodCustom = "custom"

// AuthStatus is what a host said of the auth handler it loaded (langgraph.json's auth.path).
type AuthStatus struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// OnHandlers is how many @auth.on handlers the Auth object has.
	OnHandlers int `json:"on_handlers"`
	// On are the (resource, action) pairs its handlers answer, "*" for any: an operation none
	// answers is allowed without asking the host, as the reference allows it.
	On [][2]string `json:"on"`
}

// handles reports whether one of the handlers answers resource and action (the reference's
// lookup: the pair, the resource's "*", the action's "*", "*" for both; a global handler is the
// last).
func (st *AuthStatus) handles(resource engine.AuthResource, action engine.AuthAction) bool {
	r, a := string(resource), string(action)
	for _, k := range st.On {
		if (k[0] == r || k[0] == "*") && (k[1] == a || k[1] == "*") {
			return true
		}
	}
	return false
}

// Auth is the user's auth handler, run by the hosts of a pool: an httpapi.Authenticator and an
// engine.Authorizer.
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
			b, ok := v.(bool)
			u.Unauthenticated = ok && !b
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
// warning, as the reference does, of the operations its @auth.on handlers leave open when it has
// some (an Auth with none authenticates only, which is no oversight).
func (a *Auth) WaitLoaded(ctx context.Context) error {
	if err := a.pool.pick().WaitReady(ctx); err != nil {
		return fmt.Errorf("the auth handler %s: its host did not start: %w", a.spec, err)
	}
	if err := a.Err(); err != nil {
		return err
	}
	if open := a.Status().open(); len(open) > 0 {
		a.pool.hosts[0].log.Warn("the auth handler has no @auth.on handler for some operations: every authenticated user may do them to every record (add a global handler that returns False, and allow per resource)",
			"handler", a.spec, "open", strings.Join(open, ","))
	}
	return nil
}

// authOperations are the resources and actions the runtime asks rules about.
var authOperations = map[engine.AuthResource][]engine.AuthAction{
	engine.ResourceThreads:    {engine.ActionCreate, engine.ActionRead, engine.ActionUpdate, engine.ActionDelete, engine.ActionSearch, engine.ActionCreateRun},
	engine.ResourceAssistants: {engine.ActionCreate, engine.ActionRead, engine.ActionUpdate, engine.ActionDelete, engine.ActionSearch},
	engine.ResourceCrons:      {engine.ActionCreate, engine.ActionRead, engine.ActionUpdate, engine.ActionDelete, engine.ActionSearch},
	engine.ResourceStore:      {engine.ActionPut, engine.ActionGet, engine.ActionSearch, engine.ActionListNamespaces, engine.ActionDelete},
}

// open lists the operations ("threads.read") no handler answers, sorted; none when the Auth
// has no handlers at all.
func (st *AuthStatus) open() []string {
	if st == nil || len(st.On) == 0 {
		return nil
	}
	var out []string
	for r, actions := range authOperations {
		for _, act := range actions {
			if !st.handles(r, act) {
				out = append(out, string(r)+"."+string(act))
			}
		}
	}
	slices.Sort(out)
	return out
}

// authorizeAnswer is the host's answer to an authorize frame: the value as the handler left it
// and its filter, or the status and detail it refused with.
type authorizeAnswer struct {
	Value  map[string]any `json:"value"`
	Filter map[string]any `json:"filter"`
	Status int            `json:"status"`
	Detail string         `json:"detail"`
}

// Authorize asks the handler's @auth.on handler for req's resource and action (an
// engine.Authorizer): it allows at once, without asking the host, when no handler answers them.
// The value the handler left replaces req.Value; a status it raised is that error with its
// detail; a handler that failed is a 500 whose answer says nothing of it (the log has it).
func (a *Auth) Authorize(ctx context.Context, req *engine.AuthRequest) (engine.Filter, error) {
	const op = "hosting.authorize"
	st := a.Status()
	if st == nil || !st.OK {
		return engine.Filter{}, engine.E(engine.Op(op), engine.Unavailable, "The auth handler is not loaded", a.Err())
	}
	if !st.handles(req.Resource, req.Action) {
		return engine.Filter{}, nil
	}
	value := req.Value
	if value == nil {
		value = map[string]any{}
	}
	fields := map[string]any{"user": req.User.Object(), "resource": req.Resource, "action": req.Action, "value": value}
	raw, err := a.pool.do(ctx, frameAuthorize, fields, &request{})
	if err != nil {
		if ctx.Err() == nil {
			a.pool.hosts[0].log.Error("the auth handler failed", "handler", a.spec, "resource", req.Resource, "action", req.Action, "error", err)
		}
		return engine.Filter{}, engine.E(engine.Op(op), engine.Other, "Internal Server Error", err)
	}
	var ans authorizeAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return engine.Filter{}, engine.E(engine.Op(op), engine.Other, "Internal Server Error", err)
	}
	if ans.Status != 0 {
		return engine.Filter{}, engine.E(engine.Op(op), statusKinds[ans.Status], cmp.Or(ans.Detail, http.StatusText(ans.Status)))
	}
	f, err := engine.ParseFilter(ans.Filter)
	if err != nil {
		return engine.Filter{}, err
	}
	if ans.Value != nil {
		req.Value = keptTypes(value, ans.Value)
	}
	return f, nil
}

// keptTypes is the value the handler returned, with each field it left as it was kept as the
// operation gave it (an int stays an int, a []string a []string): only what the handler changed
// comes back in JSON's types.
func keptTypes(sent, got map[string]any) map[string]any {
	for k, v := range got {
		old, ok := sent[k]
		if !ok {
			continue
		}
		a, errA := json.Marshal(old)
		b, errB := json.Marshal(v)
		if errA == nil && errB == nil && bytes.Equal(a, b) {
			got[k] = old
		}
	}
	return got
}

// statusKinds are the engine kinds of the statuses an @auth.on handler may raise; one jetgraph
// has no kind for is a 500 that carries the handler's detail.
var statusKinds = map[int]engine.Kind{
	http.StatusBadRequest: engine.BadRequest, http.StatusUnauthorized: engine.Unauthorized,
	http.StatusForbidden: engine.Forbidden, http.StatusNotFound: engine.NotFound,
	http.StatusConflict: engine.Conflict, http.StatusRequestEntityTooLarge: engine.TooLarge,
	http.StatusUnprocessableEntity: engine.Invalid, http.StatusServiceUnavailable: engine.Unavailable,
}
