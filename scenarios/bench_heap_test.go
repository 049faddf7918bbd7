package scenarios

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHeapHarness runs scenarios/bench/heap.sh end to end in a small configuration, the working
// tree and HEAD as its base, so that a broken memory harness fails CI: every burst of both
// targets measured, with a heap and an RSS figure. No figure is asserted beyond being there.
func TestHeapHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jetgraph twice and serves both")
	}
	needTools(t, "the memory harness", "git", "curl", "setsid", "tar")
	port := freePorts(t, 1)
	dir := t.TempDir()
	cmd := exec.Command("bash", "bench/heap.sh", "--base", "HEAD", "-n", "30", "--bursts", "2", "-c", "4",
		"--port", strconv.Itoa(port))
	cmd.Env = append(cmd.Environ(), "JETGRAPH_HEAP_DIR="+dir)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("heap.sh in %s:\n%s", time.Since(start).Round(time.Millisecond), out)
	if err != nil {
		t.Fatalf("heap.sh: %v", err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 8 && (f[0] == "working" || f[0] == "base") {
			if _, err := strconv.Atoi(f[1]); err == nil {
				rows[f[0]] = append(rows[f[0]], f[1])
				for i, col := range []string{"heap in use", "live heap", "RSS", "peak RSS"} {
					if v, err := strconv.Atoi(f[3+i]); err != nil || v <= 0 {
						t.Errorf("%s after %s runs: %s is %q, want a positive number of MiB", f[0], f[1], col, f[3+i])
					}
				}
			}
		}
	}
	for _, target := range []string{"working", "base"} {
		if got := strings.Join(rows[target], ","); got != "30,60" {
			t.Errorf("%s: rows after %s runs, want 30,60", target, got)
		}
	}
	if !strings.Contains(string(out), "go tool pprof -base") {
		t.Error("the report does not say where the heap profiles are")
	}
}
