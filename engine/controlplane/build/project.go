package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
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
func (b *Builder) projectDir(deploymentID, revisionID string) string {
	root := b.Projects
	if root == "" {
		root = b.Dir
	}
	return filepath.Join(root, deploymentID, revisionID, "project")
}

func (b *Builder) cache() string {
	if b.Cache != "" {
		return b.Cache
	}
	return filepath.Join(b.Dir, "cache")
}

// buildProject builds a LangGraph project checked out at repo: it moves it to the revision's
// folder (where it runs, so that nothing installed there points back to the build's folder),
// installs its dependencies, runs its build_command, loads its graphs once, and keeps its files
// (without the installed dependencies) in the object store, from which any process of a
// cluster makes the same folder (Project).
func (b *Builder) buildProject(ctx context.Context, spec controlplane.BuildSpec, repo, cfgPath string, art controlplane.Artifact,
	langs languages, log io.Writer) (controlplane.Artifact, error) {
	var cfg projectConfig
	if err := json.Unmarshal(art.Config, &cfg); err != nil {
		return art, failed("%s is invalid: %v", cfgPath, err)
	}
	timeout := b.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dir, err := b.freshProjectDir(spec.DeploymentID, spec.RevisionID)
	if err != nil {
		return art, err
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
	deps, err := b.installDeps(ctx, dir, cfgPath, cfg, langs, spec.InstallCommand, timeout, log)
	if err != nil {
		return art, err
	}
	if spec.InstallCommand != "" && !langs.typescript { // TypeScript's install is install_command
		if err := b.run(ctx, step{"install_command", dir, []string{"/bin/sh", "-c", spec.InstallCommand}}, deps.env, timeout, log); err != nil {
			return art, err
		}
	}
	if spec.BuildCommand != "" {
		if err := b.run(ctx, step{"build_command", filepath.Dir(cfgFile), []string{"/bin/sh", "-c", spec.BuildCommand}}, deps.env, timeout, log); err != nil {
			return art, err
		}
	}
	checkEnv := append([]string{}, deps.env...)
	for _, s := range spec.Secrets {
		checkEnv = append(checkEnv, s.Name+"="+s.Value)
	}
	var extra []string
	if deps.venv != "" {
		extra = []string{"--python", filepath.Join(deps.venv, "bin", "python")}
	}
	if err := b.checkWith(ctx, b.Jetgraph, cfgFile, cfgPath, extra, checkEnv, log); err != nil {
		return art, err
	}
	files, err := packProject(dir, deps.skip)
	if err != nil {
		return art, failed("keep the built project: %v", err)
	}
	sum := sha256.Sum256(files)
	art.Kind, art.ConfigFile, art.InstallCommand = controlplane.ArtifactProject, cfgPath, spec.InstallCommand
	art.Digest, art.Object = hex.EncodeToString(sum[:]), ObjectPrefix(spec.DeploymentID)+spec.RevisionID
	if err := b.Objects.Put(ctx, art.Object, files); err != nil {
		return art, fmt.Errorf("build: store the project: %w", err)
	}
	fmt.Fprintf(log, "stored the project's files (%d bytes, sha256 %s, without its dependencies) as %s\n", len(files), art.Digest, art.Object)
	if err := writeReady(dir, art.Digest, deps.venv); err != nil {
		return art, fmt.Errorf("build: %w", err)
	}
	built = true
	fmt.Fprintf(log, "built %s revision of %s at %s\n", art.Kind, spec.RepoURL, short(art.CommitSHA))
	return art, nil
}

// freshProjectDir returns the folder of a revision's project, absolute, made empty (a build or
// a restore resumed after a crash finds the folder of the one that stopped), its parent made.
func (b *Builder) freshProjectDir(deploymentID, revisionID string) (string, error) {
	dir, err := filepath.Abs(b.projectDir(deploymentID, revisionID))
	if err == nil {
		if err = os.Remove(readyFile(dir)); errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
	}
	if err == nil {
		err = os.RemoveAll(dir)
	}
	if err == nil {
		err = os.MkdirAll(filepath.Dir(dir), 0o700)
	}
	if err != nil {
		return "", fmt.Errorf("build: %w", err)
	}
	return dir, nil
}

// projectDeps is what installDeps made: the environment of the project's commands, its
// virtual environment, the folders of its installed packages (relative to the project).
type projectDeps struct {
	env  []string
	venv string
	skip map[string]bool
}

// installDeps installs a project's dependencies in its folder dir (TypeScript: node_modules)
// and in the cache (Python: a virtual environment), reusing what an earlier build made of the
// same lock file or requirements.
func (b *Builder) installDeps(ctx context.Context, dir, cfgPath string, cfg projectConfig, langs languages, installCommand string,
	timeout time.Duration, log io.Writer) (projectDeps, error) {
	deps := projectDeps{env: b.env(), skip: map[string]bool{}}
	cfgDir := filepath.Dir(filepath.Join(dir, filepath.FromSlash(cfgPath)))
	if langs.typescript {
		bin, err := b.installNode(ctx, installCommand, dir, cfgDir, cfg, deps.env, timeout, log)
		if err != nil {
			return deps, err
		}
		deps.env = prependPath(deps.env, bin)
		deps.skip[rel(dir, filepath.Dir(bin))] = true
	}
	if langs.python {
		venv, err := b.installPython(ctx, dir, cfgDir, cfgPath, cfg, deps.env, timeout, log)
		if err != nil {
			return deps, err
		}
		deps.env, deps.venv = withVenv(deps.env, venv), venv
	}
	return deps, nil
}

// ready is what the file beside a project folder says once the folder is complete: the
// archive it is (its digest) and the virtual environment its Python graphs run in.
type ready struct {
	Digest string `json:"digest"`
	Venv   string `json:"venv,omitempty"`
}

// readyFile is the file that says a project folder is complete: beside it, so that no file of
// the repository can pass for it.
func readyFile(dir string) string { return filepath.Join(filepath.Dir(dir), "project.ready.json") }

func writeReady(dir, digest, venv string) error {
	raw, err := json.Marshal(ready{Digest: digest, Venv: venv})
	if err != nil {
		return err
	}
	return os.WriteFile(readyFile(dir), raw, 0o600)
}

// Project makes a built project's folder ready on this process and returns its langgraph.json
// and its virtual environment ("" without Python graphs): the folder its build made, or, on
// another process of a cluster (or after the folder was lost), its files from the object store
// (checked against the artifact's digest) with its dependencies installed as its build did
// (from this process's cache when it has them). A revision's folder is never changed once
// ready: a redeploy runs the very same files.
func (b *Builder) Project(ctx context.Context, spec controlplane.DeploySpec, log io.Writer) (string, string, error) {
	const op = "deployments.deploy"
	art := spec.Artifact
	cfgPath, err := graphConfigPath(art.ConfigFile)
	if err != nil {
		return "", "", err
	}
	dir, err := filepath.Abs(b.projectDir(spec.DeploymentID, spec.RevisionID))
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", op, err)
	}
	cfgFile := filepath.Join(dir, filepath.FromSlash(cfgPath))
	var r ready
	if raw, err := os.ReadFile(readyFile(dir)); err == nil && json.Unmarshal(raw, &r) == nil && r.Digest == art.Digest {
		return cfgFile, r.Venv, nil
	}
	fmt.Fprintf(log, "making the project's folder on this process from %s\n", art.Object)
	files, err := b.Objects.Get(ctx, art.Object)
	if err != nil {
		return "", "", fmt.Errorf("%s: fetch the project %s: %w", op, art.Object, err)
	}
	if sum := sha256.Sum256(files); hex.EncodeToString(sum[:]) != art.Digest {
		return "", "", engine.E(engine.Op(op), engine.Invalid, fmt.Sprintf("the project %s has not the artifact's digest %s", art.Object, art.Digest))
	}
	if dir, err = b.freshProjectDir(spec.DeploymentID, spec.RevisionID); err != nil {
		return "", "", err
	}
	if err := unpackProject(files, dir); err != nil {
		return "", "", fmt.Errorf("%s: %w", op, err)
	}
	var cfg projectConfig
	if err := json.Unmarshal(art.Config, &cfg); err != nil {
		return "", "", fmt.Errorf("%s: %s: %w", op, cfgPath, err)
	}
	timeout := b.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	deps, err := b.installDeps(ctx, dir, cfgPath, cfg, codeLanguages(art.Config), art.InstallCommand, timeout, log)
	if err != nil {
		return "", "", err
	}
	if err := writeReady(dir, art.Digest, deps.venv); err != nil {
		return "", "", fmt.Errorf("%s: %w", op, err)
	}
	return cfgFile, deps.venv, nil
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
