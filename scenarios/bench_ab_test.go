package scenarios

import (
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestABHarness runs scenarios/bench/ab.sh end to end in a small configuration, HEAD against
// the working tree with the JS reference dev server beside them, so that a broken harness fails
// CI: the three targets served and measured, the ratios printed. No timing is asserted.
func TestABHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jetgraph twice and serves both")
	}
	needTools(t, "the A/B harness", "git", "curl", "setsid", "tar")
	port := freePorts(t, 3)
	cmd := exec.Command("bash", "bench/ab.sh", "--base", "HEAD", "-n", "20", "--rounds", "2", "-c", "4",
		"--port", strconv.Itoa(port), "--reference", "js")
	cmd.Env = append(cmd.Environ(), "JETGRAPH_AB_DIR="+t.TempDir())
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("ab.sh in %s:\n%s", time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("ab.sh: %v", err)
	}
	report := string(out)
	for _, want := range []string{
		"jetgraph A/B: base HEAD",
		"bursts of 10 over 2 rounds",
		"p99 ms",
		"\nbase ",
		"\nworking ",
		"working / base: ",
		"working / langgraphjs-dev: ",
		"x the CPU per run",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report has no %q", want)
		}
	}
	for _, line := range strings.Split(report, "\n") {
		f := strings.Fields(line)
		if len(f) == 13 && !strings.HasPrefix(f[1], "http") && (f[0] == "base" || f[0] == "working" || f[0] == "langgraphjs-dev") {
			if ok, errs := f[len(f)-2], f[len(f)-1]; ok != "20" || errs != "0" {
				t.Errorf("%s: %s ok, %s errors; want 20 and 0", f[0], ok, errs)
			}
		}
	}
}

// freePorts returns the first of n consecutive ports free on 127.0.0.1, for a script that takes
// a first port; it skips the test when the ones after the first are taken.
func freePorts(t *testing.T, n int) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	for p := port + 1; p < port+n; p++ {
		probe, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Skipf("port %d is taken: %v", p, err)
		}
		probe.Close()
	}
	return port
}
