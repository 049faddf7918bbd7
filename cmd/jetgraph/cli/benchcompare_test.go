package cli

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// requestLog records which server each POST /threads reached, in order, across servers.
type requestLog struct {
	mu    sync.Mutex
	names []string
}

func (l *requestLog) serve(name string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/threads" {
			l.mu.Lock()
			l.names = append(l.names, name)
			l.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// turns is the sequence of servers as they took turns (consecutive requests to one merged).
func (l *requestLog) turns() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, n := range l.names {
		if len(out) == 0 || out[len(out)-1] != n {
			out = append(out, n)
		}
	}
	return out
}

// busy spins 3 ms of wall time on each request, so that a server's CPU time grows by far more
// than the 10 ms granularity of /proc's times over a few dozen requests.
func busy(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for start := time.Now(); time.Since(start) < 3*time.Millisecond; {
		}
		next.ServeHTTP(w, r)
	})
}

func compare(t *testing.T, args ...string) (string, error) {
	t.Helper()
	stdout, _, err := run(t, Program{}, append([]string{"bench", "compare"}, args...)...)
	return stdout, err
}

func TestBenchCompareInterleavesAndReadsCPU(t *testing.T) {
	var log requestLog
	a, b := &fakeLangGraph{t: t}, &fakeLangGraph{t: t}
	srvA := httptest.NewServer(log.serve("a", busy(a)))
	defer srvA.Close()
	srvB := httptest.NewServer(log.serve("b", b))
	defer srvB.Close()
	// Server a runs in this process and spins on every request: its tree is this process (the
	// client included); b has no pid.
	pid := strconv.Itoa(os.Getpid())
	nameB := "echo@" + strings.TrimPrefix(srvB.URL, "http://")
	out, err := compare(t, "-n", "30", "-c", "3", "--burst", "10", "--warmup", "2", "--json",
		"--target", "name=a,url="+srvA.URL+",pid="+pid, "--target", "url="+srvB.URL+",assistant=echo",
		"--ratio", "a/"+nameB, "--ratio", nameB+"/a")
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, out)
	}
	var rep compareReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if rep.Mode != "threads" || rep.N != 30 || rep.Burst != 10 || rep.Rounds != 3 || len(rep.Targets) != 2 {
		t.Fatalf("report %+v", rep)
	}
	ra, rb := rep.Targets[0], rep.Targets[1]
	if ra.Name != "a" || rb.Name != "echo@"+strings.TrimPrefix(srvB.URL, "http://") {
		t.Errorf("names %q, %q", ra.Name, rb.Name)
	}
	for _, r := range rep.Targets {
		if r.OK != 30 || r.Errors != 0 || r.Cycle.Count != 30 || r.RunsPerSecond <= 0 ||
			r.Cycle.P50 <= 0 || r.Cycle.P50 > r.Cycle.P95 || r.Cycle.P95 > r.Cycle.P99 {
			t.Errorf("target %s: %+v", r.Name, r)
		}
	}
	if a.threads.Load() != 32 || b.threads.Load() != 32 {
		t.Errorf("threads made: a %d, b %d; want 32 each (30 + 2 warm-up)", a.threads.Load(), b.threads.Load())
	}
	// Warm-up a then b; then rounds a,b / b,a / a,b: the targets took turns, not one after the
	// other ("abab"), a burst of b followed by one of b in the next round.
	if got := strings.Join(log.turns(), ""); got != "ababab" {
		t.Errorf("the servers took turns %q, want %q", got, "ababab")
	}
	switch {
	case runtime.GOOS != "linux": // no /proc: no CPU, and the report says why
		if ra.CPUSeconds != nil || !strings.Contains(rep.CPUNote, "CPU not measured") {
			t.Errorf("target a's CPU without /proc: %+v, note %q", ra, rep.CPUNote)
		}
	case ra.PID != os.Getpid() || ra.CPUSeconds == nil || ra.CPUMsPerRun == nil || *ra.CPUMsPerRun <= 0 || ra.CPUPercent == nil || ra.Procs < 1 ||
		ra.RootMsPerRun == nil || *ra.RootMsPerRun <= 0 || *ra.RootMsPerRun > *ra.CPUMsPerRun || rep.CPUNote != "":
		t.Errorf("target a's CPU: %+v", ra)
	}
	if len(rep.Ratios) != 2 || rep.Ratios[0].A != "a" || rep.Ratios[0].B != nameB || rep.Ratios[1].A != nameB ||
		rep.Ratios[0].RunsPerSecond != math.Round(ra.RunsPerSecond/rb.RunsPerSecond*100)/100 ||
		rep.Ratios[0].CPUPerRun != nil || rep.Ratios[1].CPUPerRun != nil {
		t.Errorf("ratios %+v (b has no CPU, so neither has a CPU ratio)", rep.Ratios)
	}
	if rb.PID != 0 || rb.CPUSeconds != nil || rb.CPUMsPerRun != nil || rb.RootMsPerRun != nil {
		t.Errorf("target b has no pid but a CPU: %+v", rb)
	}
}

func TestBenchCompareTable(t *testing.T) {
	fail := &fakeLangGraph{t: t, failWith: map[int]string{4: "500"}}
	srvA := httptest.NewServer(busy(&fakeLangGraph{t: t}))
	defer srvA.Close()
	srvB := httptest.NewServer(busy(fail))
	defer srvB.Close()
	pid := strconv.Itoa(os.Getpid())
	out, err := compare(t, "-n", "8", "-c", "2", "--burst", "3", "--warmup", "1", "--ratio", "first/second",
		"--target", "name=first,url="+srvA.URL+",pid="+pid, "--target", "name=second,url="+srvB.URL+",pid="+pid)
	if err == nil || !strings.Contains(err.Error(), "1 of 16 cycles failed") {
		t.Errorf("error %v, want 1 of 16 cycles failed", err)
	}
	for _, want := range []string{
		"2 targets, 8 cycles each (+1 warm-up), concurrency 2, bursts of 3 over 3 rounds",
		"runs/s", "p50 ms", "p95 ms", "p99 ms", "wait p99", "cpu ms/run", "(root pid)", "first ", "second ", "first errors of second:", "boom",
		"first  " + srvA.URL + ", assistant echo, CPU of pid " + pid, "first / second: ", "x the runs/s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if runtime.GOOS == "linux" && (!strings.Contains(out, "x the runs/s, ") || !strings.Contains(out, "x the CPU per run")) {
		t.Errorf("the ratio lacks the CPU per run:\n%s", out)
	}
	t.Logf("\n%s", out)
}

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want compareTarget
		err  string
	}{
		{spec: "name=jg,url=http://127.0.0.1:8123,assistant=ts_echo,pid=42",
			want: compareTarget{Name: "jg", URL: "http://127.0.0.1:8123", Assistant: "ts_echo", PID: 42}},
		{spec: "url=http://127.0.0.1:2024", want: compareTarget{Name: "echo@127.0.0.1:2024", URL: "http://127.0.0.1:2024", Assistant: "echo"}},
		{spec: " url=http://h:1 , name=x ", want: compareTarget{Name: "x", URL: "http://h:1", Assistant: "echo"}},
		{spec: "name=x", err: "url is required"},
		{spec: "url=http://h:1,pid=0", err: `pid "0" is not a process id`},
		{spec: "url=http://h:1,pid=abc", err: "is not a process id"},
		{spec: "url=http://h:1,port=3", err: `unknown key "port"`},
		{spec: "url=http://h:1,url=http://h:2", err: "url given twice"},
		{spec: "http://h:1", err: "is not key=value"},
		{spec: "url=http://h:1,name=", err: "is not key=value"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			got, err := parseTarget(tc.spec, "echo")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseTarget = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestBenchCompareRejects(t *testing.T) {
	srv := httptest.NewServer(&fakeLangGraph{t: t})
	defer srv.Close()
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{args: nil, err: "--target is required"},
		{args: []string{"--target", "url=" + srv.URL, "--burst", "0"}, err: "--burst must be at least 1"},
		{args: []string{"--target", "name=a,url=" + srv.URL, "--target", "name=a,url=" + srv.URL}, err: "two targets are named a"},
		{args: []string{"--target", "url=localhost:1"}, err: "want an absolute http(s) URL"},
		{args: []string{"--target", "url=" + srv.URL + ",pid=" + strconv.Itoa(1<<30)}, err: "no process"},
		{args: []string{"--target", "name=a,url=" + srv.URL, "--ratio", "a/b"}, err: `--ratio "a/b": want A/B, two of the targets' names`},
		{args: []string{"--target", "name=a,url=" + srv.URL, "--ratio", "a"}, err: "want A/B"},
	} {
		if out, err := compare(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("compare %v: error %v, want %q\n%s", tc.args, err, tc.err, out)
		}
	}
}

func FuzzParseTarget(f *testing.F) {
	f.Add("name=jg,url=http://127.0.0.1:8123,assistant=a,pid=42")
	f.Add("url=,pid=-1")
	f.Fuzz(func(t *testing.T, spec string) {
		got, err := parseTarget(spec, "echo")
		if err != nil {
			return
		}
		if got.URL == "" || got.Name == "" || got.Assistant == "" || got.PID < 0 {
			t.Fatalf("parseTarget(%q) = %+v", spec, got)
		}
	})
}
