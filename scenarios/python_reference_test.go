package scenarios

import "testing"

// TestPythonMatchesTheReference runs python/reference_settled.py's cases against jetgraph: each
// asserts what the Python reference server answered the same script on an equivalent graph.
func TestPythonMatchesTheReference(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	srv := startServer(t, t.TempDir())
	for _, tc := range []struct{ name, script string }{
		{"a run cancelled mid-node leaves the run and the thread interrupted, the node next", "cancel_mid_node"},
		{"messages carry name null and no example", "message_keys"},
		{"an interrupted run's last values chunk is the state with __interrupt__", "interrupt_values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lastLine(runPython(t, srv, "reference_settled.py", tc.script)); got != "ok" {
				t.Fatalf("reference_settled.py %s printed %q, want ok", tc.script, got)
			}
		})
	}
}
