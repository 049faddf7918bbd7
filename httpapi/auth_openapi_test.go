package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/httpapitest"
)

// TestOpenAPIShowsTheHandlersSecurity: with an auth handler, /openapi.json carries its
// auth.openapi: the schemes beside the document's own (which the tracing API and the control
// plane name), the requirement on every guarded operation, the per-path ones over it, and none
// on the open routes; every guarded operation documents its 401; the document stays valid.
func TestOpenAPIShowsTheHandlersSecurity(t *testing.T) {
	oauth := map[string]any{"type": "oauth2", "flows": map[string]any{"password": map[string]any{
		"tokenUrl": "/token", "scopes": map[string]any{"me": "Read the user"}}}}
	custom := &graphs.AuthOpenAPI{
		SecuritySchemes: map[string]any{"OAuth2": oauth, "Partner": map[string]any{"type": "apiKey", "in": "header", "name": "x-partner"}},
		Security:        []any{map[string]any{"OAuth2": []any{"me"}}},
		Paths:           map[string]map[string][]any{"/threads/{thread_id}": {"GET": {map[string]any{"Partner": []any{}}}}},
	}
	for _, tc := range []struct {
		name   string
		custom *graphs.AuthOpenAPI
		search any // the security of POST /threads/search
		thread any // of GET /threads/{thread_id}
	}{
		{"auth.openapi", custom, jsonOf(t, custom.Security), jsonOf(t, custom.Paths["/threads/{thread_id}"]["GET"])},
		{"none", nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httpapi.New(httpapi.Deps{Auth: customHandler{}, AuthOpenAPI: tc.custom})
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
			raw, _ := io.ReadAll(rec.Body)
			if rec.Code != 200 {
				t.Fatalf("GET /openapi.json: %d %s", rec.Code, raw)
			}
			if _, err := httpapitest.Load(raw); err != nil {
				t.Fatalf("the served document is invalid: %v", err)
			}
			var doc map[string]any
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			schemes, _ := field(doc, "components", "securitySchemes").(map[string]any)
			if tc.custom != nil && (jsonText(t, schemes["OAuth2"]) != jsonText(t, oauth) || schemes["Partner"] == nil) {
				t.Errorf("the handler's schemes are not in the document: %v", schemes)
			}
			if tc.custom == nil && (schemes["OAuth2"] != nil || schemes["Partner"] != nil) {
				t.Errorf("schemes without auth.openapi: %v", schemes)
			}
			if len(schemes) == 0 || schemes[firstControlScheme(t, doc)] == nil {
				t.Errorf("the control plane's scheme is gone: %v", schemes)
			}
			if got := field(doc, "paths", "/threads/search", "post", "security"); jsonText(t, got) != jsonText(t, tc.search) {
				t.Errorf("POST /threads/search security %s, want %s", jsonText(t, got), jsonText(t, tc.search))
			}
			if got := field(doc, "paths", "/threads/{thread_id}", "get", "security"); jsonText(t, got) != jsonText(t, tc.thread) {
				t.Errorf("GET /threads/{thread_id} security %s, want %s", jsonText(t, got), jsonText(t, tc.thread))
			}
			for _, p := range []string{"/ok", "/info", "/openapi.json"} {
				if got := field(doc, "paths", p, "get", "security"); got != nil {
					t.Errorf("GET %s is open but documents security %v", p, got)
				}
			}
			if field(doc, "paths", "/threads/search", "post", "responses", "403") == nil {
				t.Error("POST /threads/search does not document the 403 of the handler's refusals")
			}
			if field(doc, "paths", "/threads/search", "post", "responses", "401") == nil || field(doc, "paths", "/ok", "get", "responses", "401") != nil {
				t.Errorf("401 of /threads/search: %v; of /ok: %v", field(doc, "paths", "/threads/search", "post", "responses", "401"),
					field(doc, "paths", "/ok", "get", "responses", "401"))
			}
		})
	}
}

// firstControlScheme is the scheme the control plane's GET /v2/deployments requires.
func firstControlScheme(t *testing.T, doc map[string]any) string {
	t.Helper()
	sec, _ := field(doc, "paths", "/v2/deployments", "get", "security").([]any)
	for _, req := range sec {
		for name := range req.(map[string]any) {
			return name
		}
	}
	t.Fatal("GET /v2/deployments documents no security")
	return ""
}

// customHandler is tokenRules named as the user's own handler (custom), as a hosted or Go
// program's handler is.
type customHandler struct{ tokenRules }

func (customHandler) Methods() []string { return []string{"custom"} }
