package scenarios

import "testing"

// TestPythonThreadStream drives the thread-centric protocol with the official Python SDK's
// client.threads.stream (python/threadstream.py), over SSE and its WebSocket transport: a
// caller's thread id that does not exist yet (the SDK watches its lifecycle before run.start),
// a static interrupt (weather) and a dynamic one (agent) answered with thread.run.respond,
// thread.messages, thread.values, and thread.tool_calls of a root-level tool node (react).
func TestPythonThreadStream(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	srv := startServer(t, t.TempDir())
	if got := lastLine(runPython(t, srv, "threadstream.py")); got != "ok" {
		t.Fatalf("threadstream.py printed %q, want ok", got)
	}
}
