// Package cptest holds what the control plane's tests share: real git repositories made by the
// test, and the jetgraph binary and Go toolchain they build and run revisions with.
package cptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Commit writes files (path -> content; "" deletes) into the git repository at dir on branch,
// creating the repository and the branch (from the current HEAD) as needed, commits them and
// returns the commit's sha.
func Commit(t testing.TB, dir, branch string, files map[string]string) string {
	t.Helper()
	r, err := git.PlainOpen(dir)
	if err != nil {
		if r, err = git.PlainInit(dir, false); err != nil {
			t.Fatal(err)
		}
		// The first commit makes the branch; HEAD names it.
		if err := r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(branch))); err != nil {
			t.Fatal(err)
		}
	}
	w, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if head, err := r.Head(); err == nil && head.Name() != plumbing.NewBranchReferenceName(branch) {
		_, exists := r.Reference(plumbing.NewBranchReferenceName(branch), false)
		if err := w.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName(branch), Create: exists != nil}); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if content == "" {
			if _, err := w.Remove(name); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Add(name); err != nil {
			t.Fatal(err)
		}
	}
	sig := &object.Signature{Name: "test", Email: "test@example.com", When: time.Now()}
	h, err := w.Commit("test commit", &git.CommitOptions{Author: sig, AllowEmptyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

// Tag makes the lightweight tag name point to commit sha of the repository at dir.
func Tag(t testing.TB, dir, name, sha string) {
	t.Helper()
	r, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.CreateTag(name, plumbing.NewHash(sha), nil); err != nil {
		t.Fatal(err)
	}
}

// Root is the jetgraph module's folder.
func Root(t testing.TB) string {
	t.Helper()
	out, err := exec.Command(GoTool(), "list", "-m", "-f", "{{.Dir}}", "github.com/jetgraph/jetgraph").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// GoTool is the go command of the toolchain running the tests: go test puts its GOROOT/bin first
// on the PATH of the test binary (since Go 1.19), so the first go on PATH is that toolchain's.
func GoTool() string {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "go"
	}
	return goTool
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Main runs a test package that uses Jetgraph and returns its exit code, having removed the
// binary Jetgraph built (85 MB a package per `go test` otherwise left in the temporary folder):
// call it from the package's TestMain, os.Exit(cptest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if binPath != "" && os.Getenv("JETGRAPH_BIN") == "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	return code
}

// Jetgraph builds ./cmd/jetgraph once per test process (or takes $JETGRAPH_BIN) and returns
// its path. The package's TestMain removes it (Main).
func Jetgraph(t testing.TB) string {
	t.Helper()
	root := Root(t)
	binOnce.Do(func() {
		if bin := os.Getenv("JETGRAPH_BIN"); bin != "" {
			binPath, binErr = filepath.Abs(bin)
			return
		}
		dir, err := os.MkdirTemp("", "jetgraph-cptest-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "jetgraph")
		cmd := exec.Command(GoTool(), "build", "-o", binPath, "./cmd/jetgraph")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/jetgraph: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// UserModule is the files of a Go module with graphs of its own (the README's "Your own graph
// in Go", cmd/jetgraph/cli/testdata/usermodule) whose jetgraph is the checkout at root, with a
// graph.json serving its greeter as greet. mainGo replaces main.go when not empty.
func UserModule(t testing.TB, root, mainGo string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for name, path := range map[string]string{
		"main.go": "cmd/jetgraph/cli/testdata/usermodule/main.go",
		"go.mod":  "cmd/jetgraph/cli/testdata/usermodule/go.mod",
		"go.sum":  "go.sum",
	} {
		raw, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(raw)
	}
	files["go.mod"] += "\nreplace github.com/jetgraph/jetgraph => " + root + "\n"
	if mainGo != "" {
		files["main.go"] = mainGo
	}
	files["graph.json"] = `{"graphs": {"greet": "greeter", "shout": "shouter"}}`
	return files
}

// BuildEnv is the environment of a test's builds: the toolchain's, offline (everything comes
// from the module cache that building jetgraph filled).
func BuildEnv() []string {
	env := []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off"}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "GOPATH", "GOCACHE", "GOMODCACHE", "GOROOT"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
