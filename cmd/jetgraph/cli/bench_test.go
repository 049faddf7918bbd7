package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLangGraph fakes POST /threads, POST /threads/{id}/runs/wait and POST /runs/wait: this
// tests the client tool, not a server. Thread ids are "t<n>" in creation order; the run on every
// thread whose number is in failWith answers with that failure.
type fakeLangGraph struct {
	t        *testing.T
	apiKey   string
	failWith map[int]string // thread number -> "500" or "run-error"

	threads, waits, stateless atomic.Int64
	inFlight                  atomic.Int64
	mu                        sync.Mutex
	maxInFlight               int64
}

func (f *fakeLangGraph) enter() func() {
	n := f.inFlight.Add(1)
	f.mu.Lock()
	f.maxInFlight = max(f.maxInFlight, n)
	f.mu.Unlock()
	return func() { f.inFlight.Add(-1) }
}

func (f *fakeLangGraph) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer f.enter()()
	if r.Method != http.MethodPost {
		http.Error(w, "method", http.StatusMethodNotAllowed)
		return
	}
	if f.apiKey != "" && r.Header.Get("x-api-key") != f.apiKey {
		http.Error(w, `{"detail":"bad key"}`, http.StatusForbidden)
		return
	}
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	path := r.URL.Path
	switch {
	case path == "/threads":
		n := f.threads.Add(1)
		fmt.Fprintf(w, `{"thread_id":"t%d","status":"idle","metadata":{}}`, n)
	case path == "/runs/wait" || strings.HasPrefix(path, "/threads/") && strings.HasSuffix(path, "/runs/wait"):
		var req struct {
			AssistantID string          `json:"assistant_id"`
			Input       json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.AssistantID != "echo" || !strings.Contains(string(req.Input), `"hi"`) {
			f.t.Errorf("run body %s", body)
		}
		time.Sleep(time.Millisecond) // let cycles overlap; nothing is asserted on time
		if path == "/runs/wait" {
			f.stateless.Add(1)
			fmt.Fprint(w, `{"messages":[{"type":"ai","content":"hi"}]}`)
			return
		}
		f.waits.Add(1)
		n, _ := strconv.Atoi(strings.TrimPrefix(strings.Split(path, "/")[2], "t"))
		switch f.failWith[n] {
		case "500":
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"detail":"boom"}`)
		case "run-error":
			fmt.Fprint(w, `{"__error__":{"error":"ValueError","message":"bad input"}}`)
		default:
			fmt.Fprint(w, `{"messages":[{"type":"ai","content":"hi"}]}`)
		}
	default:
		http.NotFound(w, r)
	}
}

// bench runs `jetgraph bench runs args...` and returns stdout and the command's error.
func bench(t *testing.T, args ...string) (string, error) {
	t.Helper()
	stdout, _, err := run(t, Program{}, append([]string{"bench", "runs"}, args...)...)
	return stdout, err
}

func TestBenchRunsJSON(t *testing.T) {
	fake := &fakeLangGraph{t: t, apiKey: "k1"}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	out, err := bench(t, "--url", srv.URL+"/", "--n", "40", "--concurrency", "4", "--warmup", "3",
		"--api-key", "k1", "--json")
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if rep.Mode != "threads" || rep.N != 40 || rep.Completed != 40 || rep.OK != 40 || rep.Errors != 0 ||
		rep.Concurrency != 4 || rep.Warmup != 3 || rep.URL != srv.URL || rep.Assistant != "echo" {
		t.Errorf("report %+v", rep)
	}
	if rep.Thread == nil || rep.Thread.Count != 40 || rep.Wait.Count != 40 || rep.Cycle.Count != 40 {
		t.Errorf("latency counts: thread %+v wait %+v cycle %+v", rep.Thread, rep.Wait, rep.Cycle)
	}
	if rep.RunsPerSecond <= 0 || rep.ElapsedSeconds <= 0 || rep.Wait.P50 <= 0 ||
		rep.Wait.P50 > rep.Wait.P90 || rep.Wait.P90 > rep.Wait.P99 || rep.Wait.P99 > rep.Wait.Max ||
		rep.Cycle.P50 < rep.Wait.P50 || rep.ErrorSamples == nil {
		t.Errorf("report %+v", rep)
	}
	if got := fake.threads.Load(); got != 43 {
		t.Errorf("%d threads created, want 43 (40 + 3 warm-up)", got)
	}
	if got := fake.waits.Load(); got != 43 {
		t.Errorf("%d runs waited for, want 43", got)
	}
	if fake.stateless.Load() != 0 {
		t.Error("stateless runs in threads mode")
	}
	if fake.maxInFlight > 4 || fake.maxInFlight < 1 {
		t.Errorf("%d requests in flight at once, want 1..4", fake.maxInFlight)
	}
}

func TestBenchRunsStatelessTable(t *testing.T) {
	fake := &fakeLangGraph{t: t}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	out, err := bench(t, "--url", srv.URL, "--n", "25", "-c", "3", "--stateless")
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	if fake.threads.Load() != 0 || fake.waits.Load() != 0 || fake.stateless.Load() != 30 {
		t.Errorf("threads %d, thread runs %d, stateless runs %d; want 0, 0, 30",
			fake.threads.Load(), fake.waits.Load(), fake.stateless.Load())
	}
	if fake.maxInFlight > 3 {
		t.Errorf("%d requests in flight at once, want at most 3", fake.maxInFlight)
	}
	for _, want := range []string{
		"jetgraph bench runs: " + srv.URL, "POST /runs/wait", "cycles 25 (+5 warm-up), concurrency 3",
		"runs/s", "ok", "errors", "latency (ms)", "p50", "p90", "p99", "runs/wait", "cycle",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "threads ") || strings.Contains(out, "first errors") {
		t.Errorf("stateless table shows thread latency or errors:\n%s", out)
	}
	t.Logf("\n%s", out)
}

func TestBenchRunsCountsErrors(t *testing.T) {
	// Threads 1-2 are warm-up; 5, 6 and 9 fail on the server, 7 ends in a run error.
	fake := &fakeLangGraph{t: t, failWith: map[int]string{1: "500", 5: "500", 6: "500", 9: "500", 7: "run-error"}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	out, err := bench(t, "--url", srv.URL, "--n", "20", "-c", "2", "--warmup", "2")
	if err == nil || !strings.Contains(err.Error(), "4 of 20 cycles failed") {
		t.Errorf("error %v, want 4 of 20 cycles failed", err)
	}
	for _, want := range []string{
		"ok", "16", "errors", "4", "first errors:",
		`POST /threads/{id}/runs/wait: 500 Internal Server Error: {"detail":"boom"}`,
		`POST /threads/{id}/runs/wait: run failed: {"error":"ValueError","message":"bad input"}`,
		"threads",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// Identical errors are shown once.
	if n := strings.Count(out, "boom"); n != 1 {
		t.Errorf("the 500 error is shown %d times:\n%s", n, out)
	}
	t.Logf("\n%s", out)
}

func TestBenchRunsRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--n", "0"},
		{"--concurrency", "0"},
		{"--input", "{not json"},
		{"--url", "localhost:8123"},
		{"--timeout", "0s"},
		{"--assistant", ""},
		{"extra-arg"},
	} {
		if out, err := bench(t, args...); err == nil {
			t.Errorf("bench %v succeeded:\n%s", args, out)
		}
	}
}

func TestBenchRunsStopsWhenWarmupFails(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens
	_, err := bench(t, "--url", url, "--n", "1000000", "--warmup", "2")
	if err == nil || !strings.Contains(err.Error(), "every warm-up cycle failed") || !strings.Contains(err.Error(), "POST /threads") {
		t.Errorf("error %v", err)
	}
}

func TestBenchRunsTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/threads" {
			fmt.Fprint(w, `{"thread_id":"t1"}`)
			return
		}
		select { // hang until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	_, err := bench(t, "--url", srv.URL, "--n", "3", "--warmup", "1", "--timeout", "50ms")
	if err == nil || !strings.Contains(err.Error(), "timed out after 50ms") {
		t.Errorf("error %v, want a timeout", err)
	}
}

func TestSummarise(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	s := summarise(ds)
	if s.Count != 100 || s.P50 != 50 || s.P90 != 90 || s.P99 != 99 || s.Max != 100 || s.Mean != 50.5 {
		t.Errorf("summarise = %+v", s)
	}
	if s := summarise(nil); s.Count != 0 || s.Max != 0 {
		t.Errorf("summarise(nil) = %+v", s)
	}
	if s := summarise([]time.Duration{1500 * time.Microsecond}); s.P50 != 1.5 || s.P99 != 1.5 {
		t.Errorf("summarise(one) = %+v", s)
	}
}
