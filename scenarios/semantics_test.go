package scenarios

import (
	"strings"
	"testing"
)

// TestRunSemanticsSDK drives, through the official JS SDK, runs that continue from a checkpoint
// as a chat UI does: resume (root and subgraph), regenerate from a checkpoint, command.update.
func TestRunSemanticsSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNodeModules(t)
	srv := startServer(t, t.TempDir())
	out := runNode(t, srv, "semantics.mjs")
	if !strings.Contains(out, "semantics scenario passed") {
		t.Fatalf("scenario output: %s", out)
	}
}
