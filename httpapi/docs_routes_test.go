package httpapi_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine/truncate"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/a2a"
	"github.com/jetgraph/jetgraph/httpapi/controlapi"
	"github.com/jetgraph/jetgraph/httpapi/tracingapi"
)

// operationKeys are the operation keys of an OpenAPI path item.
var operationKeys = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// newDocsServer is a server with every route the document describes: the routes of --dev and
// the tracing API's and the control plane's (their handlers, mounted on no service, are only
// listed here).
func newDocsServer() *httpapi.Server {
	return httpapi.New(httpapi.Deps{Logger: slog.New(slog.DiscardHandler), Truncate: &truncate.Service{},
		Tracing: tracingapi.New(nil), A2A: a2a.New(a2a.Deps{}), ControlPlane: controlapi.New(nil, nil, nil, nil)})
}

// echoParam matches an echo path parameter (":thread_id").
var echoParam = regexp.MustCompile(`:([^/]+)`)

// documentedOperations returns "METHOD /path" for every operation of the embedded document.
func documentedOperations(t *testing.T) map[string]bool {
	t.Helper()
	rec := httptest.NewRecorder()
	newDocsServer().Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	ops := map[string]bool{}
	for path, item := range doc.Paths {
		for key := range item {
			if slices.Contains(operationKeys, key) {
				ops[strings.ToUpper(key)+" "+path] = true
			}
		}
	}
	return ops
}

// registeredOperations returns "METHOD /path" for every route of the server, in OpenAPI path form.
func registeredOperations(t *testing.T) map[string]bool {
	t.Helper()
	s := newDocsServer()
	ops := map[string]bool{}
	for _, r := range s.Routes() {
		// echo's own routes: the 404 handler, and wildcard catch-alls (static files) that OpenAPI
		// cannot describe.
		if r.Method == echo.RouteNotFound || strings.Contains(r.Path, "*") {
			continue
		}
		ops[r.Method+" "+echoParam.ReplaceAllString(r.Path, "{$1}")] = true
	}
	if len(ops) == 0 {
		t.Fatal("the server registered no routes")
	}
	return ops
}

// TestDocsCoverEveryRoute keeps /docs true: every registered route is documented and every
// documented operation is registered.
func TestDocsCoverEveryRoute(t *testing.T) {
	documented, registered := documentedOperations(t), registeredOperations(t)
	var undocumented, unregistered []string
	for op := range registered {
		if !documented[op] {
			undocumented = append(undocumented, op)
		}
	}
	for op := range documented {
		if !registered[op] {
			unregistered = append(unregistered, op)
		}
	}
	slices.Sort(undocumented)
	slices.Sort(unregistered)
	var msg strings.Builder
	if len(undocumented) > 0 {
		fmt.Fprintf(&msg, "\n%d registered route(s) missing from httpapi/openapi.json:\n\t%s",
			len(undocumented), strings.Join(undocumented, "\n\t"))
	}
	if len(unregistered) > 0 {
		fmt.Fprintf(&msg, "\n%d operation(s) in httpapi/openapi.json that the server does not register:\n\t%s",
			len(unregistered), strings.Join(unregistered, "\n\t"))
	}
	if msg.Len() > 0 {
		t.Error(msg.String())
	}
}
