package graphs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuthOpenAPIConfig reads auth.openapi (camelCase or snake_case schemes, the default
// security, per-path security), auth.disable_studio_auth, and refuses wrong shapes where they are.
func TestAuthOpenAPIConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "langgraph.json")
	if err := os.WriteFile(filepath.Join(dir, "auth.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	parse := func(auth string) (*AuthConfig, []string, error) {
		var warnings []string
		p, err := Catalog{Warn: func(w string) { warnings = append(warnings, w) }}.ParseProject(file,
			[]byte(`{"graphs": {"a": "echo"}, "auth": {"path": "./auth.py:auth", `+auth+`}}`), func(string) (string, bool) { return "", false })
		if err != nil {
			return nil, warnings, err
		}
		return p.Auth, warnings, nil
	}
	a, warnings, err := parse(`"disable_studio_auth": true, "openapi": {"securitySchemes": {"OAuth2": {"type": "oauth2"}},
		"security": [{"OAuth2": ["me"]}], "paths": {"/threads": {"post": [{"OAuth2": ["write"]}]}}}`)
	if err != nil {
		t.Fatal(err)
	}
	o := a.OpenAPI
	if o == nil || o.SecuritySchemes["OAuth2"] == nil || len(o.Security) != 1 || len(o.Paths["/threads"]["post"]) != 1 || len(warnings) != 0 {
		t.Fatalf("openapi %+v, warnings %v", o, warnings)
	}
	if a, _, err := parse(`"openapi": {"security_schemes": {"Key": {"type": "apiKey", "in": "header", "name": "x-key"}}, "security": []}`); err != nil ||
		a.OpenAPI.SecuritySchemes["Key"] == nil || a.OpenAPI.Security == nil || len(a.OpenAPI.Security) != 0 {
		t.Errorf("snake_case schemes and an empty security: %+v, %v", a, err)
	}
	if _, warnings, err := parse(`"disable_studio_auth": false`); err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "auth.disable_studio_auth: false is not served") {
		t.Errorf("disable_studio_auth false: %v, warnings %v", err, warnings)
	}
	for _, c := range []struct{ auth, want string }{
		{`"disable_studio_auth": "yes"`, `auth.disable_studio_auth: must be true or false`},
		{`"openapi": {"securitySchemes": {"OAuth2": "oauth2"}}`, `auth.openapi.securitySchemes.OAuth2: must be an OpenAPI security scheme object`},
		{`"openapi": {"security": [["OAuth2"]]}`, `auth.openapi.security[0]: must be a security requirement object ({scheme name: [scopes]})`},
		{`"openapi": {"paths": {"/threads": {"post": ["x"]}}}`, `auth.openapi.paths./threads.post[0]: must be a security requirement object ({scheme name: [scopes]})`},
	} {
		if _, _, err := parse(c.auth); err == nil || err.Error() != file+": "+c.want {
			t.Errorf("auth %s: got %v, want %s", c.auth, err, c.want)
		}
	}
	if _, _, err := parse(`"openapi": []`); err == nil || !strings.HasPrefix(err.Error(), file+": auth.openapi: must be {") {
		t.Errorf("openapi as a list: %v", err)
	}
}

// TestMiddlewareOrder: with custom routes authenticated, middleware_first is refused (jetgraph
// authenticates before the app's middleware runs), auth_first served, and the order unset served
// as auth_first with a warning; without custom-route auth the order changes nothing.
func TestMiddlewareOrder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "langgraph.json")
	if err := os.WriteFile(filepath.Join(dir, "app.py"), []byte("app = None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		http, err, warning, order string
	}{
		{`"enable_custom_route_auth": true, "middleware_order": "middleware_first"`, `http.middleware_order: "middleware_first" is not served: jetgraph authenticates a request to your routes before your app and its middleware see it; set "auth_first", or drop enable_custom_route_auth`, "", ""},
		{`"enable_custom_route_auth": true, "middleware_order": "auth_first"`, "", "", AuthFirst},
		{`"enable_custom_route_auth": true`, "", `http.middleware_order: unset, and served as "auth_first"`, AuthFirst},
		{`"middleware_order": "middleware_first"`, "", "", MiddlewareFirst},
	} {
		var warnings []string
		p, err := Catalog{Warn: func(w string) { warnings = append(warnings, w) }}.ParseProject(file,
			[]byte(`{"graphs": {"a": "echo"}, "http": {"app": "./app.py:app", `+c.http+`}}`), func(string) (string, bool) { return "", false })
		switch {
		case c.err != "":
			if err == nil || err.Error() != file+": "+c.err {
				t.Errorf("%s: got %v, want %s", c.http, err, c.err)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", c.http, err)
			continue
		}
		if p.HTTP.MiddlewareOrder != c.order {
			t.Errorf("%s: order %q, want %q", c.http, p.HTTP.MiddlewareOrder, c.order)
		}
		if (c.warning == "") != (len(warnings) == 0) || c.warning != "" && !strings.Contains(warnings[0], c.warning) {
			t.Errorf("%s: warnings %v, want %q", c.http, warnings, c.warning)
		}
	}
}
