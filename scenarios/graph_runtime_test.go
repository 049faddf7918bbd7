package scenarios

import (
	"strings"
	"testing"
)

// TestGraphRuntimeSDK drives the graph runtime through the official JS SDK: runs, interrupts,
// state updates, resume, fork, subgraph state, copy and graph descriptions.
func TestGraphRuntimeSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNodeModules(t)
	srv := startServer(t, t.TempDir())
	out := runNode(t, srv, "graph_runtime.mjs")
	if !strings.Contains(out, "graph runtime scenario passed") {
		t.Fatalf("scenario output: %s", out)
	}
}
