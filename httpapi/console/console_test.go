package console_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/httpapi/console"
)

func get(t *testing.T, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	http.StripPrefix("/console", console.Handler()).ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

// TestServe checks the page and its modules are served with their types, the security headers on
// every answer (404s included), and nothing outside the assets.
func TestServe(t *testing.T) {
	for _, tc := range []struct {
		path, wantType string
		status         int
	}{
		{"/console/", "text/html", 200},
		{"/console/index.html", "text/html", 200},
		{"/console/style.css", "text/css", 200},
		{"/console/dist/main.js", "text/javascript", 200},
		{"/console/dist/pages/threads.js", "text/javascript", 200},
		{"/console/dist/nope.js", "", 404},
		{"/console/package.json", "", 404},
		{"/console/src/main.ts", "", 404},
		{"/console/../console.go", "", 404},
		{"/console/dist/../../console.go", "", 404},
	} {
		rec := get(t, http.MethodGet, tc.path)
		if rec.Code != tc.status {
			t.Errorf("GET %s: %d, want %d", tc.path, rec.Code, tc.status)
		}
		if ct := rec.Header().Get("Content-Type"); tc.wantType != "" && !strings.HasPrefix(ct, tc.wantType) {
			t.Errorf("GET %s: Content-Type %q, want %s", tc.path, ct, tc.wantType)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); csp != console.CSP {
			t.Errorf("GET %s: Content-Security-Policy %q", tc.path, csp)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no X-Content-Type-Options: nosniff", tc.path)
		}
	}
	if rec := get(t, http.MethodPost, "/console/"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /console/: %d, want 405", rec.Code)
	}
	if rec := get(t, http.MethodHead, "/console/dist/main.js"); rec.Code != 200 || rec.Body.Len() != 0 {
		t.Errorf("HEAD /console/dist/main.js: %d with %d bytes", rec.Code, rec.Body.Len())
	}
}

// TestCSPStrict keeps the policy strict: no 'unsafe-*', no wildcard, nothing from elsewhere.
func TestCSPStrict(t *testing.T) {
	for _, bad := range []string{"unsafe", "*", "http:", "https:", "blob:"} {
		if strings.Contains(console.CSP, bad) {
			t.Errorf("CSP contains %q: %s", bad, console.CSP)
		}
	}
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "require-trusted-types-for 'script'"} {
		if !strings.Contains(console.CSP, want) {
			t.Errorf("CSP lacks %q", want)
		}
	}
}

// markupSinks are the ways of turning a string into markup or code; the console never uses them
// (values from states and traces are text).
var markupSinks = regexp.MustCompile(`\.(inner|outer)HTML\b|insertAdjacentHTML|document\.write|\beval\(|new Function\(|createContextualFragment|DOMParser|setAttribute\(\s*["'](on|srcdoc)|\.srcdoc\b`)

// TestNoMarkupSinks fails when a source or compiled module of the console uses a markup sink, or
// when the page has an inline script or style.
func TestNoMarkupSinks(t *testing.T) {
	n := 0
	for _, dir := range []string{"web/src", "web/dist"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			n++
			if m := markupSinks.Find(b); m != nil {
				t.Errorf("%s uses %s", p, m)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 10 {
		t.Fatalf("found only %d console files", n)
	}
	page, err := os.ReadFile("web/index.html")
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]|<style|\sstyle=|\son[a-z]+=`).Match(page) {
		t.Errorf("index.html has an inline script, style or handler:\n%s", page)
	}
}
