package httpapi

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine/graphs"
)

// deploymentCORS applies langgraph.json's http.cors, which replaces jetgraph's own CORS
// settings, with the reference servers' semantics (Starlette's CORSMiddleware): a preflight is
// answered 200 "OK", or 400 "Disallowed CORS origin, method, headers" naming what is not
// allowed; methods default to GET, headers to the CORS-safelisted ones, max_age to 600 s; "*"
// allows every origin, method or header; with credentials the origin is echoed, never "*".
func deploymentCORS(cfg *graphs.CORS) echo.MiddlewareFunc {
	p := newCORSPolicy(cfg)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			origin := req.Header.Get("Origin")
			if origin == "" {
				return next(c)
			}
			if req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != "" {
				return p.preflight(c, origin)
			}
			h := c.Response().Header()
			for k, v := range p.simple {
				h.Set(k, v)
			}
			switch {
			case p.allOrigins && p.credentials, !p.allOrigins && p.allowed(origin):
				h.Set("Access-Control-Allow-Origin", origin)
			}
			h.Add("Vary", "Origin")
			return next(c)
		}
	}
}

// safelistedHeaders are the request headers a preflight always allows (Starlette's list).
var safelistedHeaders = []string{"Accept", "Accept-Language", "Content-Language", "Content-Type"}

// allMethods are the methods "*" allows.
var allMethods = []string{"DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "QUERY"}

type corsPolicy struct {
	origins                []string
	originRe               *regexp.Regexp
	methods                []string
	headers                []string // lower case, the safelisted included
	allOrigins, allHeaders bool
	credentials            bool
	simple, preflightHdrs  map[string]string
}

func newCORSPolicy(cfg *graphs.CORS) *corsPolicy {
	p := &corsPolicy{origins: cfg.AllowOrigins, methods: cfg.AllowMethods, credentials: cfg.AllowCredentials,
		simple: map[string]string{}, preflightHdrs: map[string]string{}}
	if p.methods == nil {
		p.methods = []string{http.MethodGet}
	}
	if slices.Contains(p.methods, "*") {
		p.methods = allMethods
	}
	if cfg.AllowOriginRegex != "" {
		p.originRe = regexp.MustCompile(`^(?:` + cfg.AllowOriginRegex + `)$`) // checked when the config was read
	}
	p.allOrigins = slices.Contains(cfg.AllowOrigins, "*")
	p.allHeaders = slices.Contains(cfg.AllowHeaders, "*")
	if p.allOrigins {
		p.simple["Access-Control-Allow-Origin"] = "*"
	}
	if p.credentials {
		p.simple["Access-Control-Allow-Credentials"] = "true"
		p.preflightHdrs["Access-Control-Allow-Credentials"] = "true"
	}
	if len(cfg.ExposeHeaders) > 0 {
		p.simple["Access-Control-Expose-Headers"] = strings.Join(cfg.ExposeHeaders, ", ")
	}
	maxAge := 600
	if cfg.MaxAge != nil {
		maxAge = *cfg.MaxAge
	}
	p.preflightHdrs["Vary"] = "Origin, Access-Control-Request-Method, Access-Control-Request-Headers, Access-Control-Request-Private-Network"
	if p.allOrigins && !p.credentials {
		p.preflightHdrs["Access-Control-Allow-Origin"] = "*"
	}
	p.preflightHdrs["Access-Control-Allow-Methods"] = strings.Join(p.methods, ", ")
	p.preflightHdrs["Access-Control-Max-Age"] = strconv.Itoa(maxAge)
	names := slices.Clone(safelistedHeaders)
	for _, h := range cfg.AllowHeaders {
		if !slices.Contains(names, h) {
			names = append(names, h)
		}
	}
	slices.Sort(names)
	if !p.allHeaders {
		p.preflightHdrs["Access-Control-Allow-Headers"] = strings.Join(names, ", ")
	}
	for _, n := range names {
		p.headers = append(p.headers, strings.ToLower(n))
	}
	return p
}

func (p *corsPolicy) allowed(origin string) bool {
	return p.allOrigins || (p.originRe != nil && p.originRe.MatchString(origin)) || slices.Contains(p.origins, origin)
}

func (p *corsPolicy) preflight(c echo.Context, origin string) error {
	req := c.Request()
	h := c.Response().Header()
	for k, v := range p.preflightHdrs {
		h.Set(k, v)
	}
	var failures []string
	if p.allowed(origin) {
		if !p.allOrigins || p.credentials {
			h.Set("Access-Control-Allow-Origin", origin)
		}
	} else {
		failures = append(failures, "origin")
	}
	if !slices.Contains(p.methods, req.Header.Get("Access-Control-Request-Method")) {
		failures = append(failures, "method")
	}
	if requested, ok := req.Header["Access-Control-Request-Headers"]; ok {
		if p.allHeaders {
			h.Set("Access-Control-Allow-Headers", strings.Join(requested, ","))
		} else {
			for _, name := range strings.Split(strings.Join(requested, ","), ",") {
				if !slices.Contains(p.headers, strings.ToLower(strings.TrimSpace(name))) {
					failures = append(failures, "headers")
					break
				}
			}
		}
	}
	if len(failures) > 0 {
		return c.String(http.StatusBadRequest, "Disallowed CORS "+strings.Join(failures, ", "))
	}
	return c.String(http.StatusOK, "OK")
}
