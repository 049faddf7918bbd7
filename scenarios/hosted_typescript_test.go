package scenarios

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// hostedTypeScriptConfig is the langgraph.json of the hosted TypeScript scenario: a user's project
// with its own @langchain/langgraph pinned by its package-lock.json, and nothing for jetgraph.
const hostedTypeScriptConfig = "hosted/typescript/langgraph.json"

// npmProjects are the TypeScript projects whose dependencies this test process installed, by folder.
var npmProjects sync.Map // string → *npmProject

type npmProject struct {
	once sync.Once
	err  error
}

// ensureTypeScriptProject installs the scenario project's dependencies from its lock file once.
func ensureTypeScriptProject(t *testing.T) {
	t.Helper()
	ensureNpmProject(t, filepath.Dir(hostedTypeScriptConfig))
}

// ensureNpmProject installs the dependencies of the project in dir from its lock file (npm ci,
// as its user would) once per test process.
func ensureNpmProject(t *testing.T, dir string) {
	t.Helper()
	ensureNodeModules(t) // node and npm are there, and the SDK the script drives jetgraph with
	p, _ := npmProjects.LoadOrStore(dir, &npmProject{})
	project := p.(*npmProject)
	project.once.Do(func() {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			project.err = fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out)
		}
	})
	if project.err != nil {
		t.Fatal(project.err)
	}
}

// TestHostedTypeScript serves LangGraph.js graphs as written (a langgraph.json naming
// ./src/visits.ts:graph, which imports a local module, and a factory), run by jetgraph's
// TypeScript host with the project's own @langchain/langgraph (TypeScript compiled by the esbuild
// inside jetgraph), driven by the official JS SDK: a waited run to an interrupt, state, a resumed
// streamed run, history, the store, a factory graph with an assistant's config, a stateless run,
// and a Go graph beside them. hosted_typescript_surfaces.mjs then holds the graphs' schemas,
// subgraphs and xray drawings to the JS reference server's, and the run surfaces: cancel, the
// four multitask strategies, parallel interrupts resumed by id, Commands, custom events,
// context, the recursion limit, and tasks, checkpoints, debug and events with subgraphs.
func TestHostedTypeScript(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureTypeScriptProject(t)
	srv := startServerArgs(t, t.TempDir(), "--config", hostedTypeScriptConfig)
	for _, script := range []string{"hosted_typescript.mjs", "hosted_typescript_surfaces.mjs"} {
		if got := lastLine(runNode(t, srv, script)); got != "ok" {
			t.Fatalf("%s printed %q, want ok", script, got)
		}
	}
}

// TestHostedTypeScriptHostKilled kills the TypeScript host (kill -9) while a run is in its second
// step: jetgraph starts the host again and the run ends once, from its last checkpoint. The
// client script is the Python one: the graph is the same in both languages.
func TestHostedTypeScriptHostKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureTypeScriptProject(t)
	srv := startServerArgs(t, t.TempDir(), "--config", hostedTypeScriptConfig)
	killHostMidRun(t, srv, "typescript")
}

// TestHostedTypeScriptConfigCheck: `jetgraph config check` loads a langgraph.json's TypeScript
// graphs in their host and names each entry that does not load, with the reason.
func TestHostedTypeScriptConfigCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureTypeScriptProject(t)
	dir, err := filepath.Abs(filepath.Dir(hostedTypeScriptConfig))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "check.json")
	body := `{"graphs": {"visits": "./src/visits.ts:graph", "missing": "./src/visits.ts:nothing", "broken": "./src/nope.ts:graph"}}`
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(conf) })
	out, err := exec.Command(buildBinary(t), "config", "check", "--config", conf).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "graphs.broken: ") || !strings.Contains(string(out), "no file "+filepath.Join(dir, "src", "nope.ts")) {
		t.Fatalf("config check of a missing file:\n%s", out)
	}
	body = `{"graphs": {"visits": "./src/visits.ts:graph", "missing": "./src/visits.ts:nothing"}}`
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(buildBinary(t), "config", "check", "--config", conf).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `graphs.missing: Error: `) || !strings.Contains(string(out), "has no export") ||
		strings.Contains(string(out), "graphs.visits") {
		t.Fatalf("config check of a missing export:\n%s", out)
	}
}
