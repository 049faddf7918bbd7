package scenarios

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fastFailover makes a crashed worker's runs come back within seconds.
var fastFailover = []string{"--lease-ttl", "2s", "--dispatch-ack-wait", "3s", "--grace-period", "5s"}

// api sends a JSON request and decodes the answer; any status but want fails the test.
func api(t *testing.T, method, url, body string, want int) any {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	var v any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &v)
	}
	return v
}

func get(v any, key string) any {
	m, _ := v.(map[string]any)
	return m[key]
}

// waitRun polls a run until it has status, failing after a minute.
func waitRun(t *testing.T, base, thread, run, status string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/threads/" + thread + "/runs/" + run)
		if err == nil {
			var v any
			_ = json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
			if last, _ = get(v, "status").(string); last == status {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("run %s is %q, never %q", run, last, status)
}

// threadMessages returns the text of the thread's messages.
func threadMessages(t *testing.T, base, thread string) []string {
	t.Helper()
	st := api(t, "GET", base+"/threads/"+thread+"/state", "", 200)
	var out []string
	ms, _ := get(get(st, "values"), "messages").([]any)
	for _, m := range ms {
		out = append(out, fmt.Sprint(get(m, "content")))
	}
	return out
}

// TestRunSurvivesKill9 kills the server in the middle of a run; after a restart on the same data
// folder the run is taken over and finishes, its events each once.
func TestRunSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	data := t.TempDir()
	srv := startServerArgs(t, data, fastFailover...)
	thread := get(api(t, "POST", srv.URL+"/threads", `{}`, 200), "thread_id").(string)
	run := get(api(t, "POST", srv.URL+"/threads/"+thread+"/runs",
		`{"assistant_id":"delay","input":{"messages":"x","delay":3000}}`, 200), "run_id").(string)
	waitRun(t, srv.URL, thread, run, "running")
	srv.Kill9()

	srv = startServerArgs(t, data, fastFailover...)
	waitRun(t, srv.URL, thread, run, "success")
	if got := threadMessages(t, srv.URL, thread); strings.Join(got, "|") != "x|finished after 3000ms" {
		t.Fatalf("messages after the takeover: %q", got)
	}
	runs := api(t, "GET", srv.URL+"/threads/"+thread+"/runs", "", 200).([]any)
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
}

// TestTwoProcessesShareTheLog runs 200 runs over 20 threads on two processes sharing one log, and
// kills one of them halfway: every run finishes exactly once and each thread keeps its order.
func TestTwoProcessesShareTheLog(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	natsAddr := freeAddr(t)
	dataA := t.TempDir()
	a := startServerArgs(t, dataA, append([]string{"--nats-listen", natsAddr}, fastFailover...)...)
	b := startServerArgs(t, t.TempDir(), append([]string{"--nats-url", "nats://" + natsAddr, "--nats-creds", filepath.Join(dataA, "nats-user.nk")}, fastFailover...)...)
	const threads, perThread = 20, 10
	ids := make([]string, threads)
	for i := range ids {
		ids[i] = get(api(t, "POST", a.URL+"/threads", `{}`, 200), "thread_id").(string)
	}
	type created struct{ thread, run string }
	var mu sync.Mutex
	var all []created
	// Runs are created through both processes, each thread's in order.
	for j := 0; j < perThread; j++ {
		var wg sync.WaitGroup
		for i, id := range ids {
			base := []string{a.URL, b.URL}[(i+j)%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf(`{"assistant_id":"delay","input":{"messages":"r%d","delay":40}}`, j)
				run := get(api(t, "POST", base+"/threads/"+id+"/runs", body, 200), "run_id").(string)
				mu.Lock()
				all = append(all, created{id, run})
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	// Kill B once about half the runs have finished.
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		done := 0
		for _, id := range ids {
			runs := api(t, "GET", a.URL+"/threads/"+id+"/runs?status=success&limit=100", "", 200).([]any)
			done += len(runs)
		}
		if done >= threads*perThread/2 {
			break
		}
	}
	b.Kill9()

	for _, c := range all {
		waitRun(t, a.URL, c.thread, c.run, "success")
	}
	for _, id := range ids {
		got := threadMessages(t, a.URL, id)
		var want []string
		for j := 0; j < perThread; j++ {
			want = append(want, fmt.Sprintf("r%d", j), "finished after 40ms")
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("thread %s messages:\n got %q\nwant %q", id, got, want)
		}
	}
}

// takeoverBound is the longest the runs of a killed process may wait for another process with
// the default flags: the lease and the dispatch acknowledgement expire within 3 seconds of the
// last renewal; the rest is room for a loaded CI machine. (With the former defaults it took
// about 28 seconds.)
const takeoverBound = 10 * time.Second

// TestTakeoverWithDefaultFlags kills -9 one of two processes sharing a log while it executes
// runs: with the default flags the other process resumes each of them (attempt 2) within
// takeoverBound, and every run finishes once.
func TestTakeoverWithDefaultFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	natsAddr := freeAddr(t)
	dataA := t.TempDir()
	a := startServerArgs(t, dataA, "--nats-listen", natsAddr)
	b := startServerArgs(t, t.TempDir(), "--nats-url", "nats://"+natsAddr, "--nats-creds", filepath.Join(dataA, "nats-user.nk"))
	bWorker := fmt.Sprintf("-%d-", b.cmd.Process.Pid)

	// Runs go to whichever process pulls them first: create them until B executes some.
	type inFlight struct{ thread, run string }
	var onB, all []inFlight
	for len(onB) < 2 && len(all) < 20 {
		thread := get(api(t, "POST", a.URL+"/threads", `{}`, 200), "thread_id").(string)
		run := get(api(t, "POST", a.URL+"/threads/"+thread+"/runs",
			`{"assistant_id":"delay","input":{"messages":"x","delay":8000}}`, 200), "run_id").(string)
		all = append(all, inFlight{thread, run})
		waitRun(t, a.URL, thread, run, "running")
		if started := runStarts(t, a.URL, thread); len(started) == 1 && strings.Contains(started[0].Worker, bWorker) {
			onB = append(onB, inFlight{thread, run})
		}
	}
	if len(onB) == 0 {
		t.Fatalf("none of %d runs went to the second process", len(all))
	}
	killed := time.Now()
	b.Kill9()

	var longest time.Duration
	for _, r := range onB {
		var resumed runStart
		deadline := time.Now().Add(90 * time.Second)
		for resumed.Attempt < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("run %s was never taken over", r.run)
			}
			if started := runStarts(t, a.URL, r.thread); len(started) > 1 {
				resumed = started[len(started)-1]
			} else {
				time.Sleep(50 * time.Millisecond)
			}
		}
		took := resumed.Time.Sub(killed)
		t.Logf("run %s resumed by %s %s after the kill", r.run, resumed.Worker, took.Round(time.Millisecond))
		longest = max(longest, took)
		if resumed.Attempt != 2 || strings.Contains(resumed.Worker, bWorker) {
			t.Fatalf("run %s resumed as attempt %d by %s", r.run, resumed.Attempt, resumed.Worker)
		}
	}
	if longest > takeoverBound {
		t.Errorf("the runs of the killed process were taken over after %s, more than %s", longest, takeoverBound)
	}
	for _, r := range all {
		waitRun(t, a.URL, r.thread, r.run, "success")
		if got := threadMessages(t, a.URL, r.thread); strings.Join(got, "|") != "x|finished after 8000ms" {
			t.Fatalf("thread %s messages after the takeover: %q", r.thread, got)
		}
	}
}

// runStart is a run_started event of a thread's log.
type runStart struct {
	Time    time.Time
	Attempt int
	Worker  string
}

// runStarts reads a thread's log through base and returns its run_started events in order.
func runStarts(t *testing.T, base, thread string) []runStart {
	t.Helper()
	resp, err := http.Get(base + "/events/thread/" + thread)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []runStart
	dec := json.NewDecoder(resp.Body)
	for {
		var e struct {
			Type string    `json:"type"`
			Time time.Time `json:"time"`
			Data struct {
				Attempt int    `json:"attempt"`
				Worker  string `json:"worker"`
			} `json:"data"`
		}
		if err := dec.Decode(&e); err != nil {
			if err != io.EOF {
				t.Fatalf("events of %s: %v", thread, err)
			}
			return out
		}
		if e.Type == "run_started" {
			out = append(out, runStart{e.Time, e.Data.Attempt, e.Data.Worker})
		}
	}
}
