package controlplane

import (
	"encoding/json"
	"time"
)

// Source says where a deployment's revisions come from (the spec's enum; `github` is accepted
// on input as an alias of SourceGitHost, as the production service spells it).
type Source string

// The sources of a deployment.
const (
	SourceGitHost           Source = "git_host"
	SourceExternalContainer Source = "external_container"
	SourceInternalContainer Source = "internal_container"
	sourceGitHubAlias       Source = "github"
)

// DeploymentStatus is a deployment's lifecycle: its data namespace, then its teardown.
type DeploymentStatus string

// The deployment statuses of the spec.
const (
	DeploymentAwaitingDatabase DeploymentStatus = "AWAITING_DATABASE"
	DeploymentReady            DeploymentStatus = "READY"
	DeploymentUnused           DeploymentStatus = "UNUSED"
	DeploymentAwaitingDelete   DeploymentStatus = "AWAITING_DELETE"
	DeploymentUnknown          DeploymentStatus = "UNKNOWN"
)

// RevisionStatus is where a revision is in the pipeline; it always says what happened, never
// what a timer guessed.
type RevisionStatus string

// The revision statuses of the contract, in pipeline order.
const (
	RevisionCreating       RevisionStatus = "CREATING"
	RevisionQueued         RevisionStatus = "QUEUED"
	RevisionAwaitingBuild  RevisionStatus = "AWAITING_BUILD"
	RevisionBuilding       RevisionStatus = "BUILDING"
	RevisionAwaitingDeploy RevisionStatus = "AWAITING_DEPLOY"
	RevisionDeploying      RevisionStatus = "DEPLOYING"
	RevisionCreateFailed   RevisionStatus = "CREATE_FAILED"
	RevisionBuildFailed    RevisionStatus = "BUILD_FAILED"
	RevisionDeployFailed   RevisionStatus = "DEPLOY_FAILED"
	RevisionDeployed       RevisionStatus = "DEPLOYED"
	RevisionSkipped        RevisionStatus = "SKIPPED"
	RevisionInterrupted    RevisionStatus = "INTERRUPTED"
	RevisionUnknown        RevisionStatus = "UNKNOWN"
)

// RevisionStatuses lists every revision status, for the list filter's validation.
var RevisionStatuses = []RevisionStatus{RevisionCreating, RevisionQueued, RevisionAwaitingBuild,
	RevisionBuilding, RevisionAwaitingDeploy, RevisionDeploying, RevisionCreateFailed,
	RevisionBuildFailed, RevisionDeployFailed, RevisionDeployed, RevisionSkipped,
	RevisionInterrupted, RevisionUnknown}

// Terminal reports whether the pipeline is done with a revision in status s.
func (s RevisionStatus) Terminal() bool {
	switch s {
	case RevisionDeployed, RevisionCreateFailed, RevisionBuildFailed, RevisionDeployFailed,
		RevisionSkipped, RevisionInterrupted, RevisionUnknown:
		return true
	}
	return false
}

// started reports whether a revision in status s has begun building or deploying: it is the
// deployment's revision in flight, which a newer one does not supersede.
func (s RevisionStatus) started() bool {
	switch s {
	case RevisionBuilding, RevisionAwaitingDeploy, RevisionDeploying:
		return true
	}
	return false
}

// Deployment is the API's deployment record.
type Deployment struct {
	ID                   string               `json:"id"`
	TenantID             string               `json:"tenant_id"`
	Name                 string               `json:"name"`
	Source               Source               `json:"source"`
	SourceConfig         SourceConfig         `json:"source_config"`
	SourceRevisionConfig SourceRevisionConfig `json:"source_revision_config"`
	Secrets              []Secret             `json:"secrets"`
	CreatedAt            time.Time            `json:"created_at"`
	UpdatedAt            time.Time            `json:"updated_at"`
	Status               DeploymentStatus     `json:"status"`
	LatestRevisionID     *string              `json:"latest_revision_id"`
	ActiveRevisionID     *string              `json:"active_revision_id"`
	ImageVersion         *string              `json:"image_version"`
}

// SourceConfig is a deployment's source_config; every field is optional.
type SourceConfig struct {
	IntegrationID  *string         `json:"integration_id"`
	RepoURL        *string         `json:"repo_url"`
	DeploymentType *string         `json:"deployment_type"`
	BuildOnPush    *bool           `json:"build_on_push"`
	CustomURL      *string         `json:"custom_url"`
	ResourceSpec   json.RawMessage `json:"resource_spec"`
	ListenerID     *string         `json:"listener_id"`
	ListenerConfig *ListenerConfig `json:"listener_config"`
	InstallCommand *string         `json:"install_command"`
	BuildCommand   *string         `json:"build_command"`
}

// ListenerConfig is a deployment's placement on its listener's compute.
type ListenerConfig struct {
	ClusterNamespace *string `json:"cluster_namespace"`
}

// SourceRevisionConfig says what a revision is made of; on a deployment, of its latest one.
type SourceRevisionConfig struct {
	RepoRef         *string `json:"repo_ref"`
	GraphConfigPath *string `json:"graph_config_path"`
	ImageURI        *string `json:"image_uri"`
	RepoCommitSHA   *string `json:"repo_commit_sha"`
}

// StatusChange is one entry of a revision's status history.
type StatusChange struct {
	Status RevisionStatus `json:"status"`
	At     time.Time      `json:"at"`
	Note   string         `json:"note,omitempty"`
}

// Revision is the API's revision record, with jetgraph's extras: the status history, the
// failure reason and the tail of its log (the whole log is GET .../revisions/{id}/logs).
type Revision struct {
	ID                   string               `json:"id"`
	DeploymentID         string               `json:"deployment_id"`
	CreatedAt            time.Time            `json:"created_at"`
	UpdatedAt            time.Time            `json:"updated_at"`
	Status               RevisionStatus       `json:"status"`
	Source               Source               `json:"source"`
	SourceRevisionConfig SourceRevisionConfig `json:"source_revision_config"`
	StatusHistory        []StatusChange       `json:"status_history"`
	FailureReason        *string              `json:"failure_reason"`
	LogTail              string               `json:"log_tail"`
	// Artifact is what its build produced (nil before), Kind and references only.
	Artifact *ArtifactRef `json:"artifact"`
}

// ArtifactRef is what a revision's record shows of its artifact: never its config's bytes.
type ArtifactRef struct {
	Kind         ArtifactKind `json:"kind"`
	Digest       string       `json:"digest,omitempty"`
	GitOpsCommit string       `json:"gitops_commit,omitempty"`
}

// Listener is a compute target of external_container deployments (a Kubernetes cluster whose
// GitOps repository jetgraph commits manifests to).
type Listener struct {
	ID            string         `json:"id"`
	TenantID      string         `json:"tenant_id"`
	ComputeType   string         `json:"compute_type"`
	ComputeID     string         `json:"compute_id"`
	ComputeConfig map[string]any `json:"compute_config"`
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     time.Time      `json:"updated_at"`
}

// Integration is a git host integration (GET /v1/integrations/git_host/install).
type Integration struct {
	ID             string `json:"id"`
	InstallationID string `json:"installation_id"`
	Name           string `json:"name"`
}

// GitIntegration is jetgraph's one built-in git integration: any git URL or local path.
var GitIntegration = Integration{ID: "7f8c1f9e-4b1a-5c0e-9d3a-6a1b2c3d4e5f", InstallationID: "jetgraph-git", Name: "git (any URL or local path)"}

// SecretMask replaces a secret's value in every answer.
const SecretMask = "********"

// Masked returns d with its secrets' values masked, for answers.
func (d Deployment) Masked() Deployment {
	out := make([]Secret, len(d.Secrets))
	for i, s := range d.Secrets {
		out[i] = Secret{Name: s.Name, Value: SecretMask}
	}
	d.Secrets = out
	return d
}

// DeploymentRecord is a deployment as the projection keeps it: the API's record and what the
// pipeline has still to do for it.
type DeploymentRecord struct {
	Deployment
	// PendingRollout is the revision a redeploy asked for, until it is rolled out or fails.
	PendingRollout string `json:"pending_rollout,omitempty"`
}

// RevisionRecord is a revision as the projection keeps it: the API's record, its inputs and
// its artifact.
type RevisionRecord struct {
	Revision
	Inputs   RevisionInputs `json:"inputs"`
	Built    *Artifact      `json:"built,omitempty"`
	Tenant   string         `json:"tenant"`
	Sequence int            `json:"sequence"` // 1 for the deployment's first revision, and so on
}

// KeyRecord is an API key as the projection keeps it.
type KeyRecord struct {
	KeyData
	Revoked bool `json:"revoked,omitempty"`
}
