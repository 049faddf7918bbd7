package scenarios

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHostedPythonProfile: with JETGRAPH_HOST_PROFILE set, the Python host writes the cProfile
// statistics of its event loop thread when jetgraph stops it, and they name the host's own
// functions and the run it served (the debugging aid of the README's hosted benchmark).
func TestHostedPythonProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	prefix := filepath.Join(t.TempDir(), "host")
	t.Setenv("JETGRAPH_HOST_PROFILE", prefix)
	srv := startServerArgs(t, t.TempDir(), "--config", hostedPythonConfig, "--python", userPython)
	resp, err := http.Post(srv.URL+"/runs/wait", "application/json",
		strings.NewReader(`{"assistant_id": "greeter", "input": {"messages": [{"role": "user", "content": "ada"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /runs/wait: %s", resp.Status)
	}
	m := regexp.MustCompile(`msg="host started" host=python .*pid=(\d+)`).FindStringSubmatch(srv.logs.String())
	if m == nil {
		t.Fatal("no host start in the log")
	}
	srv.Stop()

	stats := prefix + "." + m[1]
	if _, err := os.Stat(stats); err != nil {
		t.Fatalf("the host's profile: %v", err)
	}
	check := `import pstats, sys
s = pstats.Stats(sys.argv[1])
funcs = {name for (path, _, name) in s.stats if path.endswith("jetgraph_host.py")}
missing = {"main", "dispatch", "do_run"} - funcs
print("missing", sorted(missing) if missing else "none")`
	out, err := exec.Command(userPython, "-c", check, stats).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "missing none" {
		t.Fatalf("reading the profile: %v: %s", err, out)
	}
}
