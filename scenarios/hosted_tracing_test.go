package scenarios

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHostedTracing runs the `traced` graph of each hosted project (a LangChain fake chat model
// that streams its answer and reports its usage) with the official SDK, and reads the run's
// trace from jetgraph's tracing API with the langsmith client: by default the hosts' langsmith
// library posts the graph's spans into the run's own trace, its model call with tokens, cost and
// time to first token, and jetgraph does not trace the run's steps a second time
// (python/hosted_tracing.py).
func TestHostedTracing(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	t.Run("python", func(t *testing.T) {
		userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
		srv := startServerArgs(t, t.TempDir(), "--config", hostedPythonConfig, "--python", userPython)
		if got := lastLine(runPython(t, srv, "hosted_tracing.py", "traced", "jetgraph")); got != "ok" {
			t.Fatalf("hosted_tracing.py printed %q, want ok", got)
		}
	})
	t.Run("typescript", func(t *testing.T) {
		ensureTypeScriptProject(t)
		srv := startServerArgs(t, t.TempDir(), "--config", hostedTypeScriptConfig)
		if got := lastLine(runPython(t, srv, "hosted_tracing.py", "traced", "jetgraph")); got != "ok" {
			t.Fatalf("hosted_tracing.py printed %q, want ok", got)
		}
	})
}

// TestHostedTracingUserSettings: a user's own LangSmith settings (here in langgraph.json's env)
// win. The host's langsmith library posts to the user's endpoint with the user's key (a real
// HTTP listener that records what arrives), and jetgraph's trace of the run keeps its own spans
// of the run and its steps, without the model call.
func TestHostedTracingUserSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	rec := &recorder{}
	listener := httptest.NewServer(rec)
	defer listener.Close()
	userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	// The user's project beside a config of its own: the graph's folder, linked.
	project := t.TempDir()
	visits, err := filepath.Abs(filepath.Join(filepath.Dir(hostedPythonConfig), "visits"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(visits, filepath.Join(project, "visits")); err != nil {
		t.Fatal(err)
	}
	// The key comes from jetgraph's environment, as graph.json keeps no secrets.
	t.Setenv("LANGSMITH_API_KEY", "users-own-key")
	conf, err := json.Marshal(map[string]any{
		"graphs": map[string]string{"traced": "./visits/traced.py:graph"},
		"env": map[string]string{"LANGSMITH_ENDPOINT": listener.URL, "LANGSMITH_API_KEY": "${LANGSMITH_API_KEY}",
			"LANGSMITH_TRACING": "true", "LANGSMITH_DISABLE_RUN_COMPRESSION": "true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(project, "langgraph.json")
	if err := os.WriteFile(path, conf, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServerArgs(t, t.TempDir(), "--config", path, "--python", userPython)
	if got := lastLine(runPython(t, srv, "hosted_tracing.py", "traced", "user")); got != "ok" {
		t.Fatalf("hosted_tracing.py printed %q, want ok", got)
	}
	for deadline := time.Now().Add(30 * time.Second); !rec.has("MeteredChatModel", "new_token"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the model call never reached the user's endpoint; it received: %s", rec.summary())
		}
	}
	if keys := rec.keys(); len(keys) != 1 || !keys["users-own-key"] {
		t.Errorf("the user's endpoint was sent the keys %v, want only the user's", keys)
	}
	if strings.Contains(srv.logs.String(), "users-own-key") {
		t.Error("jetgraph logged the user's key")
	}
}

// recorder is a tracing endpoint that answers every request with an empty JSON object and
// keeps what arrived.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	method, path, key string
	body              []byte
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.reqs = append(r.reqs, recorded{req.Method, req.URL.Path, req.Header.Get("X-Api-Key"), body})
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}"))
}

// has reports whether one posted body holds every one of words.
func (r *recorder) has(words ...string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.reqs {
		if q.method != http.MethodPost {
			continue
		}
		all := true
		for _, w := range words {
			all = all && bytes.Contains(q.body, []byte(w))
		}
		if all {
			return true
		}
	}
	return false
}

func (r *recorder) keys() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]bool{}
	for _, q := range r.reqs {
		out[q.key] = true
	}
	return out
}

func (r *recorder) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, q := range r.reqs {
		b.WriteString(q.method + " " + q.path + "; ")
	}
	return b.String()
}
