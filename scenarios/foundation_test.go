package scenarios

import (
	"encoding/json"
	"testing"
)

// TestFoundationSDK writes threads, assistants and store items through the
// official JS SDK, kills the server with SIGKILL, restarts it on the same data
// directory and checks that everything acknowledged is still there, exactly.
func TestFoundationSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNodeModules(t)
	data := t.TempDir()

	srv := startServer(t, data)
	acked := lastLine(runNode(t, srv, "foundation.mjs", "write"))
	if !json.Valid([]byte(acked)) {
		t.Fatalf("write phase printed no JSON: %q", acked)
	}
	srv.Kill9()

	srv = startServer(t, data)
	runNode(t, srv, "foundation.mjs", "verify", acked)
}
