package scenarios

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The example projects the README walks through, each a user's project as written: its own
// langgraph.json and pinned dependencies, nothing for jetgraph.
const (
	pythonExample     = "examples/python-agent"
	typeScriptExample = "examples/typescript-agent"
)

// exampleAnswer is what the examples' offline model answers once get_weather has run for Paris.
const exampleAnswer = "In Paris it is sunny, 21 °C."

// TestExamplePythonAgent serves the Python example as the README says (its folder, a .venv
// beside langgraph.json holding requirements.txt, `jetgraph --config langgraph.json`), runs the
// README's curl steps and checks what they stream, then drives it with the official Python SDK:
// token chunks, the interrupt before the tool and its resume (approved and declined), the tool
// in its subgraph, the user's city read from the store.
func TestExamplePythonAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	py := ensureVenv(t, filepath.Join(pythonExample, "requirements.txt"))
	project := copyProject(t, pythonExample)
	// The venv pip made from the lock file, where the README makes it (.venv beside the config).
	if err := os.Symlink(filepath.Dir(filepath.Dir(py)), filepath.Join(project, ".venv")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VIRTUAL_ENV", "") // an active environment of the developer's would win over .venv
	srv := startServerIn(t, project, t.TempDir(), freeAddr(t), "--config", "langgraph.json")
	checkReadmeSteps(t, srv)
	if got := lastLine(runPython(t, srv, "example_agent.py")); got != "ok" {
		t.Fatalf("example_agent.py printed %q, want ok", got)
	}
}

// TestExampleTypeScriptAgent serves the TypeScript example as the README says (npm ci in its
// folder, `jetgraph --config langgraph.json` there), type-checks it with its own strict tsc,
// runs the README's curl steps and drives it with the official JS SDK, as for Python.
func TestExampleTypeScriptAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNpmProject(t, typeScriptExample)
	tsc := exec.Command("node", filepath.Join("node_modules", "typescript", "bin", "tsc"), "--noEmit", "-p", ".")
	tsc.Dir = typeScriptExample
	if out, err := tsc.CombinedOutput(); err != nil {
		t.Fatalf("tsc --noEmit in %s: %v\n%s", typeScriptExample, err, out)
	}
	srv := startServerIn(t, typeScriptExample, t.TempDir(), freeAddr(t), "--config", "langgraph.json")
	checkReadmeSteps(t, srv)
	if got := lastLine(runNode(t, srv, "example_agent.mjs")); got != "ok" {
		t.Fatalf("example_agent.mjs printed %q, want ok", got)
	}
}

// copyProject copies a project's files (not what its user installs or runs: .venv,
// node_modules, the data folder, caches) into a new temporary folder and returns it.
func copyProject(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	skip := map[string]bool{".venv": true, "node_modules": true, ".jetgraph": true, "__pycache__": true, ".mypy_cache": true}
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skip[d.Name()] {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	return dst
}

// readmeClientSteps is the README's block of curl commands that talk to a served example,
// found by the thread it creates.
func readmeClientSteps(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(raw), -1) {
		if strings.Contains(block[1], `"if_exists": "do_nothing"`) && strings.Contains(block[1], `"resume": "yes"`) {
			return block[1]
		}
	}
	t.Fatal("the README has no block of curl steps for the examples")
	return ""
}

// sseEvent matches one server-sent event of curl's output, which may follow another command's
// answer on the same line.
var sseEvent = regexp.MustCompile(`(?m)event: (\S+)\ndata: (.*)$`)

// checkReadmeSteps runs the README's curl steps against srv in place of localhost:8123, as they
// are written, and checks what they stream: the interrupt before get_weather with the city read
// from the store, the tool's message from the subgraph, the answer in token chunks.
func checkReadmeSteps(t *testing.T, srv *server) {
	t.Helper()
	needTools(t, "the README's steps", "bash", "curl")
	steps := strings.ReplaceAll(readmeClientSteps(t), "localhost:8123", strings.TrimPrefix(srv.URL, "http://"))
	ctx, cancel := context.WithTimeout(context.Background(), nodeTimeout)
	defer cancel()
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", steps)
	cmd.Stderr = &stderr // curl's progress meter, apart from the streams
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the README's steps: %v\n%s\n%s", err, out, stderr.String())
	}
	var interrupts, toolMessages, tokens []string
	for _, m := range sseEvent.FindAllStringSubmatch(string(out), -1) {
		event, data := m[1], m[2]
		switch {
		case event == "error":
			t.Fatalf("a stream of the README's steps failed: %s", data)
		case event == "updates" && strings.Contains(data, `"__interrupt__"`):
			var u struct {
				Interrupt []struct {
					Value struct {
						ToolCalls []struct {
							Name string         `json:"name"`
							Args map[string]any `json:"args"`
						} `json:"tool_calls"`
					} `json:"value"`
				} `json:"__interrupt__"`
			}
			if err := json.Unmarshal([]byte(data), &u); err != nil || len(u.Interrupt) != 1 || len(u.Interrupt[0].Value.ToolCalls) != 1 {
				t.Fatalf("the interrupt: %s (%v)", data, err)
			}
			c := u.Interrupt[0].Value.ToolCalls[0]
			interrupts = append(interrupts, c.Name+"("+c.Args["city"].(string)+")")
		case strings.HasPrefix(event, "messages|tools:") || event == "messages":
			var msg []struct {
				Type    string `json:"type"`
				Content string `json:"content"`
			}
			if err := json.Unmarshal([]byte(data), &msg); err != nil || len(msg) != 2 {
				t.Fatalf("a messages event: %s (%v)", data, err)
			}
			if event != "messages" {
				toolMessages = append(toolMessages, msg[0].Type+": "+msg[0].Content)
			} else if (msg[0].Type == "AIMessageChunk" || msg[0].Type == "ai") && msg[0].Content != "" { // "ai": the JS reference's
				tokens = append(tokens, msg[0].Content)
			}
		}
	}
	if strings.Join(interrupts, "|") != "get_weather(Paris)" {
		t.Errorf("the README's first stream stopped before %q, want get_weather(Paris):\n%s", interrupts, out)
	}
	if strings.Join(toolMessages, "|") != "tool: sunny, 21 °C" {
		t.Errorf("the subgraph's messages in the README's second stream: %q\n%s", toolMessages, out)
	}
	if len(tokens) < 5 || strings.Join(tokens, "") != exampleAnswer {
		t.Errorf("the answer's token chunks in the README's second stream: %q\n%s", tokens, out)
	}
}
