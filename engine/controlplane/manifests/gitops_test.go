package manifests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane"
)

// bareRepo makes an empty bare repository, the GitOps remote of a test.
func bareRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := git.PlainInit(dir, true); err != nil {
		t.Fatal(err)
	}
	return dir
}

func listener(repo string, gitops map[string]any, namespaces ...string) []byte {
	gitops["repo_url"] = repo
	b, _ := json.Marshal(map[string]any{
		"id": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "compute_type": "k8s", "compute_id": "prod-cluster",
		"compute_config": map[string]any{"k8s_namespaces": namespaces, "gitops": gitops},
	})
	return b
}

// tree reads the files under dir at the head of branch in repo, and the head commit.
func tree(t *testing.T, repo, branch, dir string) (map[string]string, *object.Commit) {
	t.Helper()
	r, err := git.PlainOpen(repo)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := r.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.CommitObject(ref.Hash())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	err = tr.Files().ForEach(func(f *object.File) error {
		if dir == "" || strings.HasPrefix(f.Name, dir+"/") {
			s, err := f.Contents()
			files[strings.TrimPrefix(f.Name, dir+"/")] = s
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, c
}

func keys(m map[string]string) string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	sort.Strings(k)
	return strings.Join(k, ",")
}

func TestPublishCommitsToTheGitOpsRepository(t *testing.T) {
	repo := bareRepo(t)
	ctx := context.Background()
	p := &Publisher{Now: func() time.Time { return time.Unix(1_800_000_000, 0) }}
	spec := manifestSpec("support-bot", fullSpec, controlplane.Secret{Name: "TOKEN", Value: "v"})
	spec.Listener = listener(repo, map[string]any{"branch": "clusters", "path": "clusters/prod/"}, "agents", "staging")

	// an empty repository: the first publish starts the branch
	var log bytes.Buffer
	a, err := p.Publish(ctx, spec, &log)
	if err != nil {
		t.Fatalf("Publish: %v\n%s", err, log.String())
	}
	files, c := tree(t, repo, "clusters", "clusters/prod/support-bot")
	if a.Kind != controlplane.ArtifactManifests || a.GitOpsCommit != c.Hash.String() {
		t.Errorf("artifact %+v; the branch is at %s", a, c.Hash)
	}
	want := "api-server.deployment.yaml,api-server.hpa.yaml,kustomization.yaml,queue.deployment.yaml,queue.hpa.yaml,secret.yaml,service.yaml"
	if keys(files) != want {
		t.Errorf("committed %s; want %s", keys(files), want)
	}
	rs, _ := Parse(spec.ResourceSpec)
	b, _ := Render(spec, rs, Options{Namespace: "agents"})
	for _, f := range b.Files {
		if files[f.Name] != string(f.Data) {
			t.Errorf("%s in the repository differs from the rendering", f.Name)
		}
	}
	for _, s := range []string{"support-bot", spec.RevisionID, spec.DeploymentID, spec.ImageURI} {
		if !strings.Contains(c.Message, s) {
			t.Errorf("commit message %q does not name %s", c.Message, s)
		}
	}
	for _, s := range []string{"committed " + a.GitOpsCommit, "applying the manifests is the cluster's job", "namespace agents", "base64-encoded"} {
		if !strings.Contains(log.String(), s) {
			t.Errorf("log does not say %q:\n%s", s, log.String())
		}
	}

	// the same revision again (a resumed pipeline): nothing to commit, the same commit
	log.Reset()
	again, err := p.Publish(ctx, spec, &log)
	if err != nil || again.GitOpsCommit != a.GitOpsCommit || !strings.Contains(log.String(), "nothing to commit") {
		t.Errorf("republish = %+v, %v; want %s and nothing committed\n%s", again, err, a.GitOpsCommit, log.String())
	}

	// a new revision without autoscaling nor secrets: the folder holds exactly its files
	next := manifestSpec("support-bot", `{"cpu": 1}`)
	next.RevisionID = "6f5e4d3c-2b1a-4987-8654-3210fedcba98"
	next.Namespace = "staging"
	next.Listener = spec.Listener
	b2, err := p.Publish(ctx, next, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	files, c = tree(t, repo, "clusters", "clusters/prod/support-bot")
	if keys(files) != "api-server.deployment.yaml,kustomization.yaml,queue.deployment.yaml,service.yaml" {
		t.Errorf("after the second revision the folder holds %s", keys(files))
	}
	if c.Hash.String() != b2.GitOpsCommit || len(c.ParentHashes) != 1 || c.ParentHashes[0].String() != a.GitOpsCommit {
		t.Errorf("second commit %s (parents %v); want %s on top of %s", c.Hash, c.ParentHashes, b2.GitOpsCommit, a.GitOpsCommit)
	}
	if !strings.Contains(files["service.yaml"], "namespace: staging") {
		t.Errorf("service.yaml is not in namespace staging:\n%s", files["service.yaml"])
	}

	// removing the deployment removes its folder
	if err := p.Remove(ctx, spec.Listener, "support-bot", io.Discard); err != nil {
		t.Fatal(err)
	}
	if files, _ := tree(t, repo, "clusters", "clusters/prod/support-bot"); len(files) != 0 {
		t.Errorf("after Remove the folder holds %s", keys(files))
	}
}

// TestPublishKeepsOtherDeployments: publishers of different deployments (several processes of a
// cluster) commit to the same branch at once; every folder lands, none is lost to a race.
func TestPublishKeepsOtherDeployments(t *testing.T) {
	repo := bareRepo(t)
	l := listener(repo, map[string]any{})
	p := &Publisher{}
	// the branch exists first, so that every publisher clones it
	first := manifestSpec("first", `{}`)
	first.Listener = l
	if _, err := p.Publish(context.Background(), first, io.Discard); err != nil {
		t.Fatal(err)
	}
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := manifestSpec(fmt.Sprintf("bot-%d", i), `{}`)
			s.Listener = l
			_, errs[i] = p.Publish(context.Background(), s, io.Discard)
		}()
	}
	wg.Wait()
	files, _ := tree(t, repo, "main", "")
	for i, err := range errs {
		if err != nil {
			t.Errorf("publisher %d: %v (%#v)", i, err, errors.Unwrap(err))
		}
		if _, ok := files[path.Join(fmt.Sprintf("bot-%d", i), "kustomization.yaml")]; !ok && err == nil {
			t.Errorf("bot-%d is missing from the repository: %s", i, keys(files))
		}
	}
	if _, ok := files["first/kustomization.yaml"]; !ok {
		t.Errorf("first was lost: %s", keys(files))
	}
}

func TestPublishRefuses(t *testing.T) {
	repo := bareRepo(t)
	ok := listener(repo, map[string]any{}, "agents")
	for _, tc := range []struct {
		name     string
		listener []byte
		rs, ns   string
		image    string
		kind     engine.Kind
		says     string
	}{
		{"not k8s", []byte(`{"id": "l1", "compute_type": "ecs", "compute_config": {}}`), `{}`, "", "img", engine.Invalid, `compute_type "ecs"`},
		{"no repository", []byte(`{"id": "l1", "compute_type": "k8s", "compute_config": {"gitops": {}}}`), `{}`, "", "img", engine.Invalid, "repo_url"},
		{"bad gitops", listener(repo, map[string]any{"branch": "a..b", "path": "../up", "secrets": "sealed"}), `{}`, "", "img", engine.Invalid, "branch"},
		{"namespace not allowed", ok, `{}`, "prod", "img", engine.Invalid, `"prod" is not one of`},
		{"bad resource spec", ok, `{"cpu": 99}`, "", "img", engine.Invalid, "resource_spec"},
		{"no image", ok, `{}`, "", "", engine.Invalid, "image_uri"},
		{"unreachable repository", listener(repo+"-absent", map[string]any{}), `{}`, "", "img", engine.Unavailable, "clone"},
		{"credential in the URL", listener("http://user:s3cret@127.0.0.1:1/gitops.git", map[string]any{}), `{}`, "", "img", engine.Unavailable, "clone http://user:xxxxx@127.0.0.1:1/gitops.git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := manifestSpec("bot", tc.rs)
			s.Listener, s.Namespace, s.ImageURI = tc.listener, tc.ns, tc.image
			var log bytes.Buffer
			_, err := (&Publisher{}).Publish(context.Background(), s, &log)
			if engine.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Publish = %v (%v); want kind %v saying %q", err, engine.KindOf(err), tc.kind, tc.says)
			}
			if strings.Contains(err.Error()+log.String(), "s3cret") {
				t.Errorf("the credential is in the error or the log: %v\n%s", err, log.String())
			}
		})
	}
	r, _ := git.PlainOpen(repo)
	if _, err := r.Head(); err == nil {
		t.Error("a refused publish committed")
	}
}

func TestParseComputeConfig(t *testing.T) {
	c, err := ParseComputeConfig([]byte(`{"k8s_namespaces": ["a"], "gitops": {"repo_url": "/srv/gitops", "path": "./clusters//prod/"}}`))
	if err != nil {
		t.Fatal(err)
	}
	g := c.GitOps
	if g.Branch != "main" || g.Path != "clusters/prod" || g.Secrets != SecretsInline || g.AuthorName != "jetgraph" {
		t.Errorf("defaults not applied: %+v", g)
	}
	_, err = ParseComputeConfig([]byte(`{"k8s_namespaces": ["Bad_NS"], "gitops": {"branch": "refs/heads/x", "path": "/abs", "secrets": "x"}}`), "body", "compute_config")
	var locs []string
	for _, f := range err.(*engine.Error).Fields {
		locs = append(locs, fmt.Sprint(f.Loc))
	}
	want := "[body compute_config k8s_namespaces 0] [body compute_config gitops repo_url] [body compute_config gitops branch] [body compute_config gitops path] [body compute_config gitops secrets]"
	if strings.Join(locs, " ") != want {
		t.Errorf("violations %s; want %s", strings.Join(locs, " "), want)
	}
}
