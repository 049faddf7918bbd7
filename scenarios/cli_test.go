package scenarios

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// jetgraph runs the binary with args and returns its stdout; it fails the test on a non-zero exit
// unless wantErr, in which case it returns stderr.
func jetgraph(t *testing.T, wantErr bool, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, buildBinary(t), args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	switch {
	case wantErr && err == nil:
		t.Fatalf("jetgraph %v succeeded, want an error; stdout:\n%s", args, stdout.String())
	case wantErr:
		return stderr.String()
	case err != nil:
		t.Fatalf("jetgraph %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String()
}

// request sends a JSON body and decodes the JSON answer.
func request(t *testing.T, method, url, body string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %s %s", method, url, resp.Status, raw)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s %s: %v in %s", method, url, err, raw)
	}
	return v
}

// eventTypes parses JSON lines of events and returns their types in order.
func eventTypes(t *testing.T, out string) []string {
	t.Helper()
	var types []string
	var last float64
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e struct {
			Type string  `json:"type"`
			Seq  float64 `json:"seq"`
			ID   string  `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("not an event line: %q", line)
		}
		if e.Seq <= last || len(e.ID) != 26 {
			t.Fatalf("events out of log order or without a ULID: %q", out)
		}
		last = e.Seq
		types = append(types, e.Type)
	}
	return types
}

// TestCLI drives the commands a user runs: serve (with flags and with the environment), events
// (through a running server, following, and from the data folder directly), projections rebuild,
// and a graceful stop.
func TestCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	data := t.TempDir()
	srv := startServer(t, data)
	id := request(t, "POST", srv.URL+"/threads", `{"metadata":{"user":"a"}}`)["thread_id"].(string)
	request(t, "PATCH", srv.URL+"/threads/"+id, `{"metadata":{"k":1}}`)

	// The server holds the data folder, so events asks it.
	if got := eventTypes(t, jetgraph(t, false, "events", "thread", id, "--data", data)); strings.Join(got, ",") != "created,patched" {
		t.Fatalf("events through the server: %v", got)
	}

	// --follow prints new events as they are appended.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	follow := exec.CommandContext(ctx, buildBinary(t), "events", "thread", id, "--data", data, "--follow")
	out, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	for range 2 {
		lines.Scan()
	}
	request(t, "PATCH", srv.URL+"/threads/"+id, `{"metadata":{"k":2}}`)
	if !lines.Scan() || !strings.Contains(lines.Text(), `"k":2`) {
		t.Fatalf("follow did not print the new event: %q", lines.Text())
	}
	cancel()
	_ = follow.Wait()

	// The platform's own metrics are exposed.
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, m := range []string{"jetgraph_log_append_duration_seconds_count", `jetgraph_projection_lag_events{stream="JG_RUNTIME"}`, "jetgraph_http_request_duration_seconds_bucket"} {
		if !strings.Contains(string(metrics), m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}

	// A trace, to be found again after the rebuild.
	traceID := "0190b7a4-5b3c-7d2e-8f10-1a2b3c4d5e6f"
	traceBody := `{"id":"` + traceID + `","trace_id":"` + traceID + `","dotted_order":"20261122T101010000000Z` + traceID +
		`","name":"root","run_type":"chain","start_time":"2026-11-22T10:10:10.000000Z","inputs":{"q":1}}`
	if code := postStatus(t, srv.URL+"/tracing/runs", traceBody); code != http.StatusAccepted {
		t.Fatalf("POST /tracing/runs: %d", code)
	}
	waitStatus(t, srv.URL+"/tracing/runs/"+traceID, http.StatusOK)
	// Feedback on it, updated; a project deleted with its trace and feedback.
	fbID := request(t, "POST", srv.URL+"/tracing/feedback", `{"run_id":"`+traceID+`","key":"helpful","score":1}`)["id"].(string)
	request(t, "PATCH", srv.URL+"/tracing/feedback/"+fbID, `{"score":0.5}`)
	doomed := strings.ReplaceAll(strings.ReplaceAll(traceBody, traceID, "0190b7a4-5b3c-7d2e-8f10-1a2b3c4d5e70"), `"name":"root"`, `"name":"root","session_name":"doomed"`)
	if code := postStatus(t, srv.URL+"/tracing/runs", doomed); code != http.StatusAccepted {
		t.Fatalf("POST /tracing/runs: %d", code)
	}
	doomedRun := "/tracing/runs/0190b7a4-5b3c-7d2e-8f10-1a2b3c4d5e70"
	waitStatus(t, srv.URL+doomedRun, http.StatusOK)
	doomedProject := "/tracing/sessions/" + request(t, "GET", srv.URL+doomedRun, "")["session_id"].(string)
	doomedFb := "/tracing/feedback/" + request(t, "POST", srv.URL+"/tracing/feedback", `{"run_id":"0190b7a4-5b3c-7d2e-8f10-1a2b3c4d5e70","key":"k"}`)["id"].(string)
	del, _ := http.NewRequest("DELETE", srv.URL+doomedProject, nil)
	if resp, err := http.DefaultClient.Do(del); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE %s: %v %v", doomedProject, resp, err)
	}
	waitStatus(t, srv.URL+doomedFb, http.StatusNotFound)

	if msg := jetgraph(t, true, "projections", "rebuild", "--data", data); !strings.Contains(msg, "in use") {
		t.Fatalf("rebuild while serving: %q", msg)
	}

	// SIGTERM: a clean exit that leaves no serve.json behind.
	srv.Stop()
	if code := srv.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit code after SIGTERM = %d", code)
	}
	if _, err := os.Stat(filepath.Join(data, "serve.json")); !os.IsNotExist(err) {
		t.Fatalf("serve.json left behind: %v", err)
	}

	// Stopped: events reads the data folder itself.
	if got := eventTypes(t, jetgraph(t, false, "events", "thread", id, "--data", data)); strings.Join(got, ",") != "created,patched,patched" {
		t.Fatalf("events from the data folder: %v", got)
	}

	// An id without events, a data folder that does not exist: a non-zero exit, and nothing made.
	if msg := jetgraph(t, true, "events", "thread", "0190b7a4-5b3c-7d2e-8f10-000000000000", "--data", data); !strings.Contains(msg, "no events") {
		t.Fatalf("events of an unknown thread: %q", msg)
	}
	typo := filepath.Join(t.TempDir(), "typo")
	if msg := jetgraph(t, true, "events", "thread", id, "--data", typo); !strings.Contains(msg, "does not exist") {
		t.Fatalf("events on a missing data folder: %q", msg)
	}
	if _, err := os.Stat(typo); !os.IsNotExist(err) {
		t.Fatalf("events made the data folder: %v", err)
	}
	if out := jetgraph(t, false, "version"); !strings.HasPrefix(out, "jetgraph ") {
		t.Fatalf("version: %q", out)
	}

	jetgraph(t, false, "projections", "rebuild", "--data", data)
	srv = startServer(t, data)
	th := request(t, "GET", srv.URL+"/threads/"+id, "")
	if md := th["metadata"].(map[string]any); md["user"] != "a" || md["k"] != 2.0 {
		t.Fatalf("after rebuild: %v", th)
	}
	waitStatus(t, srv.URL+"/tracing/runs/"+traceID, http.StatusOK)
	if fb := request(t, "GET", srv.URL+"/tracing/feedback/"+fbID, ""); fb["score"] != 0.5 {
		t.Fatalf("feedback after rebuild: %v", fb)
	}
	for _, path := range []string{doomedRun, doomedProject, doomedFb} {
		waitStatus(t, srv.URL+path, http.StatusNotFound)
	}
	srv.Stop()
}

// TestEnvironmentConfiguresServe starts the binary configured only through JETGRAPH_* variables.
func TestEnvironmentConfiguresServe(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	addr := freeAddr(t)
	data := t.TempDir()
	cmd := exec.Command(buildBinary(t))
	cmd.Env = append(os.Environ(), "JETGRAPH_ADDR="+addr, "JETGRAPH_DATA="+data, "JETGRAPH_LOG_FORMAT=json")
	var logs syncBuffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{URL: "http://" + addr, Data: data, t: t, cmd: cmd, logs: &logs, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	t.Cleanup(s.Stop)
	s.waitReady()
	if _, err := os.Stat(filepath.Join(data, "projections.db")); err != nil {
		t.Fatalf("JETGRAPH_DATA not used: %v", err)
	}
	first, _, _ := strings.Cut(logs.String(), "\n")
	if !strings.HasPrefix(first, "{") {
		t.Fatalf("JETGRAPH_LOG_FORMAT=json not used: %q", first)
	}

	help := jetgraph(t, false, "--help")
	for _, want := range []string{"--addr", "--data", "--config", "--nats-url", "--nats-listen", "--log-format", "JETGRAPH_"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help does not mention %s", want)
		}
	}
	if msg := jetgraph(t, true, "--sync", "sometimes", "--data", t.TempDir()); !strings.Contains(msg, "--sync") {
		t.Errorf("bad --sync: %q", msg)
	}
}

// postStatus posts a JSON body and returns the status.
func postStatus(t *testing.T, url, body string) int {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitStatus polls url until it answers want (the tracing service answers writes before its
// projection has them), failing after 20 seconds.
func waitStatus(t *testing.T, url string, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	last := 0
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			last = resp.StatusCode
			resp.Body.Close()
			if last == want {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("GET %s: %d, want %d", url, last, want)
}
