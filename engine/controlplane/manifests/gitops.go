package manifests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/watch"
)

// Secret placements of GitOpsConfig.Secrets.
const (
	SecretsInline   = "inline"
	SecretsExternal = "external"
)

// Defaults of GitOpsConfig.
const (
	defaultBranch      = "main"
	defaultAuthorName  = "jetgraph"
	defaultAuthorEmail = "jetgraph@localhost"
)

// pushAttempts bounds the retries of a push that lost a race with another commit to the branch;
// each retry waits a random part of retryWait times the attempt, so racers spread out.
const (
	pushAttempts = 8
	retryWait    = 50 * time.Millisecond
)

// Listener is the part of a listener's record the renderer reads.
type Listener struct {
	ID            string        `json:"id"`
	ComputeType   string        `json:"compute_type"`
	ComputeConfig ComputeConfig `json:"compute_config"`
}

// ComputeConfig is a k8s listener's compute_config: the namespaces its deployments may use (the
// first is the default) and the GitOps repository the cluster syncs from.
type ComputeConfig struct {
	K8sNamespaces []string     `json:"k8s_namespaces"`
	GitOps        GitOpsConfig `json:"gitops"`
}

// GitOpsConfig names where rendered manifests are committed: <path>/<deployment name>/ on
// branch of the repository at repo_url (any git URL or a local path; credentials in the URL, an
// SSH agent or the host's SSH keys).
type GitOpsConfig struct {
	RepoURL string `json:"repo_url"`
	Branch  string `json:"branch"`
	Path    string `json:"path"`
	// Secrets is "inline" (a Secret in the repository, base64: the repository must be private)
	// or "external" (the cluster provides the Secret).
	Secrets     string `json:"secrets"`
	AuthorName  string `json:"author_name"`
	AuthorEmail string `json:"author_email"`
}

// ParseComputeConfig decodes and checks a k8s listener's compute_config, reporting every problem
// with its loc under prefix, and applies the defaults (branch main, path the repository's root,
// secrets inline).
func ParseComputeConfig(raw []byte, prefix ...any) (ComputeConfig, error) {
	const op = "manifests.compute_config"
	var c ComputeConfig
	var v engine.Violations
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		v.Add("value_error", "not a valid compute_config: "+err.Error(), prefix...)
		return c, v.Err(op)
	}
	for i, ns := range c.K8sNamespaces {
		for _, msg := range validation.IsDNS1123Label(ns) {
			v.Add("value_error", fmt.Sprintf("%q: %s", ns, msg), at(prefix, "k8s_namespaces", i)...)
		}
	}
	g := &c.GitOps
	if g.RepoURL == "" {
		v.Add("missing", "Field required: the GitOps repository the cluster syncs from", at(prefix, "gitops", "repo_url")...)
	}
	if g.Branch == "" {
		g.Branch = defaultBranch
	}
	if name, err := watch.RefName(g.Branch); err != nil || !name.IsBranch() || strings.HasPrefix(g.Branch, "refs/") {
		v.Add("value_error", fmt.Sprintf("%q is not a branch name", g.Branch), at(prefix, "gitops", "branch")...)
	}
	if g.Path != "" {
		clean := path.Clean(g.Path)
		if path.IsAbs(g.Path) || clean == ".." || strings.HasPrefix(clean, "../") || slices.Contains(strings.Split(clean, "/"), ".git") {
			v.Add("value_error", "path must be a folder inside the repository (relative, no .., not .git)", at(prefix, "gitops", "path")...)
		} else if g.Path = clean; clean == "." {
			g.Path = ""
		}
	}
	switch g.Secrets {
	case "":
		g.Secrets = SecretsInline
	case SecretsInline, SecretsExternal:
	default:
		v.Add("enum", "Input should be 'inline' or 'external'", at(prefix, "gitops", "secrets")...)
	}
	if g.AuthorName == "" {
		g.AuthorName = defaultAuthorName
	}
	if g.AuthorEmail == "" {
		g.AuthorEmail = defaultAuthorEmail
	}
	return c, v.Err(op)
}

// ParseListener decodes a listener's record and checks that it renders for Kubernetes.
func ParseListener(raw []byte) (Listener, error) {
	const op = "manifests.listener"
	var head struct {
		ID            string          `json:"id"`
		ComputeType   string          `json:"compute_type"`
		ComputeConfig json.RawMessage `json:"compute_config"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return Listener{}, engine.E(engine.Op(op), engine.Invalid, "the listener record is not JSON", err)
	}
	if !controlplane.Kubernetes(head.ComputeType) {
		return Listener{}, engine.E(engine.Op(op), engine.Invalid, fmt.Sprintf("listener %s has compute_type %q: only %q and %q listeners render manifests", head.ID, head.ComputeType, controlplane.ComputeTypeK8s, controlplane.ComputeTypeCluster))
	}
	cfg, err := ParseComputeConfig(head.ComputeConfig, "compute_config")
	if err != nil {
		return Listener{}, engine.E(engine.Op(op), fmt.Sprintf("listener %s: %v", head.ID, err), err)
	}
	return Listener{ID: head.ID, ComputeType: head.ComputeType, ComputeConfig: cfg}, nil
}

// namespace is where a deployment goes: controlplane.PlaceNamespace, the rule the command
// checked the deployment against.
func (l Listener) namespace(requested string) (string, error) {
	ns, problem := controlplane.PlaceNamespace(l.ComputeConfig.K8sNamespaces, requested)
	if problem != "" {
		return "", engine.E(engine.Invalid, fmt.Sprintf("listener %s: cluster_namespace: %s", l.ID, problem))
	}
	return ns, nil
}

// Publisher is the controlplane.ManifestPublisher of k8s listeners: it renders a revision and
// commits the files to the listener's GitOps repository. It holds no state: every Publish clones
// the branch anew (in memory), so any process of a cluster may publish, and publishing the same
// revision twice (a pipeline resumed after a crash) commits nothing the second time.
type Publisher struct {
	// Now stamps the commits; nil means time.Now.
	Now func() time.Time
}

var _ controlplane.ManifestPublisher = (*Publisher)(nil)

// Publish renders spec and commits it to <path>/<deployment name>/ of the listener's repository,
// replacing the folder's previous content, and pushes. The artifact names the commit.
func (p *Publisher) Publish(ctx context.Context, spec controlplane.ManifestSpec, log io.Writer) (controlplane.Artifact, error) {
	const op = "manifests.publish"
	l, err := ParseListener(spec.Listener)
	if err != nil {
		return controlplane.Artifact{}, engine.E(engine.Op(op), err)
	}
	rs, err := Parse(spec.ResourceSpec, "resource_spec")
	if err != nil {
		return controlplane.Artifact{}, engine.E(engine.Op(op), err)
	}
	ns, err := l.namespace(spec.Namespace)
	if err != nil {
		return controlplane.Artifact{}, engine.E(engine.Op(op), err)
	}
	g := l.ComputeConfig.GitOps
	b, err := Render(spec, rs, Options{Namespace: ns, ExternalSecrets: g.Secrets == SecretsExternal})
	if err != nil {
		return controlplane.Artifact{}, engine.E(engine.Op(op), err)
	}
	dir := path.Join(g.Path, b.Dir)
	names := make([]string, len(b.Files))
	for i, f := range b.Files {
		names[i] = f.Name
	}
	fmt.Fprintf(log, "rendered %d file(s) for deployment %s, revision %s, image %s, namespace %s: %s\n", len(b.Files), spec.DeploymentName, spec.RevisionID, spec.ImageURI, ns, strings.Join(names, ", "))
	for _, n := range b.Notes {
		fmt.Fprintf(log, "note: %s\n", n)
	}
	verb := "deploy"
	if spec.Rollout != "" {
		verb = spec.Rollout
	}
	msg := fmt.Sprintf("jetgraph: %s %s revision %s\n\nDeployment: %s\nRevision: %s\nImage: %s\nNamespace: %s\n", verb, spec.DeploymentName, spec.RevisionID, spec.DeploymentID, spec.RevisionID, spec.ImageURI, ns)
	sha, changed, err := p.commit(ctx, op, g, dir, b.Files, msg)
	if err != nil {
		return controlplane.Artifact{}, err
	}
	where := fmt.Sprintf("%s (branch %s) at %s/", watch.Redact(g.RepoURL), g.Branch, dir)
	if changed {
		fmt.Fprintf(log, "committed %s to %s\n", sha, where)
	} else {
		fmt.Fprintf(log, "%s already holds these manifests at %s: nothing to commit\n", where, sha)
	}
	fmt.Fprintf(log, "applying the manifests is the cluster's job: Argo CD or Flux syncs %s; jetgraph does not talk to the cluster\n", where)
	return controlplane.Artifact{Kind: controlplane.ArtifactManifests, GitOpsCommit: sha}, nil
}

// Remove deletes a deployment's folder from the listener's repository (on DELETE of the
// deployment), so that the cluster prunes its objects. Removing an absent folder commits nothing.
func (p *Publisher) Remove(ctx context.Context, listener []byte, deploymentName string, log io.Writer) error {
	const op = "manifests.remove"
	l, err := ParseListener(listener)
	if err != nil {
		return engine.E(engine.Op(op), err)
	}
	g := l.ComputeConfig.GitOps
	dir := path.Join(g.Path, Name(deploymentName))
	sha, changed, err := p.commit(ctx, op, g, dir, nil, fmt.Sprintf("jetgraph: remove %s\n", deploymentName))
	if err != nil {
		return err
	}
	if changed {
		fmt.Fprintf(log, "removed %s/ from %s in %s\n", dir, watch.Redact(g.RepoURL), sha)
	}
	return nil
}

// commit makes dir hold exactly files on the branch and pushes, retrying from a fresh clone when
// another commit reached the branch first. It reports the branch's head and whether it committed.
func (p *Publisher) commit(ctx context.Context, op string, g GitOpsConfig, dir string, files []File, msg string) (string, bool, error) {
	var err error
	for attempt := range pushAttempts {
		var sha string
		var changed bool
		sha, changed, err = p.commitOnce(ctx, op, g, dir, files, msg)
		if err == nil || !lostRace(err) {
			return sha, changed, err
		}
		select {
		case <-ctx.Done():
			return "", false, err
		case <-time.After(time.Duration(rand.Int64N(int64(retryWait) * int64(attempt+1)))):
		}
	}
	return "", false, err
}

// lostRace reports a push refused because the branch moved since the clone.
func lostRace(err error) bool {
	s := err.Error()
	for _, says := range []string{"non-fast-forward", "fetch first", "failed to update ref", "cannot lock ref", "reference has changed concurrently"} {
		if strings.Contains(s, says) {
			return true
		}
	}
	return false
}

func (p *Publisher) commitOnce(ctx context.Context, op string, g GitOpsConfig, dir string, files []File, msg string) (string, bool, error) {
	branch := plumbing.NewBranchReferenceName(g.Branch)
	url := watch.Redact(g.RepoURL)
	fs := memfs.New()
	repo, err := git.CloneContext(ctx, memory.NewStorage(), fs, &git.CloneOptions{URL: g.RepoURL, ReferenceName: branch, SingleBranch: true})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		repo, err = initRepo(fs, g.RepoURL, branch)
	}
	if err != nil {
		err = watch.RedactError(err, g.RepoURL)
		return "", false, engine.E(engine.Op(op), engine.Unavailable, fmt.Sprintf("clone %s (branch %s)", url, g.Branch), err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return "", false, engine.E(engine.Op(op), err)
	}
	keep := map[string]bool{}
	for _, f := range files {
		keep[f.Name] = true
	}
	old, err := fs.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return "", false, engine.E(engine.Op(op), err)
	}
	for _, fi := range old {
		if fi.IsDir() || keep[fi.Name()] {
			continue
		}
		if _, err := wt.Remove(path.Join(dir, fi.Name())); err != nil {
			return "", false, engine.E(engine.Op(op), fmt.Errorf("remove %s: %w", path.Join(dir, fi.Name()), err))
		}
	}
	for _, f := range files {
		name := path.Join(dir, f.Name)
		if err := writeFile(fs, name, f.Data); err != nil {
			return "", false, engine.E(engine.Op(op), err)
		}
		if _, err := wt.Add(name); err != nil {
			return "", false, engine.E(engine.Op(op), fmt.Errorf("add %s: %w", name, err))
		}
	}
	status, err := wt.Status()
	if err != nil {
		return "", false, engine.E(engine.Op(op), err)
	}
	if status.IsClean() {
		head, err := repo.Head()
		if err != nil { // an empty repository and nothing to write
			return "", false, nil
		}
		return head.Hash().String(), false, nil
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	sig := &object.Signature{Name: g.AuthorName, Email: g.AuthorEmail, When: now()}
	hash, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		return "", false, engine.E(engine.Op(op), fmt.Errorf("commit: %w", err))
	}
	refspec := config.RefSpec(branch.String() + ":" + branch.String())
	if err := repo.PushContext(ctx, &git.PushOptions{RemoteName: git.DefaultRemoteName, RefSpecs: []config.RefSpec{refspec}}); err != nil {
		err = watch.RedactError(err, g.RepoURL)
		return "", false, engine.E(engine.Op(op), engine.Unavailable, fmt.Sprintf("push to %s (branch %s)", url, g.Branch), err)
	}
	return hash.String(), true, nil
}

// initRepo starts the history of an empty remote repository on branch.
func initRepo(fs billy.Filesystem, url string, branch plumbing.ReferenceName) (*git.Repository, error) {
	repo, err := git.Init(memory.NewStorage(), fs)
	if err != nil {
		return nil, err
	}
	if err := repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, branch)); err != nil {
		return nil, err
	}
	if _, err := repo.CreateRemote(&config.RemoteConfig{Name: git.DefaultRemoteName, URLs: []string{url}}); err != nil {
		return nil, err
	}
	return repo, nil
}

func writeFile(fs billy.Filesystem, name string, data []byte) error {
	if err := fs.MkdirAll(path.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := fs.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
