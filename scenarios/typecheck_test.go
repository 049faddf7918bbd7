package scenarios

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The graph hosts that ship in the binary. They run inside the user's project, against its own
// langgraph, so they are type-checked here against the versions the hosted scenarios pin.
const (
	typeScriptHost = "../engine/hosting/typescript/host.ts"
	pythonHostDir  = "../engine/hosting/python"
)

// pythonLintRequirements is the lock file (with hashes) of mypy and ruff.
const pythonLintRequirements = "python/lint-requirements.txt"

// TestTypeScriptHostTypes type-checks the TypeScript host (host.ts and the modules it imports)
// with tsc --strict against the
// @langchain/langgraph and @langchain/core of the hosted scenario project (and the typescript and
// @types/node it pins as devDependencies). The host is checked from a temporary folder whose
// node_modules is the project's, so its imports resolve as they do when jetgraph runs it from
// the project's node_modules.
func TestTypeScriptHostTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureTypeScriptProject(t)
	modules, err := filepath.Abs(filepath.Join(filepath.Dir(hostedTypeScriptConfig), "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	// The host's modules (host.ts and those it imports), beside each other as in the tree.
	sources, err := filepath.Glob(filepath.Join(filepath.Dir(typeScriptHost), "*.ts"))
	if err != nil || len(sources) < 2 {
		t.Fatalf("the host's modules: %v %v", sources, err)
	}
	files := map[string]string{"package.json": `{"type": "module"}`}
	for _, s := range sources {
		src, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(s)] = string(src)
	}
	dir := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	tsc := exec.Command("node", filepath.Join(modules, "typescript", "bin", "tsc"), "--noEmit", "--strict",
		"--target", "ES2023", "--module", "NodeNext", "--moduleResolution", "NodeNext", "--types", "node", "host.ts", "http.ts", "auth.ts")
	tsc.Dir = dir
	if out, err := tsc.CombinedOutput(); err != nil {
		t.Fatalf("tsc --noEmit --strict %s: %v\n%s", typeScriptHost, err, out)
	}
}

// TestPythonTypes runs ruff and mypy --strict (settings in each folder's pyproject.toml) on the
// Python in the tree: the Python host, the scenario scripts and the Python example. mypy checks
// each against the environment it runs in (--python-executable), so the libraries' own types
// are checked, not assumed: the host against the hosted scenario project's langgraph, the
// scripts against the pinned clients, the example against its own lock file.
func TestPythonTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	scripts, err := filepath.Glob("python/*.py")
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range scripts {
		scripts[i] = filepath.Base(s)
	}
	cases := []struct {
		name  string
		dir   string   // where pyproject.toml is; the tools run there
		lock  string   // the lock file of the environment the code runs in
		paths []string // relative to dir
	}{
		{"host", pythonHostDir, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"), []string{"jetgraph_host.py", "jetgraph_codec.py", "jetgraph_tracer.py", "jetgraph_http.py", "jetgraph_auth.py"}},
		{"scenario scripts", "python", pythonRequirements, scripts},
		{"python example", pythonExample, filepath.Join(pythonExample, "requirements.txt"), []string{"agent"}},
	}
	lint := filepath.Dir(ensureVenv(t, pythonLintRequirements))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			py := ensureVenv(t, c.lock)
			tools := [][]string{
				append([]string{filepath.Join(lint, "ruff"), "check", "--no-cache", "--output-format", "concise"}, c.paths...),
				append([]string{filepath.Join(lint, "mypy"), "--strict", "--python-executable", py,
					"--cache-dir", t.TempDir()}, c.paths...),
			}
			for _, tool := range tools {
				cmd := exec.Command(tool[0], tool[1:]...)
				cmd.Dir = c.dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s in %s: %v\n%s", filepath.Base(tool[0]), c.dir, err, out)
				}
			}
		})
	}
}
