package httpapi_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/httpapi"
)

// TestDeploymentToggles: each disable_* toggle answers 404 for its group's routes, and only
// for them (a thread's runs are runs; /ok stays with disable_meta), under mount_prefix.
func TestDeploymentToggles(t *testing.T) {
	for _, c := range []struct {
		group graphs.RouteGroup
		off   []string // answered 404 with the toggle
		on    []string // not turned off by it
	}{
		{graphs.RouteAssistants, []string{"/assistants/search", "/assistants/x"}, []string{"/threads/search", "/runs/crons/search"}},
		{graphs.RouteThreads, []string{"/threads/search", "/threads/x/state", "/threads/x/history", "/threads/x/stream"}, []string{"/threads/x/runs/wait", "/runs/crons/search"}},
		{graphs.RouteRuns, []string{"/runs/crons/search", "/threads/x/runs", "/threads/x/runs/y/join", "/threads/x/commands", "/threads/x/stream/events"}, []string{"/threads/x/copy", "/threads/search"}},
		{graphs.RouteStore, []string{"/store/items", "/store/namespaces"}, []string{"/threads/search"}},
		{graphs.RouteMeta, []string{"/info", "/metrics", "/docs", "/openapi.json"}, []string{"/ok"}},
		{graphs.RouteMCP, []string{"/mcp"}, []string{"/threads/search"}},
		{graphs.RouteA2A, []string{"/a2a/x"}, []string{"/threads/search"}},
	} {
		cfg := &graphs.HTTPConfig{Disabled: map[graphs.RouteGroup]bool{c.group: true}, MountPrefix: "/api"}
		srv := httpapi.New(httpapi.Deps{Logger: slog.New(slog.DiscardHandler), HTTP: cfg})
		probe := func(path string) int {
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api"+path, nil))
			if rec.Code == http.StatusNotFound && strings.TrimSpace(rec.Body.String()) != `{"detail":"Not Found"}` {
				t.Errorf("%s: 404 body %q", path, rec.Body)
			}
			return rec.Code
		}
		for _, p := range c.off {
			if code := probe(p); code != http.StatusNotFound {
				t.Errorf("disable_%s: GET %s = %d, want 404", c.group, p, code)
			}
		}
		// A route left on reaches its handler or the router's 405 (this server has no services
		// to serve more): never the toggle's 404.
		for _, p := range c.on {
			if code := probe(p); code == http.StatusNotFound {
				t.Errorf("disable_%s: GET %s = %d, want it routed", c.group, p, code)
			}
		}
	}
}

// TestDeploymentMountPrefix: the API moves under mount_prefix; health checks and jetgraph's own
// services stay at the root.
func TestDeploymentMountPrefix(t *testing.T) {
	var log bytes.Buffer
	srv := httpapi.New(httpapi.Deps{Logger: slog.New(slog.NewTextHandler(&log, nil)), HTTP: &graphs.HTTPConfig{MountPrefix: "/my/api"},
		Info: map[string]any{"version": "t"}})
	for _, c := range []struct {
		path string
		want int
	}{
		{"/my/api/info", 200}, {"/my/api/ok", 200}, {"/ok", 200}, {"/metrics", 200}, {"/my/api/metrics", 200},
		{"/info", 404}, {"/my/apiinfo", 404}, {"/my/info", 404}, {"/openapi.json", 404}, {"/my/api/openapi.json", 200},
	} {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.path, nil))
		if rec.Code != c.want {
			t.Errorf("GET %s = %d, want %d", c.path, rec.Code, c.want)
		}
	}
	// The log names the path as requested, the prefix included.
	if !strings.Contains(log.String(), "path=/my/api/info ") {
		t.Errorf("access log:\n%s", log.String())
	}
}

// TestRouteOf: the route information the authentication layer reads (public meta routes matched
// exactly, the middleware order) is there for every middleware, under the prefix too.
func TestRouteOf(t *testing.T) {
	cfg := &graphs.HTTPConfig{MountPrefix: "/p", MiddlewareOrder: graphs.AuthFirst}
	var got httpapi.RouteInfo
	probe := mountFunc(func(e *echo.Echo) {
		e.GET("/probe/:x", func(c echo.Context) error { got = httpapi.RouteOf(c); return c.NoContent(204) })
	})
	e := httpapi.New(httpapi.Deps{Logger: slog.New(slog.DiscardHandler), HTTP: cfg, ControlPlane: probe}).Handler()
	for _, c := range []struct {
		path   string
		public bool
	}{{"/p/probe/1", false}} {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.path, nil))
		if rec.Code != 204 || got.Public != c.public || got.Path != "/probe/1" || got.MiddlewareOrder != graphs.AuthFirst || got.Custom {
			t.Errorf("%s: %d %+v", c.path, rec.Code, got)
		}
	}
	for path, public := range map[string]bool{"/ok": true, "/info": true, "/docs": true, "/openapi.json": true, "/metrics": true,
		"/ok/": false, "/info/x": false, "/threads": false} {
		if got := httpapi.IsPublicPath(path); got != public {
			t.Errorf("IsPublicPath(%q) = %v", path, got)
		}
	}
}

// TestDeploymentCORS holds http.cors to the answers of the Python reference server (Starlette's
// CORSMiddleware) for the same settings.
func TestDeploymentCORS(t *testing.T) {
	age := 120
	cfg := &graphs.HTTPConfig{CORS: &graphs.CORS{AllowOrigins: []string{"https://app.example"}, AllowOriginRegex: `https://.*\.b\.example`,
		AllowMethods: []string{"GET", "POST"}, AllowHeaders: []string{"x-custom"}, AllowCredentials: true,
		ExposeHeaders: []string{"x-total"}, MaxAge: &age}}
	srv := httpapi.New(httpapi.Deps{Logger: slog.New(slog.DiscardHandler), HTTP: cfg, Info: map[string]any{}})
	for _, c := range []struct {
		name, method, origin, reqMethod, reqHeaders string
		status                                      int
		body                                        string
		headers                                     map[string]string
	}{
		{"preflight", "OPTIONS", "https://app.example", "POST", "X-Custom, content-type", 200, "OK", map[string]string{
			"Access-Control-Allow-Origin": "https://app.example", "Access-Control-Allow-Methods": "GET, POST",
			"Access-Control-Max-Age": "120", "Access-Control-Allow-Credentials": "true",
			"Access-Control-Allow-Headers": "Accept, Accept-Language, Content-Language, Content-Type, x-custom",
			"Vary":                         "Origin, Access-Control-Request-Method, Access-Control-Request-Headers, Access-Control-Request-Private-Network"}},
		{"preflight by regex", "OPTIONS", "https://x.b.example", "GET", "", 200, "OK", map[string]string{"Access-Control-Allow-Origin": "https://x.b.example"}},
		{"refused", "OPTIONS", "https://evil.example", "DELETE", "", 400, "Disallowed CORS origin, method", map[string]string{"Access-Control-Allow-Origin": ""}},
		{"refused header", "OPTIONS", "https://app.example", "GET", "x-other", 400, "Disallowed CORS headers", nil},
		{"simple", "GET", "https://app.example", "", "", 200, "", map[string]string{"Access-Control-Allow-Origin": "https://app.example",
			"Access-Control-Expose-Headers": "x-total", "Access-Control-Allow-Credentials": "true", "Vary": "Origin"}},
		{"simple, other origin", "GET", "https://evil.example", "", "", 200, "", map[string]string{"Access-Control-Allow-Origin": ""}},
	} {
		req := httptest.NewRequest(c.method, "/info", nil)
		req.Header.Set("Origin", c.origin)
		if c.reqMethod != "" {
			req.Header.Set("Access-Control-Request-Method", c.reqMethod)
		}
		if c.reqHeaders != "" {
			req.Header.Set("Access-Control-Request-Headers", c.reqHeaders)
		}
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code != c.status || (c.body != "" && rec.Body.String() != c.body) {
			t.Errorf("%s: %d %q, want %d %q", c.name, rec.Code, rec.Body, c.status, c.body)
		}
		for k, v := range c.headers {
			if got := rec.Header().Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", c.name, k, got, v)
			}
		}
	}
}

// mountFunc mounts routes of a test (httpapi.Routes).
type mountFunc func(e *echo.Echo)

func (f mountFunc) Mount(e *echo.Echo) { f(e) }
