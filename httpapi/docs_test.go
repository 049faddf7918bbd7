package httpapi

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
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

// TestDocsServe checks that GET /docs and GET /openapi.json answer.
func TestDocsServe(t *testing.T) {
	h := New(Deps{Logger: slog.New(slog.DiscardHandler)}).Handler()
	get := func(path, accept string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if accept != "" {
			req.Header.Set(echo.HeaderAccept, accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s (Accept %q) = %d, want 200: %s", path, accept, rec.Code, rec.Body)
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

	isSpec("GET /openapi.json", get("/openapi.json", ""))
	isSpec("GET /docs (no Accept)", get("/docs", ""))
	isSpec("GET /docs (Accept JSON)", get("/docs", "application/json"))
	isSpec("GET /docs?format=json", get("/docs?format=json", "text/html"))

	rec := get("/docs", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	if ct := rec.Header().Get(echo.HeaderContentType); !strings.HasPrefix(ct, echo.MIMETextHTML) {
		t.Errorf("GET /docs (browser): Content-Type %q, want text/html", ct)
	}
	page := rec.Body.String()
	for _, want := range []string{"<title>jetgraph API</title>", "createThread", "/threads/{thread_id}", "ValidationError"} {
		if !strings.Contains(page, want) {
			t.Errorf("GET /docs (browser): page lacks %q", want)
		}
	}
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
