package build

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/cptest"
)

func TestCodeLanguages(t *testing.T) {
	for _, c := range []struct {
		name, config string
		want         languages
	}{
		{"built-in only", `{"graphs": {"a": "echo", "b": {"template": "react"}}}`, languages{}},
		{"python file", `{"graphs": {"a": "./agent/graph.py:graph"}}`, languages{python: true}},
		{"python module", `{"graphs": {"a": "agent.graph:make_graph"}}`, languages{python: true}},
		{"typescript", `{"graphs": {"a": "./src/agent.ts:graph"}}`, languages{typescript: true}},
		{"javascript", `{"graphs": {"a": "./src/agent.mjs:graph"}}`, languages{typescript: true}},
		{"both", `{"graphs": {"a": "./src/agent.ts:graph", "b": "./py/g.py:g", "c": "echo"}}`, languages{python: true, typescript: true}},
		{"dependencies of another type", `{"dependencies": 3, "graphs": {"a": "./g.py:g"}}`, languages{python: true}},
		{"not JSON", `{"graphs": `, languages{}},
		{"graphs not an object", `{"graphs": ["./g.py:g"]}`, languages{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := codeLanguages([]byte(c.config)); got != c.want {
				t.Fatalf("codeLanguages(%s) = %+v, want %+v", c.config, got, c.want)
			}
		})
	}
}

// FuzzCodeLanguages checks that any file reads without a panic, and that a file with no code
// entry (no graph spec with a colon) is never a project.
func FuzzCodeLanguages(f *testing.F) {
	for _, s := range []string{`{"graphs": {"a": "./g.py:g"}}`, `{"graphs": {"a": "echo"}}`, `{"node_version": 20, "graphs": {"a": "./s.ts:g"}}`, `[]`, `{"graphs": null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		l := codeLanguages(raw)
		if (l.python || l.typescript) && !bytes.Contains(raw, []byte(":")) {
			t.Fatalf("codeLanguages(%q) = %+v without a code entry", raw, l)
		}
	})
}

func TestVersions(t *testing.T) {
	for _, c := range []struct {
		raw, found string
		want       bool
	}{
		{`"20"`, "20.20.2", true},
		{`20`, "20.20.2", true},
		{`"20.20"`, "20.20.2", true},
		{`"2"`, "20.20.2", false},
		{`"22"`, "20.20.2", false},
		{`"3.11"`, "3.11.9", true},
		{`3.1`, "3.11.9", false},
		{`"3.11.9"`, "3.11.9", true},
	} {
		if got := versionMatches(c.found, versionOf([]byte(c.raw))); got != c.want {
			t.Errorf("version %s against %s: %v, want %v", c.raw, c.found, got, c.want)
		}
	}
}

func TestFindLock(t *testing.T) {
	for _, c := range []struct {
		name      string
		files     []string
		dir, tool string
	}{
		{"npm", []string{"package-lock.json"}, ".", "npm"},
		{"yarn", []string{"yarn.lock"}, ".", "yarn"},
		{"pnpm", []string{"pnpm-lock.yaml"}, ".", "pnpm"},
		{"bun text", []string{"bun.lock"}, ".", "bun"},
		{"bun binary", []string{"bun.lockb"}, ".", "bun"},
		{"the config's folder first", []string{"yarn.lock", "app/package-lock.json"}, "app", "npm"},
		{"else the root's", []string{"pnpm-lock.yaml", "app/package.json"}, ".", "pnpm"},
		{"none", []string{"app/package.json"}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range c.files {
				p := filepath.Join(root, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			dir, m := findLock(filepath.Join(root, "app"), root)
			switch {
			case c.tool == "" && m != nil:
				t.Fatalf("found %s in %s, want none", m.lock, dir)
			case c.tool == "":
			case m == nil:
				t.Fatalf("found none, want %s", c.tool)
			case m.tool != c.tool || dir != filepath.Join(root, c.dir):
				t.Fatalf("found %s in %s, want %s in %s", m.tool, dir, c.tool, c.dir)
			}
		})
	}
}

// TestCacheKey checks that the parts are framed: moving bytes from one part to the next is
// another key.
func TestCacheKey(t *testing.T) {
	a := cacheKey([]byte("ab"), []byte("c"))
	if b := cacheKey([]byte("a"), []byte("bc")); a == b {
		t.Fatal("cacheKey(ab, c) == cacheKey(a, bc)")
	}
	if a != cacheKey([]byte("ab"), []byte("c")) {
		t.Fatal("cacheKey is not stable")
	}
}

// TestLinkTree checks that the copy's files are the source's (hard links), its symbolic links
// copied, and its folders its own: a file written into the copy is not in the source.
func TestLinkTree(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "pkg", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "pkg", "lib", "index.js"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../pkg/lib/index.js", filepath.Join(src, "bin")); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "node_modules")
	if err := linkTree(src, dst); err != nil {
		t.Fatal(err)
	}
	a, err := os.Stat(filepath.Join(src, "pkg", "lib", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.Stat(filepath.Join(dst, "pkg", "lib", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Sys().(*syscall.Stat_t).Ino != b.Sys().(*syscall.Stat_t).Ino {
		t.Error("the file was copied, not linked")
	}
	if link, err := os.Readlink(filepath.Join(dst, "bin")); err != nil || link != "../pkg/lib/index.js" {
		t.Errorf("the symbolic link: %q %v", link, err)
	}
	if err := os.WriteFile(filepath.Join(dst, "pkg", "new.js"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(src, "pkg", "new.js")); err == nil {
		t.Error("a file written into the copy is in the source")
	}
}

// toolDir is a folder holding only links to the named tools of this machine: the PATH of a
// build environment without the others.
func toolDir(t *testing.T, tools ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range tools {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s is not installed", tool)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestProjectRefused builds LangGraph projects the builder must refuse before it installs
// anything, each with the reason.
func TestProjectRefused(t *testing.T) {
	tools := toolDir(t, "node", "npm", "git")
	env := []string{"PATH=" + tools + ":/usr/bin:/bin", "HOME=" + os.Getenv("HOME")}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	env[0] += ":" + filepath.Dir(py)
	ts := `{"graphs": {"agent": "./src/agent.ts:graph"}}`
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"node_version", map[string]string{"langgraph.json": `{"node_version": "99", "graphs": {"agent": "./src/agent.ts:graph"}}`, "package-lock.json": "{}"},
			"node_version 99: the Node here is "},
		{"no lock file", map[string]string{"langgraph.json": ts, "package.json": "{}"}, "no lock file"},
		{"the lock file's tool missing", map[string]string{"langgraph.json": ts, "package.json": "{}", "bun.lockb": "binary"},
			"bun.lockb needs bun, which is not on the control plane's PATH"},
		{"python_version", map[string]string{"langgraph.json": `{"python_version": "2.7", "dependencies": ["."], "graphs": {"a": "./g.py:g"}}`},
			"python_version 2.7: no Python 2.7"},
		{"no dependencies", map[string]string{"langgraph.json": `{"graphs": {"a": "./g.py:g"}}`}, "dependencies: none named"},
		{"a dependency outside", map[string]string{"langgraph.json": `{"dependencies": [".."], "graphs": {"a": "./g.py:g"}}`},
			`dependencies[0] "..": must be a folder inside the repository`},
		{"a broken pyproject.toml", map[string]string{"langgraph.json": `{"dependencies": ["."], "graphs": {"a": "./g.py:g"}}`,
			"pyproject.toml": "[project\nname = 1\n"}, "pyproject.toml: not valid TOML"},
	} {
		t.Run(c.name, func(t *testing.T) {
			repo := t.TempDir()
			cptest.Commit(t, repo, "main", c.files)
			b := &Builder{Dir: t.TempDir(), Jetgraph: "/nonexistent/jetgraph", Env: env, Timeout: time.Minute}
			spec := controlplane.BuildSpec{DeploymentID: "d", RevisionID: "r", RepoURL: repo, RepoRef: "main", GraphConfigPath: "langgraph.json"}
			var log bytes.Buffer
			_, err := b.Build(context.Background(), spec, &log)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Build: %v, want %q\n%s", err, c.want, &log)
			}
			if strings.Contains(log.String(), "dependencies: installing") {
				t.Errorf("it installed before refusing:\n%s", &log)
			}
			if _, err := os.Stat(b.projectDir(spec.DeploymentID, spec.RevisionID)); err == nil {
				t.Error("a refused build left its project folder")
			}
		})
	}
}

// TestInstallCached installs a project's dependencies twice, with real npm and a real virtual
// environment (projects without packages: nothing is downloaded): the second install is a
// cache hit that runs no command, and a change to what is installed misses.
func TestInstallCached(t *testing.T) {
	tools := toolDir(t, "node", "npm", "python3")
	env := []string{"PATH=" + tools + ":/usr/bin:/bin", "HOME=" + os.Getenv("HOME")}
	b := &Builder{Dir: t.TempDir(), Env: env, Timeout: 3 * time.Minute}
	ctx := context.Background()
	t.Run("node", func(t *testing.T) {
		install := func(pkg string) string {
			t.Helper()
			dir := t.TempDir()
			lock := `{"name": "p", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": {"": {"name": "p", "version": "1.0.0"}}}`
			for name, text := range map[string]string{"package.json": pkg, "package-lock.json": lock} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var log bytes.Buffer
			if _, err := b.installNode(ctx, "", dir, dir, projectConfig{}, env, time.Minute, &log); err != nil {
				t.Fatalf("%v\n%s", err, &log)
			}
			if fi, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil || !fi.IsDir() {
				t.Fatalf("no node_modules: %v\n%s", err, &log)
			}
			return log.String()
		}
		pkg := `{"name": "p", "version": "1.0.0"}`
		if log := install(pkg); !strings.Contains(log, "cache miss") || !strings.Contains(log, "$ npm ci") {
			t.Fatalf("first install:\n%s", log)
		}
		if log := install(pkg); !strings.Contains(log, "dependencies: cache hit") || strings.Contains(log, "$ npm") {
			t.Fatalf("second install:\n%s", log)
		}
		if log := install(`{"name": "p", "version": "1.0.0", "description": "changed"}`); !strings.Contains(log, "cache miss") {
			t.Fatalf("a changed package.json:\n%s", log)
		}
	})
	for _, c := range []struct{ installer, creates string }{{"pip", "-m venv"}, {"uv", "uv venv"}} {
		t.Run("python with "+c.installer, func(t *testing.T) {
			env := env
			if c.installer == "uv" {
				env = []string{"PATH=" + toolDir(t, "python3", "uv") + ":/usr/bin:/bin", "HOME=" + os.Getenv("HOME")}
			}
			install := func(requirements string) (string, string) {
				t.Helper()
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "requirements.txt"), []byte(requirements), 0o644); err != nil {
					t.Fatal(err)
				}
				var log bytes.Buffer
				venv, err := b.installPython(ctx, dir, dir, "langgraph.json", projectConfig{Dependencies: []string{"."}}, env, time.Minute, &log)
				if err != nil {
					t.Fatalf("%v\n%s", err, &log)
				}
				if _, err := os.Stat(filepath.Join(venv, "bin", "python")); err != nil {
					t.Fatalf("no python in the venv: %v\n%s", err, &log)
				}
				return venv, log.String()
			}
			first, log := install("# nothing\n")
			if !strings.Contains(log, "installing with "+c.installer+" (cache miss") || !strings.Contains(log, c.creates) {
				t.Fatalf("first install:\n%s", log)
			}
			again, log := install("# nothing\n")
			if again != first || !strings.Contains(log, "dependencies: cache hit") || strings.Contains(log, "$ ") {
				t.Fatalf("second install (%s, first %s):\n%s", again, first, log)
			}
			if other, log := install("# something else\n"); other == first || !strings.Contains(log, "cache miss") {
				t.Fatalf("changed requirements:\n%s", log)
			}
		})
	}
}

// TestRequirementsKey checks what a requirements file puts in the cache key: the files it
// includes (a change there is another key), and the lines that install the repository's own
// files, which make the environment the revision's alone.
func TestRequirementsKey(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		local string
		err   string
	}{
		{"pinned", map[string]string{"requirements.txt": "langgraph==1.0.0 --hash=sha256:00\n"}, "", ""},
		{"an include", map[string]string{"requirements.txt": "-r base.txt\n", "base.txt": "langgraph\n"}, "", ""},
		{"a constraint", map[string]string{"requirements.txt": "--constraint=c.txt\nlanggraph\n", "c.txt": "langgraph<2\n"}, "", ""},
		{"editable", map[string]string{"requirements.txt": "langgraph\n-e .\n"}, "requirements.txt: -e .", ""},
		{"a path", map[string]string{"requirements.txt": "./libs/tools # ours\n"}, "requirements.txt: ./libs/tools", ""},
		{"a missing include", map[string]string{"requirements.txt": "-r nowhere.txt\n"}, "", "no such file"},
		{"an include outside", map[string]string{"requirements.txt": "-r ../../etc/passwd\n"}, "", "not in the repository"},
		{"an include of itself", map[string]string{"requirements.txt": "-r requirements.txt\n"}, "", "more than 8 deep"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for name, body := range c.files {
				if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var r pythonRequirements
			err := r.addRequirementsFile(root, filepath.Join(root, "requirements.txt"), 0)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || r.local != c.local {
				t.Fatalf("local %q, error %v; want %q", r.local, err, c.local)
			}
			if len(r.parts) != 2*len(c.files) {
				t.Fatalf("%d parts for %d files", len(r.parts), len(c.files))
			}
		})
	}
}
