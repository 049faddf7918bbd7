package scenarios

import (
	"strings"
	"testing"
)

// TestCronsSDK drives crons through the official JS SDK's crons client against the binary.
func TestCronsSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNodeModules(t)
	srv := startServer(t, t.TempDir())
	out := runNode(t, srv, "crons.mjs")
	if !strings.Contains(out, "crons scenario passed") {
		t.Fatalf("scenario output: %s", out)
	}
}
