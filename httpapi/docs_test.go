package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/httpapi/httpapitest"
)

// openapiMethods are the operation keys of an OpenAPI path item.
var openapiMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// TestDocsDocument checks the document's shape: OpenAPI 3.1, one unique operationId, a summary and
// a tag per operation, path parameters declared, and every $ref resolvable.
func TestDocsDocument(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(openapiJSON, &doc); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", doc["openapi"])
	}
	if info, _ := doc["info"].(map[string]any); info["title"] != "jetgraph" {
		t.Errorf("info.title = %v, want jetgraph", info["title"])
	}
	paths, _ := doc["paths"].(map[string]any)
	if len(paths) == 0 {
		t.Fatal("openapi.json has no paths")
	}
	ids := map[string]string{}
	for path, rawItem := range paths {
		item, _ := rawItem.(map[string]any)
		for _, m := range openapiMethods {
			rawOp, ok := item[m]
			if !ok {
				continue
			}
			where := strings.ToUpper(m) + " " + path
			o, _ := rawOp.(map[string]any)
			id, _ := o["operationId"].(string)
			switch {
			case id == "":
				t.Errorf("%s: no operationId", where)
			case ids[id] != "":
				t.Errorf("%s: operationId %q already used by %s", where, id, ids[id])
			default:
				ids[id] = where
			}
			if s, _ := o["summary"].(string); s == "" {
				t.Errorf("%s: no summary", where)
			}
			if tags, _ := o["tags"].([]any); len(tags) == 0 {
				t.Errorf("%s: no tag", where)
			}
			if resp, _ := o["responses"].(map[string]any); len(resp) == 0 {
				t.Errorf("%s: no responses", where)
			}
			declared := map[string]bool{}
			for _, params := range []any{item["parameters"], o["parameters"]} {
				list, _ := params.([]any)
				for _, p := range list {
					if p, _ := p.(map[string]any); p["in"] == "path" {
						declared[fmt.Sprint(p["name"])] = true
					}
				}
			}
			for _, name := range regexp.MustCompile(`\{([^}]+)\}`).FindAllStringSubmatch(path, -1) {
				if !declared[name[1]] {
					t.Errorf("%s: path parameter %q is not declared", where, name[1])
				}
			}
		}
	}
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["$ref"].(string); ok && !resolves(doc, r) {
				t.Errorf("%s: $ref %q does not resolve", at, r)
			}
			for k, e := range x {
				walk(e, at+"/"+k)
			}
		case []any:
			for i, e := range x {
				walk(e, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	walk(doc, "#")
}

// resolves reports whether a local JSON pointer names a value of doc.
func resolves(doc map[string]any, ref string) bool {
	p, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return false
	}
	var cur any = doc
	for _, part := range strings.Split(p, "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		if cur, ok = m[part]; !ok {
			return false
		}
	}
	return true
}

// TestDocsServe checks that GET /docs and GET /openapi.json answer, and that the page is Swagger UI
// served from the binary: it refers to no other server, and each of its assets answers with its
// content type.
func TestDocsServe(t *testing.T) {
	h := httpapitest.Handler(t, openapiJSON, New(Deps{Logger: slog.New(slog.DiscardHandler)}).Handler())
	get := func(path, accept string, want int) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if accept != "" {
			req.Header.Set(echo.HeaderAccept, accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Fatalf("GET %s (Accept %q) = %d, want %d: %s", path, accept, rec.Code, want, rec.Body)
		}
		return rec
	}
	isSpec := func(what string, rec *httptest.ResponseRecorder) {
		t.Helper()
		if ct := rec.Header().Get(echo.HeaderContentType); !strings.HasPrefix(ct, echo.MIMEApplicationJSON) {
			t.Errorf("%s: Content-Type %q, want JSON", what, ct)
		}
		var doc struct {
			OpenAPI string `json:"openapi"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || doc.OpenAPI != "3.1.0" {
			t.Errorf("%s: not the OpenAPI document (openapi %q, err %v)", what, doc.OpenAPI, err)
		}
	}

	isSpec("GET /openapi.json", get("/openapi.json", "", 200))
	isSpec("GET /docs (no Accept)", get("/docs", "", 200))
	isSpec("GET /docs (Accept JSON)", get("/docs", "application/json", 200))
	isSpec("GET /docs?format=json", get("/docs?format=json", "text/html", 200))

	rec := get("/docs", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", 200)
	if ct := rec.Header().Get(echo.HeaderContentType); !strings.HasPrefix(ct, echo.MIMETextHTML) {
		t.Errorf("GET /docs (browser): Content-Type %q, want text/html", ct)
	}
	page := rec.Body.String()
	if !strings.Contains(page, "<title>jetgraph API</title>") || !strings.Contains(page, `id="swagger-ui"`) {
		t.Errorf("GET /docs (browser): not the Swagger UI page:\n%s", page)
	}
	wantTypes := map[string]string{".js": "text/javascript", ".css": "text/css"}
	refs := regexp.MustCompile(`(?:src|href)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(page, -1)
	var assets []string
	for _, m := range refs {
		ref := m[1]
		name, ok := strings.CutPrefix(ref, "/docs/assets/")
		if !ok {
			t.Errorf("GET /docs: the page refers to %q, not to an asset of the binary", ref)
			continue
		}
		assets = append(assets, name)
		rec := get(ref, "", 200)
		if ct := rec.Header().Get(echo.HeaderContentType); !strings.HasPrefix(ct, wantTypes[path.Ext(name)]) || wantTypes[path.Ext(name)] == "" {
			t.Errorf("GET %s: Content-Type %q", ref, ct)
		}
		if want, _ := docsFiles.ReadFile("docs/assets/" + name); rec.Body.Len() == 0 || !bytes.Equal(rec.Body.Bytes(), want) {
			t.Errorf("GET %s: %d bytes, not the embedded file", ref, rec.Body.Len())
		}
	}
	slices.Sort(assets)
	if want := []string{"docs.js", "swagger-ui-bundle.js", "swagger-ui.css"}; !slices.Equal(assets, want) {
		t.Errorf("the page loads %v, want %v", assets, want)
	}
	start := get("/docs/assets/docs.js", "", 200).Body.String()
	for _, want := range []string{`fetch("/openapi.json")`, "validatorUrl: null"} {
		if !strings.Contains(start, want) {
			t.Errorf("docs.js lacks %s", want)
		}
	}
	if ct := get("/docs/assets/LICENSE", "", 200).Header().Get(echo.HeaderContentType); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("GET /docs/assets/LICENSE: Content-Type %q, want text/plain", ct)
	}
	get("/docs/assets/nope.js", "", 404)
	get("/docs/assets/..%2Findex.html", "", 404)
}

func TestDocsAcceptsHTML(t *testing.T) {
	for accept, want := range map[string]bool{
		"":                                  false,
		"application/json":                  false,
		"*/*":                               false,
		"text/html":                         true,
		"TEXT/HTML; charset=utf-8":          true,
		"application/json, text/html;q=0.5": true,
		"text/html;q=0, */*":                false,
	} {
		if got := acceptsHTML(accept); got != want {
			t.Errorf("acceptsHTML(%q) = %v, want %v", accept, got, want)
		}
	}
}
