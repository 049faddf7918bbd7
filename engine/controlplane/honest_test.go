package controlplane_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	cp "github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/build"
	"github.com/jetgraph/jetgraph/engine/controlplane/cptest"
	"github.com/jetgraph/jetgraph/engine/controlplane/seal"
)

// testSecret is the deployment secret of these tests: it must appear in no log.
const testSecret = "s3cret-value-42"

// lastLine is the last non-empty line of a log.
func lastLine(log string) string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	return lines[len(lines)-1]
}

// newKeyring is a keyring with one fresh key.
func newKeyring(t *testing.T) *seal.Keyring {
	t.Helper()
	k, err := seal.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := seal.ParseKeys(k)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := seal.New(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

// TestFailedBuildLogEndsWithTheReason builds broken git_host revisions with the real builder:
// each one's log ends with the line that says why it failed (also where the builder wrote
// nothing after "cloning"), the reason is the revision's failure_reason, and the secret the
// build command printed is masked in both.
func TestFailedBuildLogEndsWithTheReason(t *testing.T) {
	p := openPlane(t)
	p.svc.SealSecrets(newKeyring(t))
	objs, err := p.log.OpenObjects(context.Background(), "TEST_REVISIONS", 0)
	if err != nil {
		t.Fatal(err)
	}
	b := &build.Builder{Dir: t.TempDir(), Jetgraph: cptest.Jetgraph(t), Go: cptest.GoTool(), Env: cptest.BuildEnv(),
		Objects: objs, Timeout: time.Minute}
	p.start(t, cp.Ports{Builder: b, Deployer: newRecorder()})

	repo := t.TempDir()
	cptest.Commit(t, repo, "not-json", map[string]string{"graph.json": `{"graphs": `})
	cptest.Commit(t, repo, "main", map[string]string{"graph.json": `{"graphs": {"one": "echo"}}`})
	cptest.Commit(t, repo, "module", map[string]string{"go.mod": "module example.com/agent\n\ngo 1.22\n", "graph.json": `{"graphs": {}}`})
	// The command prints the secret in two pieces, so that its text holds no secret.
	failing := `printf 'token is %s' s3cret-; sleep 0.2; printf '%s\n' value-42; echo compiling; exit 4`
	for _, c := range []struct {
		name, ref, config, buildCmd string
		reason                      string
	}{
		{"bad JSON", "not-json", "", "", "graph.json: not valid JSON"},
		{"missing config", "main", "deploy/langgraph.json", "", "deploy/langgraph.json: no such file"},
		{"unknown branch", "no-such-branch", "", "", "at no-such-branch"},
		{"failing build command", "module", "", failing, "build failed (exit status 4)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := map[string]any{"repo_url": repo}
			if c.buildCmd != "" {
				src["build_command"] = c.buildCmd
			}
			rev := map[string]any{"repo_ref": c.ref}
			if c.config != "" {
				rev["graph_config_path"] = c.config
			}
			d, err := p.svc.CreateDeployment(p.ctx, map[string]any{"name": "honest-" + strings.ReplaceAll(c.name, " ", "-"),
				"source": "git_host", "source_config": src, "source_revision_config": rev,
				"secrets": []any{map[string]any{"name": "TOKEN", "value": testSecret}}})
			if err != nil {
				t.Fatal(err)
			}
			r := p.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionBuildFailed)
			log, err := p.svc.RevisionLog(p.ctx, d.ID, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if r.FailureReason == nil || !strings.Contains(*r.FailureReason, c.reason) {
				t.Fatalf("failure_reason %v, want %q", r.FailureReason, c.reason)
			}
			want := "BUILD_FAILED: " + strings.Join(strings.Fields(*r.FailureReason), " ")
			if got := lastLine(log); got != want {
				t.Errorf("the log's last line is %q, want %q; log:\n%s", got, want, log)
			}
			if strings.Contains(log, testSecret) || strings.Contains(*r.FailureReason, testSecret) {
				t.Errorf("the secret is in the log or the reason:\n%s\nreason: %s", log, *r.FailureReason)
			}
			if c.buildCmd != "" && !strings.Contains(log, "token is "+cp.SecretMask) {
				t.Errorf("the build's output is not in the log, masked:\n%s", log)
			}
		})
	}
}

// failingPublisher is a ManifestPublisher whose repository refuses the push.
type failingPublisher struct{}

func (failingPublisher) Publish(ctx context.Context, spec cp.ManifestSpec, log io.Writer) (cp.Artifact, error) {
	fmt.Fprintf(log, "rendered 3 file(s) for %s\n", spec.DeploymentName)
	return cp.Artifact{}, errors.New("push to the GitOps repository: permission denied")
}

// TestPublishFailureIsDeployFailed: an external_container revision whose manifests cannot be
// committed fails as DEPLOY_FAILED (nothing was to be built), its log ending with the reason.
func TestPublishFailureIsDeployFailed(t *testing.T) {
	p := openPlane(t)
	p.start(t, cp.Ports{Publisher: failingPublisher{}})
	l, err := p.svc.CreateListener(p.ctx, map[string]any{"compute_type": "k8s", "compute_id": "prod",
		"compute_config": map[string]any{"gitops": map[string]any{"repo_url": t.TempDir()}}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.svc.CreateDeployment(p.ctx, map[string]any{"name": "ext", "source": "external_container",
		"source_config": map[string]any{"listener_id": l.ID}, "source_revision_config": map[string]any{"image_uri": "registry/app:1"}, "secrets": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	r := p.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionDeployFailed)
	log, err := p.svc.RevisionLog(p.ctx, d.ID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lastLine(log), "DEPLOY_FAILED: push to the GitOps repository: permission denied"; got != want {
		t.Errorf("last line %q, want %q; log:\n%s", got, want, log)
	}
}

// TestInterruptedLogEndsWithTheReason stops the pipeline mid-build until the revision is
// INTERRUPTED: its log ends with the reason, on a line of its own.
func TestInterruptedLogEndsWithTheReason(t *testing.T) {
	p := openPlane(t)
	d := p.create(t, "app", "hold")
	for range 4 {
		rec := newRecorder()
		stop := p.start(t, cp.Ports{Builder: rec, Deployer: rec})
		<-rec.building
		stop()
	}
	last := newRecorder()
	close(last.release)
	p.start(t, cp.Ports{Builder: last, Deployer: last})
	r := p.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionInterrupted)
	log, err := p.svc.RevisionLog(p.ctx, d.ID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.FailureReason == nil {
		t.Fatal("no failure_reason")
	}
	if got, want := lastLine(log), "INTERRUPTED: "+*r.FailureReason; got != want {
		t.Errorf("the log's last line is %q, want %q; log:\n%s", got, want, log)
	}
}
