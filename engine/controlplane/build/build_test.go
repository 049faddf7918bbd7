package build_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/build"
	"github.com/jetgraph/jetgraph/engine/controlplane/cptest"
	"github.com/jetgraph/jetgraph/eventlog"
)

// newBuilder is a builder on a real embedded JetStream object store.
func newBuilder(t *testing.T) (*build.Builder, *eventlog.Objects) {
	t.Helper()
	ctx := context.Background()
	l, err := eventlog.Open(ctx, eventlog.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	objs, err := l.OpenObjects(ctx, "TEST_REVISIONS", 0)
	if err != nil {
		t.Fatal(err)
	}
	return &build.Builder{Dir: t.TempDir(), Jetgraph: cptest.Jetgraph(t), Go: cptest.GoTool(), Env: cptest.BuildEnv(),
		Objects: objs, Timeout: 5 * time.Minute}, objs
}

// TestBuildConfig builds repositories that use built-in graphs only: the artifact is the
// graph.json of the ref's commit (a branch or a tag), checked by the jetgraph binary.
func TestBuildConfig(t *testing.T) {
	b, _ := newBuilder(t)
	repo := t.TempDir()
	v1 := cptest.Commit(t, repo, "main", map[string]string{"graph.json": `{"graphs": {"one": "echo"}}`})
	cptest.Tag(t, repo, "v1", v1)
	v2 := cptest.Commit(t, repo, "main", map[string]string{"graph.json": `{"graphs": {"two": "echo"}}`})
	sub := cptest.Commit(t, repo, "other", map[string]string{"deploy/graphs.json": `{"graphs": {"three": {"template": "react"}}}`})
	for _, c := range []struct {
		name      string
		spec      controlplane.BuildSpec
		sha, want string
	}{
		{"branch", controlplane.BuildSpec{RepoURL: repo, RepoRef: "main"}, v2, "two"},
		{"tag", controlplane.BuildSpec{RepoURL: repo, RepoRef: "refs/tags/v1"}, v1, "one"},
		{"file URL and config path", controlplane.BuildSpec{RepoURL: "file://" + repo, RepoRef: "other", GraphConfigPath: "deploy/graphs.json"}, sub, "three"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			art, err := b.Build(context.Background(), c.spec, &log)
			if err != nil {
				t.Fatalf("%v\n%s", err, &log)
			}
			if art.Kind != controlplane.ArtifactConfig || art.CommitSHA != c.sha || !strings.Contains(string(art.Config), `"`+c.want+`"`) {
				t.Errorf("artifact %+v, want a config at %s serving %s", art, c.sha, c.want)
			}
			if !strings.Contains(log.String(), "graphs: "+c.want) {
				t.Errorf("the log does not show the check:\n%s", &log)
			}
		})
	}
}

// TestBuildFailures checks that a broken repository, ref, graph.json or Go build fails the
// build with the reason as the error's text, and the log shows the output.
func TestBuildFailures(t *testing.T) {
	b, _ := newBuilder(t)
	repo := t.TempDir()
	cptest.Commit(t, repo, "main", map[string]string{"graph.json": `{"graphs": {"one": "echo"}}`})
	cptest.Commit(t, repo, "unknown-graph", map[string]string{"graph.json": `{"graphs": {"one": "nope"}}`})
	cptest.Commit(t, repo, "not-json", map[string]string{"graph.json": `{"graphs": `})
	cptest.Commit(t, repo, "no-config", map[string]string{"graph.json": ""})
	mod := t.TempDir()
	files := cptest.UserModule(t, cptest.Root(t), "package main\n\nfunc main() { undefinedThing() }\n")
	cptest.Commit(t, mod, "main", files)
	for _, c := range []struct {
		name   string
		spec   controlplane.BuildSpec
		reason string
		logged string
	}{
		{"no repository", controlplane.BuildSpec{RepoURL: filepath.Join(repo, "missing"), RepoRef: "main"}, "clone", "cloning"},
		{"no ref", controlplane.BuildSpec{RepoURL: repo, RepoRef: "nope"}, "clone " + repo + " at nope", "cloning"},
		{"unknown graph", controlplane.BuildSpec{RepoURL: repo, RepoRef: "unknown-graph"}, `graph.json is invalid: graphs.one: unknown graph "nope"`, "unknown graph"},
		{"not json", controlplane.BuildSpec{RepoURL: repo, RepoRef: "not-json"}, "graph.json: not valid JSON", "checked out"},
		{"no graph.json", controlplane.BuildSpec{RepoURL: repo, RepoRef: "no-config"}, "graph.json: no such file", "checked out"},
		{"config outside", controlplane.BuildSpec{RepoURL: repo, RepoRef: "main", GraphConfigPath: "../graph.json"}, "must be a file inside the repository", ""},
		{"compile error", controlplane.BuildSpec{RepoURL: mod, RepoRef: "main"}, "undefined: undefinedThing", "undefined: undefinedThing"},
		{"install command", controlplane.BuildSpec{RepoURL: mod, RepoRef: "main", InstallCommand: "echo installing; exit 3"}, "install_command failed (exit status 3): installing", "installing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			_, err := b.Build(context.Background(), c.spec, &log)
			if err == nil || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("err = %v, want the reason %q\n%s", err, c.reason, &log)
			}
			if !engine.Is(engine.Invalid, err) {
				t.Errorf("err = %v is not a build failure", err)
			}
			if !strings.Contains(log.String(), c.logged) {
				t.Errorf("the log does not show %q:\n%s", c.logged, &log)
			}
		})
	}
}

// TestBuildGoModule builds a Go module with graphs of its own: the program is compiled, checks
// its graph.json (which names its own graphs, unknown to jetgraph), and is stored in the object
// store under the digest the artifact records; a build_command writing $JETGRAPH_BUILD_OUTPUT
// replaces go build.
func TestBuildGoModule(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a program; skipped with -short")
	}
	b, objs := newBuilder(t)
	mod := t.TempDir()
	sha := cptest.Commit(t, mod, "main", cptest.UserModule(t, cptest.Root(t), ""))
	for _, c := range []struct {
		name string
		spec controlplane.BuildSpec
	}{
		{"go build", controlplane.BuildSpec{DeploymentID: "d1", RevisionID: "r1", RepoURL: mod, RepoRef: "main"}},
		{"build command", controlplane.BuildSpec{DeploymentID: "d1", RevisionID: "r2", RepoURL: mod, RepoRef: "main",
			InstallCommand: "go mod download", BuildCommand: `echo custom; go build -o "$` + build.OutputEnv + `" .`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			start := time.Now()
			art, err := b.Build(context.Background(), c.spec, &log)
			if err != nil {
				t.Fatalf("%v\n%s", err, &log)
			}
			t.Logf("built in %v", time.Since(start).Round(time.Millisecond))
			if art.Kind != controlplane.ArtifactBinary || art.CommitSHA != sha || art.Object == "" {
				t.Fatalf("artifact %+v", art)
			}
			// A deadline of our own: without one, the store bounds the transfer by seconds.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			bin, err := objs.Get(ctx, art.Object)
			if err != nil {
				t.Fatal(err)
			}
			if sum := sha256.Sum256(bin); hex.EncodeToString(sum[:]) != art.Digest {
				t.Errorf("stored program's digest differs from the artifact's %s", art.Digest)
			}
			if !strings.Contains(log.String(), "graphs: greet, shout") {
				t.Errorf("the log does not show the check by the program:\n%s", &log)
			}
			if c.spec.BuildCommand != "" && !strings.Contains(log.String(), "custom") {
				t.Errorf("the log does not show the build command's output:\n%s", &log)
			}
		})
	}
}
