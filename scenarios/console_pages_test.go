package scenarios

import (
	"os/exec"
	"testing"
)

// TestConsoleUnits runs the unit tests of the console's pure modules (the trace waterfall and its
// roll-ups, the trace message format, the run filters, the Prometheus text parser and chart
// series, the log follower) with `node --test` on the committed dist/ (TestConsoleAssetsCurrent
// checks that dist is compiled from the sources).
func TestConsoleUnits(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	needTools(t, "the console's unit tests", "node")
	cmd := exec.Command("node", "--test", "test/")
	cmd.Dir = consoleWeb
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test in %s: %v\n%s", consoleWeb, err, out)
	}
	t.Logf("%s", out)
}

// TestConsoleTracesDeploymentsOverview drives the console's Traces, Deployments and Overview pages
// in headless Chromium against the built binary: a react run's trace opened from its thread, the
// waterfall with the LLM span's tokens, its messages and feedback added, the runs filtered; a
// deployment of a Go-module repository whose build prints a line a second, its log followed
// while it builds, then DEPLOYED with its custom_url; the Overview's charts with data.
func TestConsoleTracesDeploymentsOverview(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	srv := startConsoleServer(t)
	// A Go module (go.mod at its root) whose build_command prints slowly, then hands over this
	// jetgraph binary as the program: it serves the graph.json's built-in graphs.
	repo := newRepo(t, map[string]string{
		"go.mod":     "module example.com/slowbuild\n\ngo 1.22\n",
		"graph.json": `{"graphs": {"agent": "echo"}}`,
	})
	t.Setenv("CONSOLE_REPO", repo)
	t.Setenv("CONSOLE_BIN", buildBinary(t))
	runConsoleScript(t, srv, "console_pages.mjs")
}

// TestConsoleTraceHostileStrings sends traces whose span names, inputs and outputs (messages with
// markup, a javascript: image URL, an SVG data URL), tags, metadata, errors and feedback comments
// are markup and script, then opens the project's runs and the trace in the browser: nothing ran,
// nothing was blocked by the CSP, every string is shown as text.
func TestConsoleTraceHostileStrings(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	srv := startConsoleServer(t)
	runConsoleScript(t, srv, "console_traces_hostile.mjs")
}
