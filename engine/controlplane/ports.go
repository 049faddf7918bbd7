// Package controlplane is the deployment control plane's domain: deployments, revisions and
// listeners, and the ports its pipeline drives to build and deploy a revision.
//
// The ports are defined here, by their user (the revision pipeline), so that the builder
// (controlplane/build), the deployer (controlplane/supervise) and the GitOps renderer
// (controlplane/manifests) stay independent of the pipeline and of each other.
package controlplane

import (
	"context"
	"io"
	"net/http"
)

// ArtifactKind says how a built revision runs.
type ArtifactKind string

const (
	// ArtifactConfig runs the jetgraph binary itself with the revision's graph.json: the
	// repository uses only built-in graphs and templates, nothing is compiled.
	ArtifactConfig ArtifactKind = "config"
	// ArtifactBinary runs a binary built from the user's Go module (one that calls cli.Main).
	ArtifactBinary ArtifactKind = "binary"
	// ArtifactManifests is an external_container revision: its Kubernetes objects were
	// committed to a listener's GitOps repository; applying them is the cluster's job.
	ArtifactManifests ArtifactKind = "manifests"
	// ArtifactProject runs the jetgraph binary with a LangGraph project's langgraph.json whose
	// graphs are Python or TypeScript code: the built folder (the checkout after its
	// build_command, kept in the object store) with its dependencies installed.
	ArtifactProject ArtifactKind = "project"
)

// Secret is a deployment secret: an environment variable of its runtime processes.
type Secret struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// BuildSpec is what a git_host revision is built from.
type BuildSpec struct {
	DeploymentID    string
	RevisionID      string
	RepoURL         string // any git URL or a local path
	RepoRef         string // a branch name or refs/tags/...
	GraphConfigPath string // relative to the repository root; "" means graph.json
	InstallCommand  string // optional, run from the repository root before the build
	BuildCommand    string // optional, replaces `go build`; run from the graph config's folder
	// Secrets are the deployment's secrets: the environment of the check that loads the graphs
	// (a graph may read a key when its module is imported), never of the install and build
	// commands.
	Secrets []Secret
}

// Artifact is what a build produced; it is recorded on the revision's events, so any process
// of a cluster can deploy it.
type Artifact struct {
	Kind      ArtifactKind `json:"kind"`
	CommitSHA string       `json:"commit_sha,omitempty"`
	// Config is the revision's graph.json, validated.
	Config []byte `json:"config,omitempty"`
	// Object names the built binary (ArtifactBinary) or the built project's files
	// (ArtifactProject) in the control plane's JetStream object store.
	Object string `json:"object,omitempty"`
	// Digest is the sha256 of the object, hex.
	Digest string `json:"digest,omitempty"`
	// GitOpsCommit is the commit that holds the rendered manifests (ArtifactManifests only).
	GitOpsCommit string `json:"gitops_commit,omitempty"`
	// ConfigFile is the langgraph.json's path inside the project (ArtifactProject only), whose
	// files are the object Object (a gzipped tar, without the installed dependencies).
	ConfigFile string `json:"config_file,omitempty"`
	// InstallCommand is the revision's install_command (ArtifactProject only): a process that
	// runs the project installs its dependencies as its build did.
	InstallCommand string `json:"install_command,omitempty"`
}

// Builder builds a git_host revision. It writes its output (clone, validation, install and
// build commands) to log, which becomes the revision's log. An error means BUILD_FAILED with
// the error's text as the reason, unless ctx was cancelled (the process is stopping: the
// revision is resumed by whichever process takes the pipeline over).
type Builder interface {
	Build(ctx context.Context, spec BuildSpec, log io.Writer) (Artifact, error)
}

// DeploySpec is one revision of one deployment to run.
type DeploySpec struct {
	Tenant         string
	DeploymentID   string
	DeploymentName string // also the tracing project of its runs
	RevisionID     string
	Artifact       Artifact
	Secrets        []Secret // the process's environment: nothing else of the parent's secrets
}

// Deployer runs deployments' revisions as supervised runtime processes, each deployment in a
// data namespace of its own on the shared NATS, behind a proxy at its custom_url.
type Deployer interface {
	// Provision creates the deployment's data namespace (status AWAITING_DATABASE -> READY).
	// It is idempotent.
	Provision(ctx context.Context, tenant, deploymentID string) error
	// Deploy starts spec's revision, health-checks it on /ok, switches the deployment's
	// traffic to it, then drains and stops the previous revision's process. It returns nil
	// only after the switch; on error the previous revision keeps serving (DEPLOY_FAILED).
	// Deploying the revision that already serves is a no-op when its process runs, and
	// starts it again when not (a restarted control plane calls Deploy for every active
	// revision).
	Deploy(ctx context.Context, spec DeploySpec, log io.Writer) error
	// Remove drains and stops every process of the deployment and deletes its namespace's
	// data. It is idempotent.
	Remove(ctx context.Context, tenant, deploymentID string) error
	// Serving is the revision each deployment runs in this process, by deployment id.
	Serving() map[string]string
	// Stop drains and stops this process's processes of the deployment, its data kept (it was
	// deleted through another process, which removes them). It is idempotent.
	Stop(ctx context.Context, deploymentID string) error
	// CustomURL is the URL under which the deployment's runtime is served.
	CustomURL(deploymentID string) string
	// Proxy serves every deployment's custom_url: it forwards to the active revision's
	// process, SSE included. The caller authenticates the request (X-Api-Key of the
	// deployment's tenant) before it reaches Proxy.
	Proxy() http.Handler
}

// ManifestSpec is an external_container revision to render for a k8s listener.
type ManifestSpec struct {
	Tenant         string
	DeploymentID   string
	DeploymentName string
	RevisionID     string
	ImageURI       string
	Secrets        []Secret
	// ResourceSpec is the deployment's source_config.resource_spec as validated JSON.
	ResourceSpec []byte
	// Namespace is listener_config.cluster_namespace ("" for the listener's default).
	Namespace string
	// Listener is the listener's record as JSON (compute_type, compute_config with the
	// GitOps repository).
	Listener []byte
	// Rollout says why the manifests are published: "" for a new revision, "redeploy" for a
	// rollback to (or a restart of) an older one, which is a new commit of its manifests.
	Rollout string
}

// ManifestPublisher renders an external_container revision's Kubernetes objects and commits
// them to the listener's GitOps repository; it writes what it did to log.
type ManifestPublisher interface {
	Publish(ctx context.Context, spec ManifestSpec, log io.Writer) (Artifact, error)
}

// ManifestRemover is a ManifestPublisher that can also take a deleted deployment's objects
// out of the listener's repository (the cluster then prunes them); the pipeline calls it on
// DELETE of an external_container deployment when its publisher has it.
type ManifestRemover interface {
	Remove(ctx context.Context, listener []byte, deploymentName string, log io.Writer) error
}

// RefWatcher reports new commits of a watched ref, for build_on_push.
type RefWatcher interface {
	// Head returns the commit sha the ref points to now in the repository.
	Head(ctx context.Context, repoURL, ref string) (string, error)
}
