package build

import (
	"bytes"
	"context"
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
)

// pythonVersionScript prints the interpreter's version, major.minor.micro.
const pythonVersionScript = `import sys; print("%d.%d.%d" % sys.version_info[:3])`

// pyprojectScript prints the [project].dependencies of the pyproject.toml it is given, as JSON;
// a file that is no TOML is an error naming the line and column.
const pyprojectScript = `
import json, sys, tomllib
try:
    with open(sys.argv[1], "rb") as f:
        doc = tomllib.load(f)
except tomllib.TOMLDecodeError as e:
    sys.exit("not valid TOML: %s" % e)
deps = doc.get("project", {}).get("dependencies", [])
if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
    sys.exit("[project].dependencies must be a list of strings")
print(json.dumps(deps))
`

// findPython returns the interpreter of a project and its version: python<want> on PATH when
// langgraph.json asks for a python_version (else python3), refused when its version is not it.
func findPython(ctx context.Context, env []string, want string) (string, string, error) {
	tools := []string{"python3"}
	if want != "" {
		tools = []string{"python" + want, "python3"}
	}
	var found []string
	for _, tool := range tools {
		version, err := toolVersion(ctx, env, tool, "-c", pythonVersionScript)
		if err != nil {
			continue
		}
		if want == "" || versionMatches(version, want) {
			path, _ := lookPath(env, tool)
			return path, version, nil
		}
		found = append(found, tool+" is "+version)
	}
	if want == "" {
		return "", "", failed("Python graphs need Python: no python3 on the control plane's PATH")
	}
	if len(found) == 0 {
		found = []string{"no python3 either"}
	}
	return "", "", failed("python_version %s: no Python %s on the control plane's PATH (%s)", want, want, strings.Join(found, ", "))
}

// pythonRequirements is what a project's dependencies install: requirements files (pip -r)
// and requirement specifiers, and the cache key's parts, which are their contents.
type pythonRequirements struct {
	files, specs []string
	parts        [][]byte
	// local is a requirement that installs the repository's own files (-e, a path): the
	// environment is then the revision's alone, as its key cannot say what those files hold.
	local string
}

// maxIncludes bounds the nesting of requirements files (-r, -c).
const maxIncludes = 8

// addRequirementsFile adds a requirements file and the files it includes (-r, -c, resolved
// from its folder, inside the repository) to the cache key's parts, and notes a line that
// installs local files.
func (r *pythonRequirements) addRequirementsFile(root, file string, depth int) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	r.parts = append(r.parts, []byte("requirements "+rel(root, file)), raw)
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, " #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		opt, arg, _ := strings.Cut(line, " ")
		if o, a, ok := strings.Cut(opt, "="); ok && strings.HasPrefix(o, "--") {
			opt, arg = o, a
		}
		arg = strings.TrimSpace(arg)
		switch {
		case opt == "-r" || opt == "--requirement" || opt == "-c" || opt == "--constraint":
			inc := filepath.Clean(filepath.Join(filepath.Dir(file), arg))
			if inc != root && !strings.HasPrefix(inc, root+string(filepath.Separator)) {
				return fmt.Errorf("%s includes %s, which is not in the repository", rel(root, file), arg)
			}
			if depth >= maxIncludes {
				return fmt.Errorf("%s: requirements files included more than %d deep", rel(root, file), maxIncludes)
			}
			if err := r.addRequirementsFile(root, inc, depth+1); err != nil {
				return err
			}
		case opt == "-e" || opt == "--editable" || strings.HasPrefix(line, ".") || strings.HasPrefix(line, "/") ||
			strings.HasPrefix(line, "file:"):
			if r.local == "" {
				r.local = rel(root, file) + ": " + line
			}
		}
	}
	return nil
}

// pythonRequirementsOf reads langgraph.json's dependencies: a package specifier is installed
// as written; a local folder ("." or "./pkg", inside the repository) is put on the graphs'
// import path by the host, and what it declares is installed: its requirements.txt and its
// pyproject.toml's [project].dependencies.
func pythonRequirementsOf(ctx context.Context, python, root, cfgDir, cfgPath string, deps []string) (pythonRequirements, error) {
	var r pythonRequirements
	if len(deps) == 0 {
		return r, failed("%s: dependencies: none named; list what the graphs need (\".\" installs the requirements.txt or pyproject.toml beside it)", cfgPath)
	}
	for i, d := range deps {
		if !strings.HasPrefix(d, ".") && !filepath.IsAbs(d) {
			r.specs = append(r.specs, d)
			r.parts = append(r.parts, []byte("package"), []byte(d))
			continue
		}
		dir := filepath.Clean(filepath.Join(cfgDir, d))
		if filepath.IsAbs(d) || (dir != root && !strings.HasPrefix(dir, root+string(filepath.Separator))) {
			return r, failed("%s: dependencies[%d] %q: must be a folder inside the repository", cfgPath, i, d)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return r, failed("%s: dependencies[%d] %q: no such folder in the repository", cfgPath, i, d)
		}
		req := filepath.Join(dir, "requirements.txt")
		if _, err := os.Stat(req); err == nil {
			if err := r.addRequirementsFile(root, req, 0); err != nil {
				return r, failed("%s: %v", cfgPath, err)
			}
			r.files = append(r.files, req)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return r, fmt.Errorf("build: %w", err)
		}
		pyproject := filepath.Join(dir, "pyproject.toml")
		if _, err := os.Stat(pyproject); err == nil {
			specs, err := pyprojectDependencies(ctx, python, pyproject)
			if err != nil {
				return r, failed("%s: %v", rel(root, pyproject), err)
			}
			r.specs = append(r.specs, specs...)
			r.parts = append(r.parts, []byte("pyproject "+rel(root, pyproject)), []byte(strings.Join(specs, "\n")))
		}
	}
	return r, nil
}

// pyprojectDependencies reads a pyproject.toml's [project].dependencies with the project's
// Python (tomllib).
func pyprojectDependencies(ctx context.Context, python, file string) ([]string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, python, "-c", pyprojectScript, file)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			lines := strings.Split(msg, "\n")
			return nil, errors.New(lines[len(lines)-1])
		}
		return nil, err
	}
	var specs []string
	if err := json.Unmarshal(stdout.Bytes(), &specs); err != nil {
		return nil, err
	}
	return specs, nil
}

// installPython makes the virtual environment of a project's Python graphs, or finds the one
// an earlier build made of the same requirements and Python: it is shared, and never changed
// once complete. It returns its folder.
func (b *Builder) installPython(ctx context.Context, root, cfgDir, cfgPath string, cfg projectConfig, env []string,
	timeout time.Duration, log io.Writer) (string, error) {
	python, version, err := findPython(ctx, env, versionOf(cfg.PythonVersion))
	if err != nil {
		return "", err
	}
	fmt.Fprintf(log, "python %s (%s)\n", version, python)
	reqs, err := pythonRequirementsOf(ctx, python, root, cfgDir, cfgPath, cfg.Dependencies)
	if err != nil {
		return "", err
	}
	installer := "pip"
	uv, uvErr := lookPath(env, "uv")
	if uvErr == nil {
		installer = "uv"
	}
	parts := append([][]byte{[]byte("python " + version + " " + python), []byte(installer)}, reqs.parts...)
	if reqs.local != "" {
		fmt.Fprintf(log, "dependencies: %s installs the repository's own files: this revision's environment is its own\n", reqs.local)
		parts = append(parts, []byte("local "+root)) // the revision's folder: its environment alone
	}
	key := cacheKey(parts...)
	venv := filepath.Join(b.cache(), "python", key)
	unlock, err := cacheLock(venv)
	if err != nil {
		return "", fmt.Errorf("build: the dependency cache: %w", err)
	}
	defer unlock()
	if complete(venv) {
		fmt.Fprintf(log, "dependencies: cache hit %s (the same requirements): virtual environment reused, nothing downloaded\n", shortKey(key))
		return venv, nil
	}
	fmt.Fprintf(log, "dependencies: installing with %s (cache miss %s)\n", installer, shortKey(key))
	if err := os.RemoveAll(venv); err != nil {
		return "", fmt.Errorf("build: the dependency cache: %w", err)
	}
	venvPython := filepath.Join(venv, "bin", "python")
	create := step{"python -m venv", cfgDir, []string{python, "-m", "venv", venv}}
	install := step{"pip install", cfgDir, []string{venvPython, "-m", "pip", "install", "--disable-pip-version-check", "--no-input"}}
	if installer == "uv" {
		create = step{"uv venv", cfgDir, []string{uv, "venv", "--python", python, venv}}
		install = step{"uv pip install", cfgDir, []string{uv, "pip", "install", "--python", venvPython}}
	}
	if err := b.run(ctx, create, env, timeout, log); err != nil {
		return "", err
	}
	for _, f := range reqs.files {
		install.args = append(install.args, "-r", f)
	}
	install.args = append(install.args, reqs.specs...)
	if len(reqs.files)+len(reqs.specs) > 0 {
		if err := b.run(ctx, install, withVenv(env, venv), timeout, log); err != nil {
			_ = os.RemoveAll(venv)
			return "", err
		}
	}
	if err := markComplete(venv); err != nil {
		return "", fmt.Errorf("build: the dependency cache: %w", err)
	}
	fmt.Fprintf(log, "dependencies: cached as %s\n", shortKey(key))
	return venv, nil
}
