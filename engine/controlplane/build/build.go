// Package build builds a git_host revision: it clones the repository at the revision's ref,
// checks its graph.json with the runtime that will serve it, and, for a Go module with graphs of
// its own, compiles the program and keeps the binary in the control plane's object store, so
// that any process of a cluster can deploy it. A LangGraph project (a langgraph.json naming
// Python or TypeScript graphs) gets its dependencies installed, from a cache shared by the
// revisions whose dependencies are the same, and its built folder kept in the object store too
// (project.go).
package build

import (
	"bytes"
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
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane"
)

// Objects is where built binaries and projects are kept: the control plane's JetStream object
// store (eventlog.Objects).
type Objects interface {
	Put(ctx context.Context, name string, data []byte) error
	Get(ctx context.Context, name string) ([]byte, error)
}

// DefaultGraphConfig is the graph config path of a revision that names none.
const DefaultGraphConfig = "graph.json"

// DefaultTimeout bounds a revision's install and build commands when Builder.Timeout is 0.
const DefaultTimeout = 10 * time.Minute

// OutputEnv names, in the environment of a revision's build_command, the path the command must
// write the program to.
const OutputEnv = "JETGRAPH_BUILD_OUTPUT"

// Builder builds git_host revisions (controlplane.Builder).
type Builder struct {
	// Dir holds the clones and outputs of the builds in progress; each build removes its own.
	Dir string
	// Jetgraph is the jetgraph binary, which checks the graph.json of a repository that uses
	// only built-in graphs (it will serve it).
	Jetgraph string
	// Go is the go command; empty is "go" on PATH.
	Go string
	// Env is the environment of the install and build commands and of the checks; nil is
	// MinimalEnv().
	Env []string
	// Objects keeps the built binaries.
	Objects Objects
	// Projects is where built LangGraph projects (Python or TypeScript graphs) are kept:
	// <Projects>/<deployment_id>/<revision_id>/project, the deployer's folder of the revision
	// (supervise.Supervisor.Dir), so that removing the deployment removes them. Empty is Dir.
	Projects string
	// Cache holds the projects' installed dependencies, reused by every revision whose lock
	// file (TypeScript) or requirements (Python) are the same; empty is <Dir>/cache.
	Cache string
	// Timeout bounds the install and build commands together; 0 is DefaultTimeout.
	Timeout time.Duration
}

// MinimalEnv is the environment a build gets by default: where the tools are and where Go keeps
// its caches, none of the control plane's own secrets.
func MinimalEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "GOPATH", "GOCACHE", "GOMODCACHE", "GOPROXY", "GOFLAGS",
		"GONOSUMDB", "GOPRIVATE", "GOTOOLCHAIN", "GOROOT"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// failed is a build failure whose text is the reason the revision records.
func failed(format string, args ...any) error {
	return engine.E(engine.Op("build"), engine.Invalid, fmt.Sprintf(format, args...))
}

// Build clones spec's repository at its ref and builds it. A repository with a go.mod at its
// root is a Go module with graphs of its own: it is compiled (ArtifactBinary); any other runs on
// the jetgraph binary with its graph.json (ArtifactConfig).
func (b *Builder) Build(ctx context.Context, spec controlplane.BuildSpec, log io.Writer) (controlplane.Artifact, error) {
	cfgPath, err := graphConfigPath(spec.GraphConfigPath)
	if err != nil {
		return controlplane.Artifact{}, err
	}
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		return controlplane.Artifact{}, fmt.Errorf("build: %w", err)
	}
	work, err := os.MkdirTemp(b.Dir, "build-")
	if err != nil {
		return controlplane.Artifact{}, fmt.Errorf("build: %w", err)
	}
	defer os.RemoveAll(work)
	repo := filepath.Join(work, "repo")
	sha, err := clone(ctx, spec.RepoURL, spec.RepoRef, repo, log)
	if err != nil {
		return controlplane.Artifact{}, err
	}
	art := controlplane.Artifact{CommitSHA: sha}
	cfgFile := filepath.Join(repo, filepath.FromSlash(cfgPath))
	if art.Config, err = os.ReadFile(cfgFile); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return art, failed("%s: no such file in %s at %s (%s)", cfgPath, spec.RepoURL, spec.RepoRef, short(sha))
		}
		return art, failed("%s: %v", cfgPath, err)
	}
	if !json.Valid(art.Config) {
		return art, failed("%s: not valid JSON", cfgPath)
	}
	if _, err := os.Stat(filepath.Join(repo, "go.mod")); err != nil {
		if langs := codeLanguages(art.Config); langs.python || langs.typescript {
			return b.buildProject(ctx, spec, repo, cfgPath, art, langs, log)
		}
	}
	program := b.Jetgraph
	art.Kind = controlplane.ArtifactConfig
	if _, err := os.Stat(filepath.Join(repo, "go.mod")); err == nil {
		art.Kind = controlplane.ArtifactBinary
		program = filepath.Join(work, "program")
		if err := b.compile(ctx, spec, repo, filepath.Dir(cfgFile), program, log); err != nil {
			return art, err
		}
	}
	if err := b.check(ctx, program, cfgFile, cfgPath, log); err != nil {
		return art, err
	}
	if art.Kind == controlplane.ArtifactBinary {
		bin, err := os.ReadFile(program)
		if err != nil {
			return art, fmt.Errorf("build: read the program: %w", err)
		}
		sum := sha256.Sum256(bin)
		art.Digest = hex.EncodeToString(sum[:])
		art.Object = ObjectPrefix(spec.DeploymentID) + spec.RevisionID
		if err := b.Objects.Put(ctx, art.Object, bin); err != nil {
			return art, fmt.Errorf("build: store the program: %w", err)
		}
		fmt.Fprintf(log, "stored the program (%d bytes, sha256 %s) as %s\n", len(bin), art.Digest, art.Object)
	}
	fmt.Fprintf(log, "built %s revision of %s at %s\n", art.Kind, spec.RepoURL, short(sha))
	return art, nil
}

// ObjectPrefix starts the names of a deployment's programs in the object store: removing the
// deployment deletes them.
func ObjectPrefix(deploymentID string) string { return "revisions/" + deploymentID + "/" }

// graphConfigPath is the revision's graph config path, checked to stay inside the repository.
func graphConfigPath(p string) (string, error) {
	if p == "" {
		return DefaultGraphConfig, nil
	}
	clean := path.Clean(filepath.ToSlash(p))
	if path.IsAbs(clean) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", failed("graph_config_path %q: must be a file inside the repository", p)
	}
	return clean, nil
}

// refName is the reference a revision's repo_ref names: a full reference (refs/tags/v1) as
// is, anything else a branch.
func refName(ref string) plumbing.ReferenceName {
	if strings.HasPrefix(ref, "refs/") {
		return plumbing.ReferenceName(ref)
	}
	return plumbing.NewBranchReferenceName(ref)
}

// clone checks repoURL's ref out into dir and returns its commit.
func clone(ctx context.Context, repoURL, ref, dir string, log io.Writer) (string, error) {
	if repoURL == "" {
		return "", failed("repo_url is empty")
	}
	if ref == "" {
		return "", failed("repo_ref is empty")
	}
	fmt.Fprintf(log, "cloning %s at %s\n", repoURL, ref)
	r, err := git.PlainCloneContext(ctx, dir, false, &git.CloneOptions{
		URL: repoURL, ReferenceName: refName(ref), SingleBranch: true, Depth: 1, Tags: git.NoTags, Progress: log,
	})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", failed("clone %s at %s: %v", repoURL, ref, err)
	}
	head, err := r.Head()
	if err != nil {
		return "", failed("clone %s at %s: %v", repoURL, ref, err)
	}
	sha := head.Hash().String()
	fmt.Fprintf(log, "checked out %s\n", sha)
	return sha, nil
}

// compile runs the revision's install command (from the repository's root), then its build
// command or `go build` (from the graph config's folder), writing the program to out.
func (b *Builder) compile(ctx context.Context, spec controlplane.BuildSpec, repo, pkg, out string, log io.Writer) error {
	timeout := b.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var steps []step
	if spec.InstallCommand != "" {
		steps = append(steps, step{"install_command", repo, []string{"/bin/sh", "-c", spec.InstallCommand}})
	}
	build := []string{b.goTool(), "build", "-o", out, "."}
	if spec.BuildCommand != "" {
		build = []string{"/bin/sh", "-c", spec.BuildCommand}
	}
	steps = append(steps, step{"build", pkg, build})
	for _, s := range steps {
		if err := b.run(ctx, s, append(b.env(), OutputEnv+"="+out), timeout, log); err != nil {
			return err
		}
	}
	if fi, err := os.Stat(out); err != nil || !fi.Mode().IsRegular() {
		return failed("build: the build command wrote no program to $%s", OutputEnv)
	}
	return nil
}

// step is a command of a build, run from dir.
type step struct {
	name, dir string
	args      []string
}

// run runs a step of a build with env, its output to log; a failure's reason ends with the end
// of that output (where tools put their errors). timeout is the bound of ctx, for the reason.
func (b *Builder) run(ctx context.Context, s step, env []string, timeout time.Duration, log io.Writer) error {
	fmt.Fprintf(log, "$ %s\n", strings.Join(s.args, " "))
	cmd := exec.CommandContext(ctx, s.args[0], s.args[1:]...)
	cmd.Dir = s.dir
	cmd.Env = env
	tail := &tailWriter{max: 4096}
	cmd.Stdout, cmd.Stderr = io.MultiWriter(log, tail), io.MultiWriter(log, tail)
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return failed("%s: timed out after %v", s.name, timeout)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return failed("%s failed (%v): %s", s.name, err, strings.TrimSpace(tail.String()))
	}
	return nil
}

// check runs `config check` of the program that will serve the graph config, so that the
// graph.json is validated by the very runtime of the revision.
func (b *Builder) check(ctx context.Context, program, cfgFile, cfgPath string, log io.Writer) error {
	return b.checkWith(ctx, program, cfgFile, cfgPath, nil, b.env(), log)
}

// checkWith is check with extra arguments and the environment of the check.
func (b *Builder) checkWith(ctx context.Context, program, cfgFile, cfgPath string, extra, env []string, log io.Writer) error {
	fmt.Fprintf(log, "checking %s\n", cfgPath)
	var stdout, stderr bytes.Buffer
	args := append([]string{"config", "check", "--config", cfgFile, "--log-format", "json"}, extra...)
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Env = env
	cmd.Dir = filepath.Dir(cfgFile)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		_, _ = log.Write(stderr.Bytes())
		return failed("%s is invalid: %s", cfgPath, checkReason(stderr.Bytes(), cfgFile, cfgPath, err))
	}
	fmt.Fprintf(log, "graphs: %s\n", strings.Join(strings.Fields(stdout.String()), ", "))
	return nil
}

// checkReason is the message of the last error `config check` logged (JSON lines), with the
// build's path of the file replaced by its path in the repository.
func checkReason(stderr []byte, cfgFile, cfgPath string, runErr error) string {
	lines := bytes.Split(bytes.TrimSpace(stderr), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var rec struct {
			Level, Msg string
		}
		if json.Unmarshal(lines[i], &rec) == nil && rec.Level == "ERROR" {
			msg := strings.ReplaceAll(rec.Msg, cfgFile+": ", "")
			return strings.ReplaceAll(msg, cfgFile, cfgPath)
		}
	}
	if len(lines) > 0 && len(lines[len(lines)-1]) > 0 {
		return string(lines[len(lines)-1])
	}
	return runErr.Error()
}

func (b *Builder) timeout() time.Duration {
	if b.Timeout > 0 {
		return b.Timeout
	}
	return DefaultTimeout
}

func (b *Builder) goTool() string {
	if b.Go != "" {
		return b.Go
	}
	return "go"
}

func (b *Builder) env() []string {
	if b.Env != nil {
		return b.Env
	}
	return MinimalEnv()
}

// short is a commit's abbreviation, for messages.
func short(sha string) string { return sha[:min(len(sha), 12)] }

// tailWriter keeps the last max bytes written to it: the end of a failed command's output,
// where compilers put their errors, for the reason.
type tailWriter struct {
	max int
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tailWriter) String() string { return string(t.buf) }
