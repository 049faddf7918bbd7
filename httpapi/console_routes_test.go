package httpapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/console"
)

// refuseAll is an authenticator that knows nobody.
type refuseAll struct{}

func (refuseAll) Authenticate(*http.Request) (engine.User, error) {
	return engine.User{}, engine.E(engine.Op("auth"), engine.Unauthorized, "no key")
}
func (refuseAll) Methods() []string { return []string{"api-key"} }

// TestConsoleRoutes checks the console is served without a credential when the runtime requires
// one (its assets hold no data), with its security headers, that / and /console lead to it, and
// that the API it calls still asks for the key.
func TestConsoleRoutes(t *testing.T) {
	s := httpapi.New(httpapi.Deps{Logger: slog.New(slog.DiscardHandler), Auth: refuseAll{}})
	for _, tc := range []struct {
		method, path string
		status       int
		location     string
	}{
		{"GET", "/", http.StatusFound, "/console/"},
		{"GET", "/console", http.StatusFound, "/console/"},
		{"GET", "/console/", http.StatusOK, ""},
		{"GET", "/console/dist/main.js", http.StatusOK, ""},
		{"HEAD", "/console/style.css", http.StatusOK, ""},
		{"GET", "/console/dist/missing.js", http.StatusNotFound, ""},
		{"POST", "/threads/search", http.StatusUnauthorized, ""},
	} {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, strings.NewReader("{}")))
		if rec.Code != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, rec.Code, tc.status)
		}
		if got := rec.Header().Get("Location"); got != tc.location {
			t.Errorf("%s %s: Location %q, want %q", tc.method, tc.path, got, tc.location)
		}
		if strings.HasPrefix(tc.path, "/console/") && rec.Header().Get("Content-Security-Policy") != console.CSP {
			t.Errorf("%s %s: no console CSP", tc.method, tc.path)
		}
	}
}

// TestConsoleMountPrefix checks that with http.mount_prefix the console stays at /console/ and
// its page tells it where the runtime is.
func TestConsoleMountPrefix(t *testing.T) {
	s := httpapi.New(httpapi.Deps{Logger: slog.New(slog.DiscardHandler), HTTP: &graphs.HTTPConfig{MountPrefix: "/my-api"}})
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/console/", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /console/ with mount_prefix: %d", rec.Code)
	}
	if want := `<meta name="jetgraph-runtime-prefix" content="/my-api">`; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("the page does not say %s:\n%s", want, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/console/dist/api.js", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("GET /console/dist/api.js with mount_prefix: %d", rec.Code)
	}
}
