package scenarios

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
	runHostedPython(t, "hosted_python.py")
}

// runHostedPython serves hosted/python/langgraph.json with the project's own venv and has the
// client script (in python/) drive it; the script prints ok when every check held.
func runHostedPython(t *testing.T, script string) {
	t.Helper()
	userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	srv := startServerArgs(t, t.TempDir(), "--config", hostedPythonConfig, "--python", userPython)
	if got := lastLine(runPython(t, srv, script)); got != "ok" {
		t.Fatalf("%s printed %q, want ok", script, got)
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
	killHostMidRun(t, srv, "python")
}

// killHostMidRun has hosted_python_kill.py kill srv's one host of language (its pid read from
// the log's start line) while a run is in its second step, and checks that the run ended once
// and that the server resumed it after losing its host.
func killHostMidRun(t *testing.T, srv *server, language string) {
	t.Helper()
	m := regexp.MustCompile(`msg="host started" host=`+language+` .*pid=(\d+)`).FindAllStringSubmatch(srv.logs.String(), -1)
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

// TestHostedPythonConfigCheck: `jetgraph config check` loads a langgraph.json's Python graphs in
// their host and names each entry that does not load, with the reason.
func TestHostedPythonConfigCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	dir, err := filepath.Abs(filepath.Dir(hostedPythonConfig))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "langgraph.json")
	body := `{"graphs": {"visits": "` + filepath.Join(dir, "visits", "graph.py") + `:graph", "missing": "` +
		filepath.Join(dir, "visits", "graph.py") + `:nothing", "model": "` + filepath.Join(dir, "visits", "graph.py") + `:Profile"}}`
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(buildBinary(t), "config", "check", "--config", conf, "--python", userPython).CombinedOutput()
	if err == nil {
		t.Fatalf("config check accepted graphs that do not load:\n%s", out)
	}
	for _, want := range []string{
		"graphs.missing: AttributeError: " + filepath.Join(dir, "visits", "graph.py") + " has no attribute 'nothing'",
		"graphs.model: TypeError: class Profile is not a graph (a compiled graph, a StateGraph or a function that returns one)",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("config check's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "graphs.visits") {
		t.Errorf("config check refused a graph that loads:\n%s", out)
	}
}

// TestHostedPythonServerKilled kills jetgraph (kill -9) while a hosted graph's run is in its
// second step: the host, its stdin closed, exits with it (no orphan), and a jetgraph started on
// the same data takes the run over and ends it once from its last checkpoint.
func TestHostedPythonServerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	data := t.TempDir()
	flags := append([]string{"--config", hostedPythonConfig, "--python", userPython}, fastFailover...)
	srv := startServerArgs(t, data, flags...)
	m := regexp.MustCompile(`msg="host started" host=python .*pid=(\d+)`).FindStringSubmatch(srv.logs.String())
	if m == nil {
		t.Fatal("no host start in the log")
	}
	hostPID, _ := strconv.Atoi(m[1])
	thread := get(api(t, "POST", srv.URL+"/threads", `{}`, 200), "thread_id").(string)
	run := get(api(t, "POST", srv.URL+"/threads/"+thread+"/runs",
		`{"assistant_id":"slow","input":{"messages":[{"role":"user","content":"go"}]}}`, 200), "run_id").(string)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st := api(t, "GET", srv.URL+"/threads/"+thread+"/state", "", 200)
		if fmt.Sprint(get(st, "next")) == "[slow]" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never reached its slow step: %v", st)
		}
	}
	srv.Kill9()
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(hostPID, 0) == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the host (pid %d) outlived its killed server", hostPID)
		}
	}

	srv = startServerArgs(t, data, flags...)
	waitRun(t, srv.URL, thread, run, "success")
	if got := threadMessages(t, srv.URL, thread); strings.Join(got, "|") != "go|first|slow done" {
		t.Fatalf("messages after the takeover: %q", got)
	}
	item := api(t, "GET", srv.URL+"/store/items?namespace=executions&key="+thread, "", 200)
	if fmt.Sprint(get(get(item, "value"), "first")) != "1" {
		t.Fatalf("the finished first step ran again: %v", item)
	}
}

// TestHostedPythonRuns drives the run surfaces of hosted Python graphs with the official Python
// SDK (python/hosted_python_runs.py, settled against the Python reference dev server): a long
// node cancelled promptly with both cancel actions, the four multitask strategies, the events,
// checkpoints, tasks, custom and debug stream modes with subgraph namespaces, two interrupts at
// once resumed by id, Command update and goto, several state updates at once, context,
// durability, the recursion limit's error and the thread-centric protocol.
func TestHostedPythonRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	runHostedPython(t, "hosted_python_runs.py")
}
