package scenarios

import (
	"net/http"
	"strings"
	"testing"
)

// TestA2AClient drives jetgraph's A2A endpoint with the official A2A JS client 0.3 (A2A 0.3):
// the agent card, message/send, message/stream, tasks/get, tasks/list, tasks/resubscribe
// refused, tasks/cancel, a dynamic and a static interrupt each continued as the same task.
func TestA2AClient(t *testing.T) {
	runA2AScenario(t, "a2a.mjs", "a2a scenario passed")
}

// TestA2AClientV1 drives it with the newest official A2A JS client (1.x, A2A 1.0) and its
// default factory: the same steps in 1.0's methods and shapes, on the same endpoint.
func TestA2AClientV1(t *testing.T) {
	runA2AScenario(t, "a2a_v1.mjs", "a2a 1.0 scenario passed")
}

// runA2AScenario runs script against a fresh server and checks it says passed.
func runA2AScenario(t *testing.T, script, passed string) {
	t.Helper()
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNodeModules(t)
	srv := startServer(t, t.TempDir())
	out := runNode(t, srv, script)
	if !strings.Contains(out, passed) {
		t.Fatalf("scenario output: %s", out)
	}
}

// TestA2ADisabled checks that --disable-a2a takes the endpoint and the card away.
func TestA2ADisabled(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	srv := startServerArgs(t, t.TempDir(), "--disable-a2a")
	for _, path := range []string{"/a2a/echo/.well-known/agent-card.json"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, res.StatusCode)
		}
	}
	res, err := http.Post(srv.URL+"/a2a/echo", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("POST /a2a/echo: %d, want 404", res.StatusCode)
	}
}
