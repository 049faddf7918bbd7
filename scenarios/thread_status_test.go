package scenarios

import (
	"strings"
	"testing"
)

// TestThreadStatusSDK drives, through the official JS SDK against `jetgraph serve --dev`, the
// thread statuses clients show (cancelled runs, state updates on interrupted threads), joins
// from the start with Last-Event-ID -1, prune, and the dev server's truncation.
func TestThreadStatusSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNodeModules(t)
	srv := startServerArgs(t, t.TempDir(), "--dev")
	out := runNode(t, srv, "thread_status.mjs")
	if !strings.Contains(out, "thread status scenario passed") {
		t.Fatalf("scenario output: %s", out)
	}
}
