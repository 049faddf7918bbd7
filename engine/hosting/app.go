package hosting

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// Frames and event modes of the custom routes (PROTOCOL.md, "Custom routes").
const (
	frameHTTP     = "http"
	frameHTTPBody = "http.body"
	modeRespStart = "http.response.start"
	modeRespBody  = "http.response.body"
)

// bodyChunk is the most of a request body one http.body frame carries.
const bodyChunk = 64 << 10

// AppStatus is what a host said of the custom routes (langgraph.json's http.app) it loaded.
type AppStatus struct {
	OK     bool       `json:"ok"`
	Error  string     `json:"error,omitempty"`
	Routes []appRoute `json:"routes,omitempty"`
}

// appRoute is one route of the user's app as the host reports it: a regular expression on the
// path (Starlette's path_regex; a Hono path translated by the host) and its methods (nil: any).
type appRoute struct {
	Pattern string   `json:"pattern"`
	Methods []string `json:"methods"`
}

type compiledRoute struct {
	re      *regexp.Regexp
	methods []string
}

// App is the user's custom routes, served by the hosts of a pool (see Serve).
type App struct {
	pool *Pool
	spec string

	mu     sync.Mutex
	from   *AppStatus // the status the routes were compiled from
	routes []compiledRoute
	err    error
}

// appStatus is what the running host (or, before one ran, the first) said of its app.
func (h *Host) appStatus() *AppStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hello.App
}

// compiled returns the app's routes, compiled once per host start that reported them. It never
// waits: before the host first started no custom route matches (jetgraph's /ok reports the host
// as starting meanwhile), and while a host is started again its last routes serve.
func (a *App) compiled() ([]compiledRoute, error) {
	st := a.pool.pick().appStatus()
	a.mu.Lock()
	defer a.mu.Unlock()
	if st == nil {
		return nil, fmt.Errorf("the app %s: its host has not started yet", a.spec)
	}
	if st == a.from {
		return a.routes, a.err
	}
	a.from, a.routes, a.err = st, nil, nil
	if !st.OK {
		a.err = fmt.Errorf("the app %s: %s", a.spec, st.Error)
	}
	for _, r := range st.routesOrNil() {
		re, err := regexp.Compile(r.Pattern)
		if err != nil {
			a.err = fmt.Errorf("the app %s: route %q: %w", a.spec, r.Pattern, err)
			a.pool.hosts[0].log.Error("custom route not served: its path does not compile in Go's regexp syntax", "error", a.err)
			continue
		}
		a.routes = append(a.routes, compiledRoute{re: re, methods: r.Methods})
	}
	return a.routes, a.err
}

func (st *AppStatus) routesOrNil() []appRoute {
	if st == nil || !st.OK {
		return nil
	}
	return st.Routes
}

// Match reports whether a route of the app serves method on path: true when one matches both,
// and partial when only the path matches (the app then answers 405, unless a built-in route
// serves the request). An app that failed to load matches nothing (its error is logged when
// its host starts).
func (a *App) Match(_ context.Context, method, path string) (full, partial bool) {
	routes, _ := a.compiled()
	for _, r := range routes {
		if !r.re.MatchString(path) {
			continue
		}
		if r.methods == nil || slices.Contains(r.methods, method) {
			return true, true
		}
		partial = true
	}
	return false, partial
}

// Err is why the app is not served (not started yet, failed to load), nil while it is.
func (a *App) Err() error {
	_, err := a.compiled()
	return err
}

// projectCode is what a host's graphs and app share of their project (its env and local
// dependencies): the first graph's, or the app's when the host serves no graph.
func projectCode(entries []graphs.Entry, app *graphs.Code) *graphs.Code {
	if len(entries) > 0 {
		return entries[0].Code
	}
	return app
}

// hopHeaders are a connection's, not the message's: never passed through.
var hopHeaders = map[string]bool{"connection": true, "keep-alive": true, "transfer-encoding": true,
	"upgrade": true, "te": true, "trailer": true, "proxy-connection": true}

// Serve serves a request with the user's app: the request, its body streamed as it arrives,
// and the response streamed back as the app writes it (server-sent events included). It
// returns an error only when nothing was written (the caller answers it); a client that goes
// away cancels the app's request.
func (a *App) Serve(w http.ResponseWriter, r *http.Request, path string) error {
	const op = "hosting.app"
	headers := requestHeaders(r)
	hasBody := r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
	fields := map[string]any{"method": r.Method, "path": path, "raw_path": path, "query": r.URL.RawQuery,
		"headers": headers, "scheme": scheme(r), "body": "", "more": hasBody}
	if host, port, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		n, _ := strconv.Atoi(port)
		fields["client"] = []any{host, n}
	}
	q := &respQueue{}
	q.cond = sync.NewCond(&q.mu)
	req := &request{onEvent: func(mode string, _ []string, data json.RawMessage) { q.push(mode, data) }}
	if hasBody {
		req.started = func(id string, send func(any) error) { streamBody(r.Context(), r.Body, id, send) }
	}
	errc := make(chan error, 1)
	go func() {
		_, err := a.pool.do(r.Context(), frameHTTP, fields, req)
		q.close()
		errc <- err
	}()
	flusher, _ := w.(http.Flusher)
	wrote := false
	for {
		mode, data, ok := q.pop()
		if !ok {
			break
		}
		switch mode {
		case modeRespStart:
			var head struct {
				Status  int         `json:"status"`
				Headers [][2]string `json:"headers"`
			}
			if json.Unmarshal(data, &head) != nil || wrote {
				continue
			}
			for _, kv := range head.Headers {
				if !hopHeaders[strings.ToLower(kv[0])] {
					w.Header().Add(kv[0], kv[1])
				}
			}
			w.WriteHeader(head.Status)
			wrote = true
		case modeRespBody:
			var b64 string
			if json.Unmarshal(data, &b64) != nil || !wrote {
				continue
			}
			chunk, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				continue
			}
			if _, err := w.Write(chunk); err != nil {
				continue // the client went away: the request's context ends and cancels the app's
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
	}
	err := <-errc
	if wrote || errors.Is(err, context.Canceled) {
		return nil
	}
	if err == nil {
		err = errors.New("the app returned no response")
	}
	var we *WireError
	if errors.As(err, &we) {
		return engine.E(engine.Op(op), engine.Other, "The custom route failed: "+we.Class, err)
	}
	return engine.E(engine.Op(op), err)
}

// streamBody sends a request's body to the host in http.body frames as it arrives.
func streamBody(ctx context.Context, body io.Reader, id string, send func(any) error) {
	buf := make([]byte, bodyChunk)
	for {
		n, err := body.Read(buf)
		more := err == nil
		if n > 0 || !more {
			if send(map[string]any{"t": frameHTTPBody, "id": id, "data": base64.StdEncoding.EncodeToString(buf[:n]), "more": more}) != nil {
				return
			}
		}
		if !more || ctx.Err() != nil {
			return
		}
	}
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// respQueue holds a response's frames between the host's reader (which must never wait on a
// slow client: it reads every request's frames) and the request's writer.
type respQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []respItem
	closed bool
}

type respItem struct {
	mode string
	data json.RawMessage
}

func (q *respQueue) push(mode string, data json.RawMessage) {
	q.mu.Lock()
	q.items = append(q.items, respItem{mode, slices.Clone(data)})
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *respQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Signal()
}

// pop returns the next frame, waiting for one; false once the response ended and all are read.
func (q *respQueue) pop() (string, json.RawMessage, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.items) == 0 {
		return "", nil, false
	}
	it := q.items[0]
	q.items = q.items[1:]
	return it.mode, it.data, true
}

// Library returns the host's language and the version of the LangGraph library it runs (its
// hello), waiting for nothing: "" before the host started.
func (h *Host) Library() (language, version string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cfg.Language, h.hello.Library
}
