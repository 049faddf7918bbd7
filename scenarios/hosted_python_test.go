package scenarios

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// hostedPythonConfig is the langgraph.json of the hosted Python scenario: a user's project with
// its own pinned langgraph (hosted/python/requirements.txt) and nothing for jetgraph.
const hostedPythonConfig = "hosted/python/langgraph.json"

// TestHostedPython serves Python LangGraph graphs as written (a langgraph.json naming
// ./visits/graph.py:graph and a factory), run by jetgraph's Python host with the project's own
// langgraph, and drives them with the official Python SDK: a waited run to an interrupt, state,
// a resumed streamed run, history, the store, a factory graph with an assistant's config, a
// stateless run, and a Go graph beside them.
func TestHostedPython(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	srv := startServerArgs(t, t.TempDir(), "--config", hostedPythonConfig, "--python", userPython)
	if got := lastLine(runPython(t, srv, "hosted_python.py")); got != "ok" {
		t.Fatalf("hosted_python.py printed %q, want ok", got)
	}
}

// TestHostedPythonHostKilled kills the Python host (kill -9) while a run is in its second step:
// jetgraph starts the host again and the run ends once, from its last checkpoint.
func TestHostedPythonHostKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	srv := startServerArgs(t, t.TempDir(), "--config", hostedPythonConfig, "--python", userPython)
	m := regexp.MustCompile(`msg="host started" host=python .*pid=(\d+)`).FindAllStringSubmatch(srv.logs.String(), -1)
	if len(m) != 1 {
		t.Fatalf("the host's start in the log: %v", m)
	}
	if got := lastLine(runPython(t, srv, "hosted_python_kill.py", m[0][1])); got != "ok" {
		t.Fatalf("hosted_python_kill.py printed %q, want ok", got)
	}
	if !strings.Contains(srv.logs.String(), "host lost a run; resuming it from its last checkpoint") {
		t.Error("the host was not killed mid-run")
	}
}
