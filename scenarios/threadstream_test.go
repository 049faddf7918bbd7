package scenarios

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestThreadStreamSDK drives the thread-centric streaming protocol through the official JS SDK's
// ThreadStream: run.start, subscriptions by channel, an interrupt answered with input.respond,
// then a stream cut in the middle of a run and reopened with since, which must give the rest of
// the run with no gap and no duplicate; over SSE, and over the SDK's WebSocket transport.
func TestThreadStreamSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNodeModules(t)
	srv := startServer(t, t.TempDir())
	out := runNode(t, srv, "threadstream.mjs", "sse")
	if !strings.Contains(out, "thread stream sse scenario passed") {
		t.Fatalf("scenario output: %s", out)
	}
	t.Log(strings.TrimSpace(out))
	t.Setenv("NODE_OPTIONS", "--experimental-websocket") // Node 20's WebSocket (global from Node 22)
	out = runNode(t, srv, "threadstream.mjs", "websocket")
	if !strings.Contains(out, "thread stream websocket scenario passed") {
		t.Fatalf("scenario output: %s", out)
	}
}

// TestThreadStreamResumeOnSecondProcess cuts a thread's event stream served by one process and
// resumes it, with since, through another process sharing the log: the events' seq are
// positions on the log, not counters of a process.
func TestThreadStreamResumeOnSecondProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNodeModules(t)
	natsAddr := freeAddr(t)
	dataA := t.TempDir()
	a := startServerArgs(t, dataA, "--nats-listen", natsAddr)
	b := startServerArgs(t, t.TempDir(), "--nats-url", "nats://"+natsAddr, "--nats-creds", filepath.Join(dataA, "nats-user.nk"))
	out := runNode(t, a, "threadstream.mjs", "sse", b.URL)
	if !strings.Contains(out, "thread stream sse scenario passed") || !strings.Contains(out, "through another process") {
		t.Fatalf("scenario output: %s", out)
	}
	t.Log(strings.TrimSpace(out))
}
