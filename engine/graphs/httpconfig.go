package graphs

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
)

// HTTPConfig is langgraph.json's "http": the deployment's own HTTP besides the LangGraph API.
type HTTPConfig struct {
	// App is "http.app", the user's custom routes: a Starlette/FastAPI app ("./src/app.py:app")
	// or a Hono app ("./src/app.ts:app"), served by the host of its language; nil when none.
	App *Code
	// Disabled are the route groups the "disable_*" toggles turn off (RouteAssistants, ...).
	Disabled map[RouteGroup]bool
	// DisableWebhooks is "disable_webhooks": no webhook is called when a run ends.
	DisableWebhooks bool
	// MountPrefix is "mount_prefix" ("/my-deployment/api", no trailing slash): the API, the
	// custom routes included, is served under it; "" serves it at the root.
	MountPrefix string
	// CORS is "cors": replaces the server's CORS settings when given; nil keeps them.
	CORS *CORS
	// EnableCustomRouteAuth is "enable_custom_route_auth": the deployment's authentication
	// applies to the custom routes too (by default they are public).
	EnableCustomRouteAuth bool
	// MiddlewareOrder is "middleware_order": MiddlewareFirst (the default) or AuthFirst.
	// jetgraph authenticates a request before the app (and its middleware) sees it, so
	// middleware_first asked for with enable_custom_route_auth is refused.
	MiddlewareOrder string
	// ConfigurableHeaders is "configurable_headers": the request headers a run's configurable
	// gets; nil when none (then none).
	ConfigurableHeaders *engine.HeaderPatterns
	// LoggingHeaders is "logging_headers", kept as written: not acted on yet.
	LoggingHeaders json.RawMessage
}

// CORS is "http.cors", the browser policy of the deployment's routes (the reference servers'
// Starlette CORSMiddleware settings).
type CORS struct {
	AllowOrigins     []string `json:"allow_origins"`
	AllowOriginRegex string   `json:"allow_origin_regex"`
	AllowMethods     []string `json:"allow_methods"`
	AllowHeaders     []string `json:"allow_headers"`
	AllowCredentials bool     `json:"allow_credentials"`
	ExposeHeaders    []string `json:"expose_headers"`
	// MaxAge is how long, in seconds, browsers may cache a preflight answer; nil: 600, the
	// reference's default.
	MaxAge *int `json:"max_age"`
}

// RouteGroup names a group of built-in routes that an "http.disable_*" toggle turns off.
type RouteGroup string

// The route groups of the toggles, as langgraph.json names them (disable_<group>).
const (
	RouteAssistants RouteGroup = "assistants"
	RouteThreads    RouteGroup = "threads"
	RouteRuns       RouteGroup = "runs"
	RouteStore      RouteGroup = "store"
	RouteMeta       RouteGroup = "meta"
	RouteUI         RouteGroup = "ui"
	RouteMCP        RouteGroup = "mcp"
	RouteA2A        RouteGroup = "a2a"
)

// Values of "http.middleware_order".
const (
	MiddlewareFirst = "middleware_first"
	AuthFirst       = "auth_first"
)

var routeGroups = []RouteGroup{RouteAssistants, RouteThreads, RouteRuns, RouteStore, RouteMeta, RouteUI, RouteMCP, RouteA2A}

// mountPrefixPattern is a path of one or more segments of URL-safe characters.
var mountPrefixPattern = regexp.MustCompile(`^(/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)+$`)

// httpConfig reads "http".
func (c *configParser) httpConfig(raw json.RawMessage) (*HTTPConfig, error) {
	kvs, err := c.object("http", raw)
	if err != nil {
		return nil, err
	}
	h := &HTTPConfig{Disabled: map[RouteGroup]bool{}, MiddlewareOrder: MiddlewareFirst}
	orderSet := false
	flag := func(k string, v json.RawMessage) (bool, error) {
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return false, c.fail(k, "must be true or false")
		}
		return b, nil
	}
	for _, kv := range kvs {
		k := "http." + kv.key
		switch name, isToggle := strings.CutPrefix(kv.key, "disable_"); {
		case kv.key == "app":
			var spec string
			if err := json.Unmarshal(kv.value, &spec); err != nil || spec == "" {
				return nil, c.fail(k, "must be ./path/file.py:attribute (a Starlette or FastAPI app) or ./path/file.ts:attribute (a Hono app)")
			}
			e, err := c.code(k, spec)
			if err != nil {
				return nil, err
			}
			h.App = e.Code
		case isToggle && name == "webhooks":
			if h.DisableWebhooks, err = flag(k, kv.value); err != nil {
				return nil, err
			}
		case isToggle && isRouteGroup(name):
			on, err := flag(k, kv.value)
			if err != nil {
				return nil, err
			}
			h.Disabled[RouteGroup(name)] = on
		case kv.key == "mount_prefix":
			if err := json.Unmarshal(kv.value, &h.MountPrefix); err != nil {
				return nil, c.fail(k, "must be a path such as \"/my-deployment/api\"")
			}
			h.MountPrefix = strings.TrimSuffix(h.MountPrefix, "/")
			if h.MountPrefix != "" && !mountPrefixPattern.MatchString(h.MountPrefix) {
				return nil, c.fail(k, "%q must be a path starting with '/', such as \"/my-deployment/api\"", h.MountPrefix)
			}
			if h.MountPrefix == "/noauth" || strings.HasPrefix(h.MountPrefix, "/noauth/") {
				return nil, c.fail(k, "%q: /noauth is reserved by the reference servers", h.MountPrefix)
			}
		case kv.key == "cors":
			if h.CORS, err = c.cors(kv.value); err != nil {
				return nil, err
			}
		case kv.key == "enable_custom_route_auth":
			if h.EnableCustomRouteAuth, err = flag(k, kv.value); err != nil {
				return nil, err
			}
		case kv.key == "middleware_order":
			var order *string
			if err := json.Unmarshal(kv.value, &order); err != nil || (order != nil && *order != MiddlewareFirst && *order != AuthFirst) {
				return nil, c.fail(k, "must be %q or %q", MiddlewareFirst, AuthFirst)
			}
			if order != nil {
				h.MiddlewareOrder, orderSet = *order, true
			}
		case kv.key == "configurable_headers":
			if h.ConfigurableHeaders, err = c.headerPatterns(k, kv.value); err != nil {
				return nil, err
			}
		case kv.key == "logging_headers":
			h.LoggingHeaders = kv.value
			c.warn(k + ": not acted on yet, ignored")
		default:
			c.warn(k + ": unknown key, ignored (known: app, cors, mount_prefix, enable_custom_route_auth, middleware_order, configurable_headers, logging_headers, disable_{assistants,threads,runs,store,meta,ui,mcp,a2a,webhooks})")
		}
	}
	if err := c.middlewareOrder(h, orderSet); err != nil {
		return nil, err
	}
	return h, nil
}

// middlewareOrder checks "middleware_order" against what jetgraph serves: the authentication of
// the custom routes (enable_custom_route_auth) runs in jetgraph before the request reaches the
// app, so the app's middleware always runs after it (auth_first). Only with custom-route auth
// does the order change anything: there, middleware_first is refused, and the reference's
// default (middleware_first when unset) is served as auth_first with a warning.
func (c *configParser) middlewareOrder(h *HTTPConfig, set bool) error {
	if h.App == nil || !h.EnableCustomRouteAuth {
		return nil
	}
	switch {
	case set && h.MiddlewareOrder == MiddlewareFirst:
		return c.fail("http.middleware_order", "%q is not served: jetgraph authenticates a request to your routes before your app and its middleware see it; set %q, or drop enable_custom_route_auth", MiddlewareFirst, AuthFirst)
	case !set:
		c.warn(fmt.Sprintf("http.middleware_order: unset, and served as %q: jetgraph authenticates a request to your routes before your app's middleware sees it (the reference servers' default runs the middleware first); set %q to say so", AuthFirst, AuthFirst))
		h.MiddlewareOrder = AuthFirst
	}
	return nil
}

func isRouteGroup(name string) bool {
	for _, g := range routeGroups {
		if string(g) == name {
			return true
		}
	}
	return false
}

// cors reads "http.cors": every field typed, an origin regex that compiles.
func (c *configParser) cors(raw json.RawMessage) (*CORS, error) {
	kvs, err := c.object("http.cors", raw)
	if err != nil {
		return nil, err
	}
	out := &CORS{}
	for _, kv := range kvs {
		k := "http.cors." + kv.key
		var dst any
		want := "a list of strings"
		switch kv.key {
		case "allow_origins":
			dst = &out.AllowOrigins
		case "allow_methods":
			dst = &out.AllowMethods
		case "allow_headers":
			dst = &out.AllowHeaders
		case "expose_headers":
			dst = &out.ExposeHeaders
		case "allow_credentials":
			dst, want = &out.AllowCredentials, "true or false"
		case "allow_origin_regex":
			dst, want = &out.AllowOriginRegex, "a regular expression"
		case "max_age":
			dst, want = &out.MaxAge, "a whole number of seconds, 0 or more"
		default:
			c.warn(k + ": unknown key, ignored (known: allow_origins, allow_origin_regex, allow_methods, allow_headers, allow_credentials, expose_headers, max_age)")
			continue
		}
		if err := json.Unmarshal(kv.value, dst); err != nil {
			return nil, c.fail(k, "must be %s", want)
		}
	}
	if out.MaxAge != nil && *out.MaxAge < 0 {
		return nil, c.fail("http.cors.max_age", "must be a whole number of seconds, 0 or more")
	}
	if out.AllowOriginRegex != "" {
		if _, err := regexp.Compile(out.AllowOriginRegex); err != nil {
			return nil, c.fail("http.cors.allow_origin_regex", "%s", fmt.Sprint(err))
		}
	}
	return out, nil
}
