package controlplane_test

import (
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	cp "github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/manifests"
)

// gitopsHead is the head commit of branch main of the bare repository repo, and the text of
// the files under dir in it.
func gitopsHead(t *testing.T, repo, dir string) (*object.Commit, string) {
	t.Helper()
	r, err := git.PlainOpen(repo)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := r.Reference(plumbing.NewBranchReferenceName("main"), true)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.CommitObject(ref.Hash())
	if err != nil {
		t.Fatal(err)
	}
	files, err := c.Files()
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	err = files.ForEach(func(f *object.File) error {
		if !strings.HasPrefix(f.Name, dir+"/") {
			return nil
		}
		s, err := f.Contents()
		text.WriteString(s)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, text.String()
}

// TestRedeployCommitsTheRevisionsManifests rolls an external_container deployment back to its
// first revision: the GitOps repository gets a new commit (on top of the second revision's)
// with the first revision's image, and the revision's log and artifact name it.
func TestRedeployCommitsTheRevisionsManifests(t *testing.T) {
	p := openPlane(t)
	p.svc.SealSecrets(newKeyring(t))
	repo := t.TempDir()
	if _, err := git.PlainInit(repo, true); err != nil {
		t.Fatal(err)
	}
	p.start(t, cp.Ports{Publisher: &manifests.Publisher{}})
	l, err := p.svc.CreateListener(p.ctx, map[string]any{"compute_type": "k8s", "compute_id": "prod",
		"compute_config": map[string]any{"gitops": map[string]any{"repo_url": repo, "path": "clusters/prod"}}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.svc.CreateDeployment(p.ctx, map[string]any{"name": "support-bot", "source": "external_container",
		"source_config": map[string]any{"listener_id": l.ID}, "source_revision_config": map[string]any{"image_uri": "registry/bot:1"},
		"secrets": []any{map[string]any{"name": "TOKEN", "value": testSecret}}})
	if err != nil {
		t.Fatal(err)
	}
	first := *d.LatestRevisionID
	p.waitRevision(t, d.ID, first, cp.RevisionDeployed)
	d, err = p.svc.UpdateDeployment(p.ctx, d.ID, map[string]any{"source_revision_config": map[string]any{"image_uri": "registry/bot:2"}})
	if err != nil {
		t.Fatal(err)
	}
	p.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionDeployed)
	before, text := gitopsHead(t, repo, "clusters/prod/support-bot")
	if !strings.Contains(text, "registry/bot:2") || strings.Contains(text, "registry/bot:1") {
		t.Fatalf("before the rollback the repository holds:\n%s", text)
	}
	// The secret reaches the repository's Secret in clear (base64), as the publisher gets it.
	if !strings.Contains(text, "czNjcmV0LXZhbHVlLTQy") {
		t.Errorf("the Secret does not hold the secret's value:\n%s", text)
	}

	if _, err := p.svc.Redeploy(p.ctx, d.ID, first); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	var r cp.Revision
	for {
		r, err = p.svc.GetRevision(p.ctx, d.ID, first)
		if err != nil {
			t.Fatal(err)
		}
		h := r.StatusHistory[len(r.StatusHistory)-1]
		if h.Status == cp.RevisionDeployed && h.Note == "redeploy" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the redeploy did not end: %+v", r.StatusHistory)
		}
		time.Sleep(50 * time.Millisecond)
	}
	after, text := gitopsHead(t, repo, "clusters/prod/support-bot")
	if after.Hash == before.Hash || len(after.ParentHashes) != 1 || after.ParentHashes[0] != before.Hash {
		t.Fatalf("the rollback is not a new commit on top of %s: head %s, parents %v", before.Hash, after.Hash, after.ParentHashes)
	}
	if !strings.Contains(text, "registry/bot:1") || strings.Contains(text, "registry/bot:2") {
		t.Errorf("after the rollback the repository holds:\n%s", text)
	}
	if !strings.HasPrefix(after.Message, "jetgraph: redeploy support-bot revision "+first) {
		t.Errorf("commit message %q", after.Message)
	}
	if r.Artifact == nil || r.Artifact.GitOpsCommit != after.Hash.String() {
		t.Errorf("the revision's artifact %+v does not name the rollback's commit %s", r.Artifact, after.Hash)
	}
	log, err := p.svc.RevisionLog(p.ctx, d.ID, first)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lastLine(log), after.Hash.String()) {
		t.Errorf("the log's last line does not name the commit %s:\n%s", after.Hash, log)
	}
	got, err := p.svc.GetDeployment(p.ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ActiveRevisionID == nil || *got.ActiveRevisionID != first {
		t.Errorf("active revision %v, want %s", got.ActiveRevisionID, first)
	}
}
