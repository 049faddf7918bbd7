package scenarios

import (
	"net/http"
	"strings"
	"testing"
)

// TestA2AClient drives jetgraph's A2A endpoint with the official A2A JS client: the agent
// card, message/send, message/stream, tasks/get, tasks/cancel, an interrupt and its resume.
func TestA2AClient(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNodeModules(t)
	srv := startServer(t, t.TempDir())
	out := runNode(t, srv, "a2a.mjs")
	if !strings.Contains(out, "a2a scenario passed") {
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
