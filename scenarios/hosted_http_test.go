package scenarios

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHostedHTTP serves langgraph.json's "http" in each language: the project's custom routes
// (a Starlette app, a Hono app) under mount_prefix, before the built-in routes, with a GET, a
// POST whose body streams in chunks, and server-sent events streamed as the app writes them;
// disable_store answering 404; http.cors's preflight as the Python reference server answers it
// (200 "OK" with the allowed origin echoed, 400 "Disallowed CORS origin, method"); and /info in
// the reference's shape. The answers were settled against `langgraph dev` with the same app.
func TestHostedHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	t.Run("python", func(t *testing.T) {
		userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
		srv := startServerArgs(t, t.TempDir(), "--config", "hosted/python/langgraph.http.json", "--python", userPython)
		checkDeploymentHTTP(t, srv.URL, "langgraph_py_version", "1.2.24")
		checkClientGone(t, srv)
		// The app's lifespan runs as under an ASGI server: its startup before the first request,
		// its shutdown when jetgraph stops the host.
		if !strings.Contains(srv.logs.String(), "visits app: lifespan startup") {
			t.Error("the app's lifespan startup did not run")
		}
		srv.Stop()
		if !strings.Contains(srv.logs.String(), "visits app: lifespan shutdown") {
			t.Errorf("the app's lifespan shutdown did not run when jetgraph stopped; its output:\n%s", srv.logs.String())
		}
	})
	t.Run("typescript", func(t *testing.T) {
		ensureTypeScriptProject(t)
		srv := startServerArgs(t, t.TempDir(), "--config", "hosted/typescript/langgraph.http.json")
		checkDeploymentHTTP(t, srv.URL, "langgraph_js_version", "1.7.3")
		checkClientGone(t, srv)
	})
}

// checkDeploymentHTTP drives the scenario's routes; /info names the hosted library's version
// under libraryKey.
func checkDeploymentHTTP(t *testing.T, base, libraryKey, library string) {
	t.Helper()
	get := func(path string, hdr ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	// The custom routes come up with the host: wait for the first.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		res, body := get("/api/hello?name=jet")
		if res.StatusCode == 200 {
			if strings.TrimSpace(body) != `{"hello":"jet"}` {
				t.Fatalf("GET /api/hello = %s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /api/hello = %d %s", res.StatusCode, body)
		}
		time.Sleep(300 * time.Millisecond)
	}
	for _, c := range []struct {
		path   string
		status int
		body   string
	}{
		{"/api/threads/custom", 200, `{"custom":"threads"}`}, // before the built-in /threads/{thread_id}
		{"/api/items/42", 200, `{"item":42}`},                // a path parameter with a pattern
		{"/api/items/4x", 404, `{"detail":"Not Found"}`},     // the pattern does not match: jetgraph's 404
		{"/api/store/items?namespace=a&key=b", 404, `{"detail":"Not Found"}`},
		{"/info", 404, `{"detail":"Not Found"}`}, // the API is under the prefix
		{"/ok", 200, ""},                         // health checks stay at the root
		{"/api/nothing", 404, `{"detail":"Not Found"}`},
	} {
		res, body := get(c.path)
		if res.StatusCode != c.status || (c.body != "" && strings.TrimSpace(body) != c.body) {
			t.Errorf("GET %s = %d %s, want %d %s", c.path, res.StatusCode, body, c.status, c.body)
		}
	}
	res, body := get("/api/info")
	var info struct {
		Version string          `json:"version"`
		Flags   map[string]bool `json:"flags"`
		Host    map[string]any  `json:"host"`
	}
	var libs map[string]any
	_ = json.Unmarshal([]byte(body), &libs)
	if err := json.Unmarshal([]byte(body), &info); err != nil || res.StatusCode != 200 || info.Version == "" ||
		!info.Flags["assistants"] || !info.Flags["crons"] || info.Flags["langsmith"] || info.Host["kind"] != "self-hosted" ||
		libs[libraryKey] != library {
		t.Errorf("GET /api/info = %d %s", res.StatusCode, body)
	}
	// Built-in routes are served under the prefix.
	sres, err := http.Post(base+"/api/assistants/search", "application/json", strings.NewReader(`{}`))
	if err != nil || sres.StatusCode != 200 {
		t.Errorf("POST /api/assistants/search: %v %v", err, sres)
	}

	// A body that arrives in chunks, over time.
	pr, pw := io.Pipe()
	go func() {
		for i := range 3 {
			fmt.Fprintf(pw, "chunk%d-", i)
			time.Sleep(100 * time.Millisecond)
		}
		pw.Close()
	}()
	eres, err := http.Post(base+"/api/echo", "text/plain", pr)
	if err != nil {
		t.Fatalf("POST /api/echo: %v", err)
	}
	eb, _ := io.ReadAll(eres.Body)
	eres.Body.Close()
	if eres.StatusCode != 200 || strings.TrimSpace(string(eb)) != `{"bytes":21,"upper":"CHUNK0-CHUNK1-CHUNK2-"}` {
		t.Errorf("POST /api/echo = %d %s", eres.StatusCode, eb)
	}

	// Server-sent events reach the client as the app writes them, not at the end.
	start := time.Now()
	tres, err := http.Get(base + "/api/ticks")
	if err != nil {
		t.Fatalf("GET /api/ticks: %v", err)
	}
	if ct := tres.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("GET /api/ticks: content type %q", ct)
	}
	sc := bufio.NewScanner(tres.Body)
	var data []string
	var first time.Duration
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			if len(data) == 0 {
				first = time.Since(start)
			}
			data = append(data, strings.TrimSpace(d))
		}
	}
	tres.Body.Close()
	total := time.Since(start)
	if strings.Join(data, ",") != "0,1,2" || total-first < 400*time.Millisecond {
		t.Errorf("GET /api/ticks: data %v, first after %s of %s (want it streamed)", data, first, total)
	}

	// http.cors, as the reference answers a preflight.
	pre := func(origin, method string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodOptions, base+"/api/hello", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", method)
		req.Header.Set("Access-Control-Request-Headers", "X-Custom, content-type")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("OPTIONS: %v", err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	res, body = pre("https://app.example", "POST")
	h := res.Header
	if res.StatusCode != 200 || body != "OK" || h.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		h.Get("Access-Control-Allow-Methods") != "GET, POST" || h.Get("Access-Control-Max-Age") != "120" ||
		h.Get("Access-Control-Allow-Credentials") != "true" ||
		h.Get("Access-Control-Allow-Headers") != "Accept, Accept-Language, Content-Language, Content-Type, x-custom" {
		t.Errorf("preflight = %d %q %v", res.StatusCode, body, h)
	}
	if res, body = pre("https://evil.example", "DELETE"); res.StatusCode != 400 || body != "Disallowed CORS origin, method" ||
		res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("refused preflight = %d %q %v", res.StatusCode, body, res.Header)
	}
	res, _ = get("/api/hello", "Origin", "https://app.example")
	if res.Header.Get("Access-Control-Allow-Origin") != "https://app.example" || res.Header.Get("Access-Control-Expose-Headers") != "x-total" {
		t.Errorf("simple CORS headers: %v", res.Header)
	}
}

// checkClientGone: a client that leaves an endless event stream ends the app's request (the
// app logs it; its log is jetgraph's).
func checkClientGone(t *testing.T, srv *server) {
	t.Helper()
	res, err := http.Get(srv.URL + "/api/forever")
	if err != nil {
		t.Fatalf("GET /api/forever: %v", err)
	}
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || line != "data: 0\n" {
		t.Fatalf("GET /api/forever: first line %q, %v", line, err)
	}
	res.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(srv.logs.String(), "forever: client gone") {
		if time.Now().After(deadline) {
			t.Fatal("the app's request went on after its client left")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestHostedHTTPConfigCheck: `jetgraph config check` loads http.app in its host as serve would,
// and names an app that does not load.
func TestHostedHTTPConfigCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	bin := buildBinary(t)
	out, err := exec.Command(bin, "config", "check", "--config", "hosted/python/langgraph.http.json", "--python", userPython).Output()
	if err != nil || strings.TrimSpace(string(out)) != "visits" {
		t.Fatalf("config check of a loading app: %v\n%s", err, out)
	}
	dir, err := filepath.Abs(filepath.Dir(hostedPythonConfig))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "langgraph.json")
	app := filepath.Join(dir, "visits", "app.py")
	body := `{"graphs": {"visits": "` + filepath.Join(dir, "visits", "graph.py") + `:graph"}, "http": {"app": "` + app + `:nope"}}`
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(bin, "config", "check", "--config", conf, "--python", userPython).CombinedOutput()
	want := "http.app: the app " + app + ":nope: AttributeError: " + app + " has no attribute 'nope'"
	if err == nil || !strings.Contains(string(out), want) {
		t.Fatalf("config check of an app that does not load: %v, want %q in:\n%s", err, want, out)
	}
}
