package scenarios

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestStreamingSDK streams the agent graph through the official JS SDK in values, updates,
// messages-tuple and custom modes at once, and a stateless echo run in events mode.
func TestStreamingSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNodeModules(t)
	srv := startServer(t, t.TempDir())
	out := runNode(t, srv, "streaming.mjs", "modes")
	if !strings.Contains(out, "streaming modes scenario passed") {
		t.Fatalf("scenario output: %s", out)
	}
	out = runNode(t, srv, "streaming.mjs", "thread")
	if !strings.Contains(out, "streaming thread scenario passed") {
		t.Fatalf("thread stream scenario output: %s", out)
	}
}

// TestStreamingReconnect cuts the SDK's stream (a proxy in the script): the SDK must reconnect
// to the stream's Location with Last-Event-ID and get every event once, the same events an
// uncut join of the run gives. The cut falls inside an event's frame of a live run, or between
// two frames shaped from one bus message.
func TestStreamingReconnect(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNodeModules(t)
	srv := startServer(t, t.TempDir())
	for _, c := range []struct{ name, phase, passed string }{
		{"mid-event", "reconnect", "streaming reconnect scenario passed"},
		{"between-frames-of-one-message", "reconnect-shared-id", "streaming reconnect shared-id scenario passed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := runNode(t, srv, "streaming.mjs", c.phase)
			if !strings.Contains(out, c.passed) {
				t.Fatalf("scenario output: %s", out)
			}
			t.Log(strings.TrimSpace(out))
		})
	}
}

// TestStreamingJoinFromSecondProcess creates a long run through one process and joins its
// stream through another sharing the same log: the second process streams the rest of the run
// to its end.
func TestStreamingJoinFromSecondProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNodeModules(t)
	natsAddr := freeAddr(t)
	dataA := t.TempDir()
	a := startServerArgs(t, dataA, "--nats-listen", natsAddr)
	b := startServerArgs(t, t.TempDir(), "--nats-url", "nats://"+natsAddr, "--nats-creds", filepath.Join(dataA, "nats-user.nk"))

	const steps = 30
	thread := get(api(t, "POST", a.URL+"/threads", `{}`, 200), "thread_id").(string)
	body := fmt.Sprintf(`{"assistant_id":"agent","stream_mode":["values","custom"],`+
		`"input":{"messages":[{"role":"user","content":"foo"}],"sleep":{"steps":%d,"ms":100}}}`, steps)
	run := get(api(t, "POST", a.URL+"/threads/"+thread+"/runs", body, 200), "run_id").(string)
	// B sees the run running before the join: it joins the run in the middle.
	waitRun(t, b.URL, thread, run, "running")

	out := runNode(t, b, "streaming.mjs", "join", run, thread, fmt.Sprint(steps))
	if !strings.Contains(out, "streaming join scenario passed") {
		t.Fatalf("scenario output: %s", out)
	}
	t.Log(strings.TrimSpace(out))
	waitRun(t, a.URL, thread, run, "success")
	if got := threadMessages(t, a.URL, thread); strings.Join(got, "|") != "foo|begin|tool_call__begin|end" {
		t.Fatalf("thread messages: %q", got)
	}
}
