package graphs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHTTPConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "app.py"), []byte("app = None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "langgraph.json")
	conf := `{"graphs": {"a": "echo"}, "http": {"app": "./app.py:app", "disable_store": true, "disable_a2a": true,
		"disable_mcp": false, "disable_webhooks": true, "mount_prefix": "/my/api/", "enable_custom_route_auth": true,
		"middleware_order": "auth_first", "configurable_headers": {"includes": ["x-*"]},
		"cors": {"allow_origins": ["https://a.example"], "allow_origin_regex": "https://.*\\.b\\.example", "allow_methods": ["*"],
		"allow_headers": ["x-k"], "allow_credentials": true, "expose_headers": ["x-total"], "max_age": 60}}}`
	var warnings []string
	p, err := Catalog{Warn: func(w string) { warnings = append(warnings, w) }}.ParseProject(file, []byte(conf), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	h := p.HTTP
	if h.App == nil || h.App.Language != LanguagePython || h.App.Attr != "app" || h.App.Path != filepath.Join(dir, "app.py") {
		t.Errorf("app = %+v", h.App)
	}
	if !h.Disabled[RouteStore] || !h.Disabled[RouteA2A] || h.Disabled[RouteMCP] || h.Disabled[RouteThreads] || !h.DisableWebhooks {
		t.Errorf("toggles = %v, webhooks %v", h.Disabled, h.DisableWebhooks)
	}
	if h.MountPrefix != "/my/api" || !h.EnableCustomRouteAuth || h.MiddlewareOrder != AuthFirst {
		t.Errorf("prefix %q, auth %v, order %q", h.MountPrefix, h.EnableCustomRouteAuth, h.MiddlewareOrder)
	}
	if ch := h.ConfigurableHeaders; ch == nil || len(ch.Include) != 1 || ch.Include[0] != "x-*" || !ch.Allows("x-user") || ch.Allows("authorization") {
		t.Errorf("configurable_headers = %+v", ch)
	}
	c := h.CORS
	if c == nil || c.AllowOrigins[0] != "https://a.example" || c.AllowMethods[0] != "*" || !c.AllowCredentials || *c.MaxAge != 60 || c.ExposeHeaders[0] != "x-total" {
		t.Errorf("cors = %+v", c)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
}

func TestHTTPConfigInvalid(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "langgraph.json")
	for _, c := range []struct{ http, want string }{
		{`[]`, `http: must be an object`},
		{`{"app": 3}`, `http.app: must be ./path/file.py:attribute (a Starlette or FastAPI app) or ./path/file.ts:attribute (a Hono app)`},
		{`{"app": "./missing.py:app"}`, `http.app: "./missing.py:app": no file ` + filepath.Join(dir, "missing.py")},
		{`{"disable_store": "yes"}`, `http.disable_store: must be true or false`},
		{`{"mount_prefix": "api"}`, `http.mount_prefix: "api" must be a path starting with '/', such as "/my-deployment/api"`},
		{`{"mount_prefix": "/noauth"}`, `http.mount_prefix: "/noauth": /noauth is reserved by the reference servers`},
		{`{"middleware_order": "first"}`, `http.middleware_order: must be "middleware_first" or "auth_first"`},
		{`{"cors": {"allow_origins": "*"}}`, `http.cors.allow_origins: must be a list of strings`},
		{`{"cors": {"max_age": -1}}`, `http.cors.max_age: must be a whole number of seconds, 0 or more`},
		{`{"cors": {"allow_origin_regex": "("}}`, `http.cors.allow_origin_regex: error parsing regexp: missing closing ): ` + "`(`"},
	} {
		_, err := parseNoEnv(file, []byte(`{"graphs": {"a": "echo"}, "http": `+c.http+`}`))
		if err == nil || err.Error() != file+": "+c.want {
			t.Errorf("http %s: got %v, want %s", c.http, err, c.want)
		}
	}
}

// FuzzHTTPConfig holds the "http" parser to never panicking, and to a mount prefix that is a
// clean path whenever it accepts one.
func FuzzHTTPConfig(f *testing.F) {
	for _, s := range []string{`{"mount_prefix": "/a/b"}`, `{"cors": {"allow_origins": ["*"], "max_age": 3}}`,
		`{"disable_runs": true, "middleware_order": null}`, `{"app": "x.y:z"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		p, err := parseNoEnv("langgraph.json", []byte(`{"graphs": {"a": "echo"}, "http": `+s+`}`))
		if err != nil || p.HTTP == nil {
			return
		}
		if mp := p.HTTP.MountPrefix; mp != "" && (!strings.HasPrefix(mp, "/") || strings.HasSuffix(mp, "/")) {
			t.Errorf("mount prefix %q accepted", mp)
		}
	})
}

// parseNoEnv parses with the default catalog and no environment.
func parseNoEnv(file string, raw []byte) (*Project, error) {
	return Catalog{}.ParseProject(file, raw, func(string) (string, bool) { return "", false })
}
