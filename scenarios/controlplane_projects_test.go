package scenarios

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The code-only change of the projects scenario: a second graph beside the example's agent, the
// dependencies untouched.
const (
	secondTS = `// A second graph, added by a code-only change: it greets the input's name.
import { AIMessage } from "@langchain/core/messages";
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({ ...MessagesAnnotation.spec, name: Annotation<string> });

export const graph = new StateGraph(State)
  .addNode("greet", (s: typeof State.State) => ({ messages: [new AIMessage(` + "`hello ${s.name}`" + `)] }))
  .addEdge(START, "greet")
  .addEdge("greet", END)
  .compile();
`
	secondPy = `"""A second graph, added by a code-only change: it says where its settings came from."""

import os
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict, total=False):
    messages: list[Any]
    name: str


def greet(state: State) -> dict[str, Any]:
    secret = os.environ.get("SCENARIO_SECRET")
    source = "unset" if secret is None else "the .env file" if secret == "from-the-file" else "the deployment"
    text = f"hello {state.get('name')}; secret from {source}; plain {os.environ.get('PLAIN_SETTING')}"
    return {"messages": [{"role": "assistant", "content": text}]}


graph = StateGraph(State).add_node("greet", greet).add_edge(START, "greet").add_edge("greet", END).compile()
`
)

// newProjectRepo is a git repository made by the test from an example project's files (not
// what its user installs), on main.
func newProjectRepo(t *testing.T, example string) string {
	t.Helper()
	dir := copyProject(t, example)
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "the example project")
	return dir
}

// keyRequest sends a request with the admin key to url and returns the status and the body.
func keyRequest(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", scenarioAdminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// revisionLog is a revision's whole log (GET .../revisions/{id}/logs).
func revisionLog(t *testing.T, srv *server, dep, rev string) string {
	t.Helper()
	code, text := keyRequest(t, "GET", srv.URL+"/v2/deployments/"+dep+"/revisions/"+rev+"/logs", "")
	if code != 200 {
		t.Fatalf("revision %s's log: %d %s", rev, code, text)
	}
	return text
}

// deployed polls a revision to a terminal status, fails the test unless it is DEPLOYED (with
// its log), and returns the time it took since start.
func deployed(t *testing.T, srv *server, dep, rev string, start time.Time) time.Duration {
	t.Helper()
	r := pollRevision(t, srv, dep, rev, settled)
	took := time.Since(start)
	if r["status"] != "DEPLOYED" {
		t.Fatalf("revision %s: %v %v\n--- log ---\n%s", rev, r["status"], r["failure_reason"], revisionLog(t, srv, dep, rev))
	}
	return took
}

// patchRef PATCHes a deployment to a new repo_ref and returns the new revision.
func patchRef(t *testing.T, srv *server, dep, ref string) string {
	t.Helper()
	d := must(t, srv, 200, "PATCH", "/v2/deployments/"+dep, `{"source_revision_config": {"repo_ref": "`+ref+`"}}`)
	return d["latest_revision_id"].(string)
}

// buildFailed polls a revision to BUILD_FAILED and checks that failure_reason holds want, and
// that the revision's log ends with the line that says why.
func buildFailed(t *testing.T, srv *server, dep, rev, want string) {
	t.Helper()
	r := pollRevision(t, srv, dep, rev, settled)
	reason, _ := r["failure_reason"].(string)
	if r["status"] != "BUILD_FAILED" || !strings.Contains(reason, want) {
		t.Fatalf("revision %s: %v, reason %q, want BUILD_FAILED naming %q", rev, r["status"], reason, want)
	}
	if last := lastLine(revisionLog(t, srv, dep, rev)); !strings.HasPrefix(last, "BUILD_FAILED: ") || !strings.Contains(last, want) {
		t.Errorf("revision %s's log ends with %q, want the line BUILD_FAILED: naming %q", rev, last, want)
	}
}

// notServed checks that a deployment's active revision does not run graph (its assistant,
// made by a later revision, stays in the deployment's data): a stateless run of it fails.
func notServed(t *testing.T, url, graph string) {
	t.Helper()
	code, text := keyRequest(t, "POST", url+"/runs/wait", `{"assistant_id": "`+graph+`", "input": {"messages": []}}`)
	t.Logf("a run of %s after the redeploy: %d %s", graph, code, text)
	if code == 200 && !strings.Contains(text, "rror") {
		t.Fatalf("graph %s runs after the redeploy of a revision without it: %s", graph, text)
	}
}

// redeployed redeploys an older revision and waits until it is the active one.
func redeployed(t *testing.T, srv *server, dep, rev string) {
	t.Helper()
	must(t, srv, 200, "POST", "/v2/deployments/"+dep+"/revisions/"+rev+"/redeploy", "")
	deadline := time.Now().Add(2 * time.Minute)
	for must(t, srv, 200, "GET", "/v2/deployments/"+dep, "")["active_revision_id"] != rev {
		if time.Now().After(deadline) {
			t.Fatalf("redeploy of %s: not active after 2 minutes", rev)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestControlPlaneProjects deploys LangGraph repositories as their users have them, through
// POST /v2/deployments from local git repositories: the TypeScript example (npm lock file, a
// build_command that type-checks it) and the Python example (dependencies ["."]: its
// requirements.txt, pinned with hashes; python_version 3.11). Each is polled to DEPLOYED and
// driven at its custom_url by the official SDK of its language (the example's own client script:
// streaming, interrupts, the store); a code-only change (PATCH to a branch adding a graph) is
// built without installing anything (the log says "cache hit" and runs no install command) and
// serves the new graph; the Python one's .env loses to the deployment's secret; a redeploy of the
// first revision runs that revision's own folder (its one graph); a broken package.json and a
// broken pyproject.toml end BUILD_FAILED with the reason. It logs create -> DEPLOYED times, cold
// and warm cache.
func TestControlPlaneProjects(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	t.Setenv("JETGRAPH_ADMIN_KEY", scenarioAdminKey)
	ensureNodeModules(t)
	srv := startServer(t, t.TempDir())
	key := "LANGGRAPH_API_KEY=" + scenarioAdminKey

	t.Run("typescript", func(t *testing.T) {
		repo := newProjectRepo(t, typeScriptExample)
		commit(t, repo, "second-graph", map[string]string{"src/second.ts": secondTS, "langgraph.json": `{
  "node_version": "20",
  "graphs": {"agent": "./src/agent.ts:graph", "second": "./src/second.ts:graph"}
}`})
		commit(t, repo, "broken", map[string]string{"package.json": `{"name": "broken", "dependencies": {`})
		start := time.Now()
		d := must(t, srv, 201, "POST", "/v2/deployments", `{"name": "ts-agent", "source": "git_host",
			"source_config": {"repo_url": "`+repo+`", "build_command": "npm run typecheck"},
			"source_revision_config": {"repo_ref": "main", "graph_config_path": "langgraph.json"}, "secrets": []}`)
		dep, first := d["id"].(string), d["latest_revision_id"].(string)
		cold := deployed(t, srv, dep, first, start)
		log := revisionLog(t, srv, dep, first)
		for _, want := range []string{"node 20.", "dependencies: installing (cache miss", "$ npm ci", "$ /bin/sh -c npm run typecheck", "tsc --noEmit", "built project revision"} {
			if !strings.Contains(log, want) {
				t.Errorf("the first revision's log has no %q:\n%s", want, log)
			}
		}
		url := must(t, srv, 200, "GET", "/v2/deployments/"+dep, "")["source_config"].(map[string]any)["custom_url"].(string)
		if got := lastLine(runClient(t, []string{"JETGRAPH_URL=" + url, key}, "node", "example_agent.mjs")); got != "ok" {
			t.Fatalf("example_agent.mjs at the deployment printed %q, want ok", got)
		}

		start = time.Now()
		second := patchRef(t, srv, dep, "second-graph")
		warm := deployed(t, srv, dep, second, start)
		log = revisionLog(t, srv, dep, second)
		if !strings.Contains(log, "dependencies: cache hit") || strings.Contains(log, "$ npm") {
			t.Errorf("a code-only change installed again (want a cache hit and no npm command):\n%s", log)
		}
		runClient(t, []string{"JETGRAPH_URL=" + srv.URL}, "node", "controlplane.mjs", url, scenarioAdminKey, "second", "run")
		// The official Python SDK too, against the TypeScript deployment.
		if out := runPythonEnv(t, srv, []string{"JETGRAPH_URL=" + url, key}, "controlplane_project.py", "second"); out != "agent,second\nhello Ada\n" {
			t.Fatalf("the TypeScript deployment's second graph through the Python SDK: %q", out)
		}
		t.Logf("TypeScript project: create -> DEPLOYED %v (cold cache), code change -> DEPLOYED %v (warm cache)",
			cold.Round(100*time.Millisecond), warm.Round(100*time.Millisecond))

		// The first revision again: its own folder, whose langgraph.json has the agent only.
		redeployed(t, srv, dep, first)
		notServed(t, url, "second")
		runClient(t, []string{"JETGRAPH_URL=" + srv.URL}, "node", "controlplane.mjs", url, scenarioAdminKey, "agent", "run")

		buildFailed(t, srv, dep, patchRef(t, srv, dep, "broken"), "EJSONPARSE")
		deleteDeployment(t, srv, dep)
	})

	t.Run("python", func(t *testing.T) {
		repo := newProjectRepo(t, pythonExample)
		commit(t, repo, "second-graph", map[string]string{"agent/second.py": secondPy,
			".env": "SCENARIO_SECRET=from-the-file\nPLAIN_SETTING=from-the-file\n",
			"langgraph.json": `{
  "dependencies": ["."],
  "python_version": "3.11",
  "env": ".env",
  "graphs": {"agent": "./agent/graph.py:graph", "second": "./agent/second.py:graph"}
}`})
		commit(t, repo, "broken", map[string]string{"pyproject.toml": "[project\nname = \"broken\"\n"})
		start := time.Now()
		d := must(t, srv, 201, "POST", "/v2/deployments", `{"name": "py-agent", "source": "git_host",
			"source_config": {"repo_url": "`+repo+`"},
			"source_revision_config": {"repo_ref": "main", "graph_config_path": "langgraph.json"},
			"secrets": [{"name": "SCENARIO_SECRET", "value": "not-to-be-seen"}]}`)
		dep, first := d["id"].(string), d["latest_revision_id"].(string)
		cold := deployed(t, srv, dep, first, start)
		log := revisionLog(t, srv, dep, first)
		for _, want := range []string{"python 3.11.", "dependencies: installing with", "pip install", "built project revision"} {
			if !strings.Contains(log, want) {
				t.Errorf("the first revision's log has no %q:\n%s", want, log)
			}
		}
		url := must(t, srv, 200, "GET", "/v2/deployments/"+dep, "")["source_config"].(map[string]any)["custom_url"].(string)
		if got := lastLine(runPythonEnv(t, srv, []string{"JETGRAPH_URL=" + url, key}, "example_agent.py")); got != "ok" {
			t.Fatalf("example_agent.py at the deployment printed %q, want ok", got)
		}

		start = time.Now()
		second := patchRef(t, srv, dep, "second-graph")
		warm := deployed(t, srv, dep, second, start)
		log = revisionLog(t, srv, dep, second)
		if !strings.Contains(log, "dependencies: cache hit") || strings.Contains(log, "pip install") || strings.Contains(log, "-m venv") {
			t.Errorf("a code-only change installed again (want a cache hit and no venv or pip command):\n%s", log)
		}
		out := runPythonEnv(t, srv, []string{"JETGRAPH_URL=" + url, key}, "controlplane_project.py", "second")
		if want := "agent,second\nhello Ada; secret from the deployment; plain from-the-file\n"; out != want {
			t.Fatalf("the second graph through the Python SDK: %q, want %q", out, want)
		}
		// The official JS SDK too, against the Python deployment.
		runClient(t, []string{"JETGRAPH_URL=" + srv.URL}, "node", "controlplane.mjs", url, scenarioAdminKey, "second", "run")
		t.Logf("Python project: create -> DEPLOYED %v (cold cache), code change -> DEPLOYED %v (warm cache)",
			cold.Round(100*time.Millisecond), warm.Round(100*time.Millisecond))

		redeployed(t, srv, dep, first)
		notServed(t, url, "second")
		if out := runPythonEnv(t, srv, []string{"JETGRAPH_URL=" + url, key}, "controlplane_project.py", "agent"); !strings.Contains(out, "weather") {
			t.Fatalf("the agent after the redeploy of the first revision: %q", out)
		}

		buildFailed(t, srv, dep, patchRef(t, srv, dep, "broken"), "pyproject.toml: not valid TOML")
		deleteDeployment(t, srv, dep)
	})
	if strings.Contains(srv.logs.String(), "not-to-be-seen") {
		t.Error("a secret reached the control plane's logs")
	}
}
