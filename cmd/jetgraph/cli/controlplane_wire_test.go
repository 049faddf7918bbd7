package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// gitopsCommit is the head commit of branch main of repo; nil before its first commit.
func gitopsCommit(t *testing.T, repo string) *object.Commit {
	t.Helper()
	r, err := git.PlainOpen(repo)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := r.Reference(plumbing.NewBranchReferenceName("main"), true)
	if err != nil {
		return nil
	}
	c, err := r.CommitObject(ref.Hash())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// gitopsFiles lists the files of branch main of the bare repository repo (none before its
// first commit).
func gitopsFiles(t *testing.T, repo string) []string {
	t.Helper()
	c := gitopsCommit(t, repo)
	if c == nil {
		return nil
	}
	tr, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	_ = tr.Files().ForEach(func(f *object.File) error { names = append(names, f.Name); return nil })
	return names
}

// gitopsHead is the message of the head commit of branch main of repo and the text of its
// files ("" before its first commit).
func gitopsHead(t *testing.T, repo string) (msg, text string) {
	t.Helper()
	c := gitopsCommit(t, repo)
	if c == nil {
		return "", ""
	}
	files, err := c.Files()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	_ = files.ForEach(func(f *object.File) error { s, err := f.Contents(); b.WriteString(s); return err })
	return c.Message, b.String()
}

// waitFor polls cond every 50 ms for up to a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestServeWiresTheGitOpsPublisher checks serve's ports of the external_container path: a k8s
// listener's compute_config is checked at the command (422 at its loc), a deployment's
// manifests reach the listener's GitOps repository, and its DELETE takes them out again.
func TestServeWiresTheGitOpsPublisher(t *testing.T) {
	s, admin, repo := serveWithGitOps(t)

	code, v := call(t, "POST", s.url+"/v2/listeners", admin, `{"compute_type": "k8s", "compute_id": "prod",
		"compute_config": {"gitops": {"branch": "refs/heads/x", "secrets": "vault"}}}`)
	detail, _ := json.Marshal(v["detail"])
	for _, want := range []string{`["body","compute_config","gitops","repo_url"]`, `["body","compute_config","gitops","branch"]`, `["body","compute_config","gitops","secrets"]`} {
		if code != 422 || !strings.Contains(string(detail), want) {
			t.Errorf("invalid compute_config: %d %s, want 422 at %s", code, detail, want)
		}
	}
	code, l := call(t, "POST", s.url+"/v2/listeners", admin, `{"compute_type": "k8s", "compute_id": "prod",
		"compute_config": {"gitops": {"repo_url": "`+repo+`"}}}`)
	if code != 201 {
		t.Fatalf("listener: %d %v", code, l)
	}
	if code, v := call(t, "PATCH", s.url+"/v2/listeners/"+l["id"].(string), admin, `{"compute_config": {"gitops": {}}}`); code != 422 {
		t.Errorf("PATCH to an invalid compute_config: %d %v, want 422", code, v)
	}

	code, d := call(t, "POST", s.url+"/v2/deployments", admin, `{"name": "support-bot", "source": "external_container",
		"source_config": {"listener_id": "`+l["id"].(string)+`"}, "source_revision_config": {"image_uri": "registry/bot:1"}, "secrets": []}`)
	if code != 201 {
		t.Fatalf("external_container deployment: %d %v", code, d)
	}
	id, first := d["id"].(string), d["latest_revision_id"].(string)
	waitFor(t, "the manifests in the GitOps repository", func() bool {
		return strings.Contains(strings.Join(gitopsFiles(t, repo), ","), "support-bot/")
	})
	// A new image, then a rollback to the first: the repository's head is a redeploy commit
	// holding the first image again.
	if code, v := call(t, "PATCH", s.url+"/v2/deployments/"+id, admin, `{"source_revision_config": {"image_uri": "registry/bot:2"}}`); code != 200 {
		t.Fatalf("PATCH: %d %v", code, v)
	}
	waitFor(t, "the second image in the repository", func() bool {
		_, text := gitopsHead(t, repo)
		return strings.Contains(text, "registry/bot:2")
	})
	waitFor(t, "the second revision deployed", func() bool {
		_, d := call(t, "GET", s.url+"/v2/deployments/"+id, admin, "")
		return d["active_revision_id"] != nil && d["active_revision_id"] != first
	})
	if code, v := call(t, "POST", s.url+"/v2/deployments/"+id+"/revisions/"+first+"/redeploy", admin, ""); code != 200 {
		t.Fatalf("redeploy: %d %v", code, v)
	}
	waitFor(t, "the rollback commit", func() bool {
		msg, text := gitopsHead(t, repo)
		return strings.HasPrefix(msg, "jetgraph: redeploy support-bot revision "+first) && strings.Contains(text, "registry/bot:1") &&
			!strings.Contains(text, "registry/bot:2")
	})
	if code, _ := call(t, "DELETE", s.url+"/v2/deployments/"+id, admin, ""); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	waitFor(t, "the deployment's removal", func() bool {
		code, _ := call(t, "GET", s.url+"/v2/deployments/"+id, admin, "")
		return code == http.StatusNotFound
	})
	if files := gitopsFiles(t, repo); strings.Contains(strings.Join(files, ","), "support-bot/") {
		t.Errorf("the deleted deployment's manifests are still in the repository: %v", files)
	}
}

// TestServeOnAnExternalClusterRefusesGitHostRevisions checks the control plane with --nats-url
// but without the operator's key: its API serves, and a git_host deployment is refused at the
// command with 400 and the reason (nothing appended, so no revision fails later), instead of
// the server refusing to start; a warning at start says so too.
func TestServeOnAnExternalClusterRefusesGitHostRevisions(t *testing.T) {
	const admin = "wire-admin-key-0123456789abcdef"
	t.Setenv(AdminKeyEnv, admin)
	s := startServe(t, Program{}, t.TempDir(), "--nats-url", eventlogtest.Server(t))
	code, d := call(t, "POST", s.url+"/v2/deployments", admin, `{"name": "app", "source": "git_host",
		"source_config": {"repo_url": "/nowhere"}, "source_revision_config": {"repo_ref": "main"}, "secrets": []}`)
	if detail, _ := d["detail"].(string); code != http.StatusBadRequest || !strings.Contains(detail, "--nats-operator-key") {
		t.Fatalf("create: %d %v, want 400 naming --nats-operator-key", code, d)
	}
	if code, l := call(t, "GET", s.url+"/v2/deployments", admin, ""); code != 200 || len(l["resources"].([]any)) != 0 {
		t.Errorf("list after the refusal: %d %v, want no deployment", code, l)
	}
	if !strings.Contains(s.logs.String(), "without --nats-operator-key") {
		t.Errorf("no warning in the log:\n%s", s.logs)
	}
	p := Program{Stdout: io.Discard, Stderr: io.Discard}
	if err := p.Run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--nats-url", eventlogtest.Server(t),
		"--nats-operator-key", "/nowhere.nk"}); err == nil || !strings.Contains(err.Error(), "go together") {
		t.Errorf("--nats-operator-key without --nats-system-creds: %v", err)
	}
}
