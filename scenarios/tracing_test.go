package scenarios

import (
	"strings"
	"testing"
)

// TestTracingLangsmithClient drives the tracing service with the official langsmith client:
// traceable traces through multipart and through /runs/batch, read back with the client's own
// calls (tokens, cost, time to first token), the engine's own trace of an agent run, and the
// client's v2 reads (client.runs.query() and retrieve()).
func TestTracingLangsmithClient(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNodeModules(t)
	srv := startServer(t, t.TempDir())
	out := runNode(t, srv, "tracing.mjs")
	if !strings.Contains(out, "tracing scenario passed") {
		t.Fatalf("scenario output: %s", out)
	}
}
