package build

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/jetgraph/jetgraph/engine/controlplane"
)

// A LangGraph project is a repository whose langgraph.json names graphs in code (Python
// "./agent/graph.py:graph", TypeScript "./src/agent.ts:graph"): jetgraph hosts them (see
// engine/hosting), so the build is the project's own: its dependencies installed (cached by what
// they are made from), its build_command run, its graphs loaded once by `jetgraph config check`.
// The built folder is the revision's program with the jetgraph binary (ArtifactProject).

// languages says which code a langgraph.json's graphs are written in.
type languages struct{ python, typescript bool }

// projectConfig is what the builder reads of a langgraph.json; jetgraph's config check reads
// the rest.
type projectConfig struct {
	Graphs        map[string]json.RawMessage `json:"graphs"`
	Dependencies  []string                   `json:"dependencies"`
	NodeVersion   json.RawMessage            `json:"node_version"`
	PythonVersion json.RawMessage            `json:"python_version"`
}

// typeScriptExts are the extensions of a graph file the TypeScript host runs.
var typeScriptExts = map[string]bool{".ts": true, ".mts": true, ".cts": true, ".js": true, ".mjs": true, ".cjs": true}

// codeLanguages tells the languages of the code graphs of a graph config ("path:attr" entries;
// built-in graphs and templates are none): a file whose extension is TypeScript's or
// JavaScript's is TypeScript, any other (a .py file, a module) Python.
func codeLanguages(raw []byte) languages {
	var cfg projectConfig
	var l languages
	if json.Unmarshal(raw, &cfg) != nil {
		var graphsOnly struct {
			Graphs map[string]json.RawMessage `json:"graphs"`
		}
		if json.Unmarshal(raw, &graphsOnly) != nil {
			return l
		}
		cfg.Graphs = graphsOnly.Graphs
	}
	for _, v := range cfg.Graphs {
		var spec string
		if json.Unmarshal(v, &spec) != nil {
			continue
		}
		i := strings.LastIndex(spec, ":")
		if i < 0 {
			continue
		}
		if typeScriptExts[filepath.Ext(spec[:i])] {
			l.typescript = true
		} else {
			l.python = true
		}
	}
	return l
}

// versionOf is a langgraph.json version setting as text ("20", 20 and "3.11" alike); "" when
// absent.
func versionOf(raw json.RawMessage) string {
	return strings.Trim(strings.TrimSpace(string(raw)), `"`)
}

// versionMatches reports whether the version found (20.11.1) is the one asked for (20, 20.11).
func versionMatches(found, want string) bool {
	return found == want || strings.HasPrefix(found, want+".")
}

// projectDir is the folder of a built project: the revision's, in the deployer's folders.
func (b *Builder) projectDir(spec controlplane.BuildSpec) string {
	root := b.Projects
	if root == "" {
		root = b.Dir
	}
	return filepath.Join(root, spec.DeploymentID, spec.RevisionID, "project")
}

func (b *Builder) cache() string {
	if b.Cache != "" {
		return b.Cache
	}
	return filepath.Join(b.Dir, "cache")
}

// host names this process among a cluster's: its host name and projects folder.
func (b *Builder) host() string {
	name, _ := os.Hostname()
	root := b.Projects
	if root == "" {
		root = b.Dir
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return name + ":" + root
}

// buildProject builds a LangGraph project checked out at repo: it moves it to the revision's
// folder (where it runs, so that nothing installed there points back to the build's folder),
// installs its dependencies, runs its build_command and loads its graphs once.
func (b *Builder) buildProject(ctx context.Context, spec controlplane.BuildSpec, repo, cfgPath string, art controlplane.Artifact,
	langs languages, log io.Writer) (controlplane.Artifact, error) {
	var cfg projectConfig
	if err := json.Unmarshal(art.Config, &cfg); err != nil {
		return art, failed("%s is invalid: %v", cfgPath, err)
	}
	timeout := b.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dir, err := filepath.Abs(b.projectDir(spec))
	if err != nil {
		return art, fmt.Errorf("build: %w", err)
	}
	// A build resumed after a crash finds the folder of the one that stopped.
	if err := os.RemoveAll(dir); err != nil {
		return art, fmt.Errorf("build: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return art, fmt.Errorf("build: %w", err)
	}
	if err := os.Rename(repo, dir); err != nil {
		return art, fmt.Errorf("build: move the checkout to the revision's folder: %w", err)
	}
	built := false
	defer func() {
		if !built {
			_ = os.RemoveAll(dir)
		}
	}()
	cfgFile := filepath.Join(dir, filepath.FromSlash(cfgPath))
	cfgDir := filepath.Dir(cfgFile)
	env := b.env()
	if langs.typescript {
		bin, err := b.installNode(ctx, spec, dir, cfgDir, cfg, env, timeout, log)
		if err != nil {
			return art, err
		}
		env = prependPath(env, bin)
	}
	var venv string
	if langs.python {
		if venv, err = b.installPython(ctx, dir, cfgDir, cfgPath, cfg, env, timeout, log); err != nil {
			return art, err
		}
		env = withVenv(env, venv)
	}
	if spec.InstallCommand != "" && !langs.typescript { // TypeScript's install is install_command
		if err := b.run(ctx, step{"install_command", dir, []string{"/bin/sh", "-c", spec.InstallCommand}}, env, timeout, log); err != nil {
			return art, err
		}
	}
	if spec.BuildCommand != "" {
		if err := b.run(ctx, step{"build_command", cfgDir, []string{"/bin/sh", "-c", spec.BuildCommand}}, env, timeout, log); err != nil {
			return art, err
		}
	}
	checkEnv := append([]string{}, env...)
	for _, s := range spec.Secrets {
		checkEnv = append(checkEnv, s.Name+"="+s.Value)
	}
	var extra []string
	if venv != "" {
		extra = []string{"--python", filepath.Join(venv, "bin", "python")}
	}
	if err := b.checkWith(ctx, b.Jetgraph, cfgFile, cfgPath, extra, checkEnv, log); err != nil {
		return art, err
	}
	art.Kind, art.Dir, art.ConfigFile, art.Venv, art.Host = controlplane.ArtifactProject, dir, cfgPath, venv, b.host()
	built = true
	fmt.Fprintf(log, "built %s revision of %s at %s in %s\n", art.Kind, spec.RepoURL, short(art.CommitSHA), dir)
	return art, nil
}

// prependPath puts dir first on env's PATH.
func prependPath(env []string, dir string) []string {
	out := make([]string, 0, len(env)+1)
	found := false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv, found = "PATH="+dir+string(os.PathListSeparator)+v, true
		}
		out = append(out, kv)
	}
	if !found {
		out = append(out, "PATH="+dir)
	}
	return out
}

// withVenv is env with the virtual environment venv active, as its bin/activate makes it.
func withVenv(env []string, venv string) []string {
	out := prependPath(env, filepath.Join(venv, "bin"))
	return append(out, "VIRTUAL_ENV="+venv)
}

// lookPath finds a tool on the PATH of env (the build's environment, not the control plane's
// own).
func lookPath(env []string, tool string) (string, error) {
	if strings.Contains(tool, "/") {
		return exec.LookPath(tool)
	}
	pathVar := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, tool)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not on PATH", tool)
}

// toolVersion runs `<tool> <args>` and returns its output, trimmed; an error when the tool is
// missing or fails (a pyenv shim of a version not installed).
func toolVersion(ctx context.Context, env []string, tool string, args ...string) (string, error) {
	path, err := lookPath(env, tool)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
