package scenarios

import "testing"

// TestPythonSDKBasics drives jetgraph with the official Python SDK's async and sync clients from
// the pinned virtual environment: a search, a thread, a waited run and a streamed one.
func TestPythonSDKBasics(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	srv := startServer(t, t.TempDir())
	if got := lastLine(runPython(t, srv, "sdk_basics.py")); got != "ok" {
		t.Fatalf("sdk_basics.py printed %q, want ok", got)
	}
}
