package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/httpapi/console"
)

// The deployment's own HTTP: langgraph.json's "http" (graphs.HTTPConfig) applied to the API as
// the reference servers apply it. Its custom routes (http.app, served by a graph host) come
// before the built-in ones, except the meta routes no app may shadow; the disable_* toggles
// answer 404 for their groups; mount_prefix moves the API under a path.

// CustomApp is the user's custom routes (engine/hosting.App).
type CustomApp interface {
	// Match reports whether a route of the app serves method on path (full), or serves the
	// path with other methods (partial).
	Match(ctx context.Context, method, path string) (full, partial bool)
	// Serve answers the request with the app (path is the request's, mount_prefix removed);
	// an error only when nothing was written.
	Serve(w http.ResponseWriter, r *http.Request, path string) error
}

// RouteInfo is what the deployment layer decided of a request, set before routing (an echo
// Pre middleware), so that every middleware, the authentication's included, reads it with
// RouteOf.
type RouteInfo struct {
	// Custom: the user's app serves the request.
	Custom bool
	// Public: authentication does not apply. The meta routes (PublicPaths, matched exactly),
	// and the custom routes unless http.enable_custom_route_auth is set.
	Public bool
	// MiddlewareOrder is http.middleware_order (graphs.MiddlewareFirst or AuthFirst): whether
	// the user's middleware runs before the authentication (of custom routes).
	MiddlewareOrder string
	// Path is the request's path as the routes see it (mount_prefix removed).
	Path string

	requested string            // the path as requested (mount_prefix included), for the log
	outside   bool              // under mount_prefix while the path is not: 404
	disabled  graphs.RouteGroup // turned off by a disable_* toggle: 404 (unless Custom)
}

const routeInfoKey = "jetgraph.route"

// requestedPath is the request's path as the client sent it (mount_prefix included).
func requestedPath(c echo.Context) string {
	if ri, ok := c.Get(routeInfoKey).(RouteInfo); ok {
		return ri.requested
	}
	return c.Request().URL.Path
}

// RouteOf returns what the deployment layer decided of the request (the zero RouteInfo, with
// the request's path, when the config has no "http").
func RouteOf(c echo.Context) RouteInfo {
	if ri, ok := c.Get(routeInfoKey).(RouteInfo); ok {
		return ri
	}
	return RouteInfo{Path: c.Request().URL.Path, MiddlewareOrder: graphs.MiddlewareFirst, Public: IsPublicPath(c.Request().URL.Path)}
}

// PublicPaths are the routes that need no authentication, matched exactly: the health check,
// info, metrics and documentation (the reference servers' meta routes); the console's assets too.
var PublicPaths = []string{"/ok", "/info", "/metrics", "/docs", "/openapi.json"}

// IsPublicPath reports whether path is one of PublicPaths (exactly) or a documentation asset.
func IsPublicPath(path string) bool {
	for _, p := range PublicPaths {
		if path == p {
			return true
		}
	}
	return strings.HasPrefix(path, "/docs/assets/") || strings.HasPrefix(path, console.Prefix)
}

// unshadowable reports whether a path is served by jetgraph even when the user's app has a route
// for it: the meta routes the reference servers put before the app (/ok, /metrics, /docs,
// /openapi.json), and jetgraph's own services besides the LangGraph API.
func unshadowable(path string) bool {
	switch path {
	case "/ok", "/metrics", "/docs", "/openapi.json":
		return true
	}
	return strings.HasPrefix(path, "/docs/") || rootService(path)
}

// rootService reports whether a path belongs to jetgraph's services besides the deployment's
// API (tracing, the control plane, profiling, the dev mode's truncate, the console): they stay at
// the root whatever the mount_prefix, and no app shadows them.
func rootService(path string) bool {
	for _, p := range []string{"/tracing", "/v2", "/v1/", "/debug/pprof/", "/internal/", "/deployments/", console.Prefix} {
		if path == p || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}

// routeGroup is the group of built-in routes a path belongs to, for the disable_* toggles (the
// reference's grouping: a thread's runs are runs; the thread-centric protocol goes with runs).
func routeGroup(path string) graphs.RouteGroup {
	seg := strings.Split(strings.TrimPrefix(path, "/"), "/")
	switch seg[0] {
	case "assistants":
		return graphs.RouteAssistants
	case "runs":
		return graphs.RouteRuns
	case "threads":
		if len(seg) >= 3 && (seg[2] == "runs" || seg[2] == "commands" || seg[2] == "events" ||
			(seg[2] == "stream" && len(seg) >= 4)) {
			return graphs.RouteRuns
		}
		return graphs.RouteThreads
	case "store":
		return graphs.RouteStore
	case "mcp":
		return graphs.RouteMCP
	case "a2a":
		return graphs.RouteA2A
	case "ui":
		return graphs.RouteUI
	case "info", "metrics", "docs", "openapi.json":
		return graphs.RouteMeta
	}
	return ""
}

// classify is the Pre middleware: it removes mount_prefix and decides the request's RouteInfo.
func (s *Server) classify(next echo.HandlerFunc) echo.HandlerFunc {
	h := s.deps.HTTP
	return func(c echo.Context) error {
		req := c.Request()
		path := req.URL.Path
		ri := RouteInfo{MiddlewareOrder: h.MiddlewareOrder, Path: path, requested: path}
		if prefix := h.MountPrefix; prefix != "" && !rootService(path) {
			switch {
			case path == prefix || strings.HasPrefix(path, prefix+"/"):
				path = strings.TrimPrefix(path, prefix)
				if path == "" {
					path = "/"
				}
				req.URL.Path, req.URL.RawPath, ri.Path = path, "", path
			case path == "/ok" || path == "/metrics":
				// health checks stay at the root too, as on the reference servers
			default:
				ri.outside = true
			}
		}
		ri.Public = IsPublicPath(path)
		if !ri.outside && s.deps.App != nil && !unshadowable(path) {
			// A route of the app for the path but not the method leaves the request to the
			// built-in routes (404 or 405), as on the reference servers.
			ri.Custom, _ = s.deps.App.Match(req.Context(), req.Method, path)
		}
		if ri.Custom {
			ri.Public = !h.EnableCustomRouteAuth
		}
		if g := routeGroup(path); g != "" && h.Disabled[g] {
			ri.disabled = g
			if g == graphs.RouteMeta && path == "/ok" {
				ri.disabled = ""
			}
		}
		c.Set(routeInfoKey, ri)
		return next(c)
	}
}

// deployment is the middleware that serves the custom routes and answers 404 for what the
// config turns off; it runs after CORS and the access log, so those apply to custom routes too.
func (s *Server) deployment(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ri := RouteOf(c)
		switch {
		case ri.outside:
			return echo.ErrNotFound
		case ri.Custom:
			return s.deps.App.Serve(c.Response(), c.Request(), ri.Path)
		case ri.disabled != "":
			return echo.ErrNotFound
		}
		return next(c)
	}
}
