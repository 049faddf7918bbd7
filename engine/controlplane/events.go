package controlplane

import (
	"encoding/json"
	"time"

	"github.com/jetgraph/jetgraph/eventlog"
)

// Aggregate kinds of the control stream (eventlog.ControlStream). A deployment is one
// aggregate, its revisions included, so that its events are ordered and a change to it is
// checked against its version; a listener and an API key are one each.
const (
	DeploymentKind = "deploy"
	ListenerKind   = "listener"
	KeyKind        = "apikey"
)

// Event types of a deployment's subject.
const (
	// DeploymentCreated carries the whole deployment (DeploymentData).
	DeploymentCreated = "deployment_created"
	// DeploymentUpdated carries the deployment as a PATCH left it (DeploymentData).
	DeploymentUpdated = "deployment_updated"
	// DeploymentStatusChanged carries its new status (DeploymentStatusData).
	DeploymentStatusChanged = "deployment_status"
	// DeploymentDeleted ends it: its processes and data are gone (no data).
	DeploymentDeleted = "deployment_deleted"
	// RevisionCreated carries a new revision with what it is built from (RevisionData).
	RevisionCreated = "revision_created"
	// RevisionStatusChanged moves a revision on in the pipeline (RevisionStatusData).
	RevisionStatusChanged = "revision_status"
	// RevisionLogged appends to a revision's log (RevisionLogData).
	RevisionLogged = "revision_log"
	// RolloutRequested asks for a revision to be rolled out again: a redeploy
	// (RolloutData).
	RolloutRequested = "rollout_requested"
)

// Event types of a listener's subject (ListenerData, or none for a deletion).
const (
	ListenerCreated = "listener_created"
	ListenerUpdated = "listener_updated"
	ListenerDeleted = "listener_deleted"
)

// Event types of an API key's subject.
const (
	// KeyCreated carries the key's hash, never the key (KeyData).
	KeyCreated = "key_created"
	// KeyRevoked makes the key unknown from then on (no data).
	KeyRevoked = "key_revoked"
)

// DeploymentData is a deployment as created or updated. Its secrets' values are on the log
// (a deployment's processes need them); answers and `jetgraph events` mask them.
type DeploymentData struct {
	Deployment Deployment `json:"deployment"`
}

// DeploymentStatusData is a deployment's new status.
type DeploymentStatusData struct {
	Status DeploymentStatus `json:"status"`
}

// RevisionInputs are what a revision is built and deployed from, fixed when it is created:
// a redeploy of it runs the same thing again.
type RevisionInputs struct {
	RepoURL         string   `json:"repo_url,omitempty"`
	RepoRef         string   `json:"repo_ref,omitempty"`
	GraphConfigPath string   `json:"graph_config_path,omitempty"`
	InstallCommand  string   `json:"install_command,omitempty"`
	BuildCommand    string   `json:"build_command,omitempty"`
	ImageURI        string   `json:"image_uri,omitempty"`
	ListenerID      string   `json:"listener_id,omitempty"`
	Namespace       string   `json:"namespace,omitempty"`
	ResourceSpec    []byte   `json:"resource_spec,omitempty"`
	Secrets         []Secret `json:"secrets"`
	Trigger         string   `json:"trigger,omitempty"` // "create", "patch", "push"
	PushedCommit    string   `json:"pushed_commit,omitempty"`
}

// RevisionData is a new revision.
type RevisionData struct {
	Revision Revision       `json:"revision"`
	Inputs   RevisionInputs `json:"inputs"`
}

// RevisionStatusData moves revision RevisionID to Status. Reason is a failure's; CommitSHA the
// commit a build checked out; Artifact what it produced (AWAITING_DEPLOY); Note says why, for
// the history (an interruption resumed, a supersession).
type RevisionStatusData struct {
	RevisionID string         `json:"revision_id"`
	Status     RevisionStatus `json:"status"`
	Note       string         `json:"note,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	CommitSHA  string         `json:"commit_sha,omitempty"`
	Artifact   *Artifact      `json:"artifact,omitempty"`
}

// RevisionLogData is a piece of a revision's log, in order.
type RevisionLogData struct {
	RevisionID string `json:"revision_id"`
	Text       string `json:"text"`
}

// RolloutData asks for RevisionID to be rolled out (again).
type RolloutData struct {
	RevisionID string `json:"revision_id"`
}

// ListenerData is a listener as created or updated.
type ListenerData struct {
	Listener Listener `json:"listener"`
}

// KeyData is an API key as stored: its hash, never the key.
type KeyData struct {
	ID         string    `json:"id"`
	Hash       string    `json:"hash"`
	Prefix     string    `json:"prefix"`
	TenantID   string    `json:"tenant_id"`
	TenantName string    `json:"tenant_name"`
	Admin      bool      `json:"admin,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
	// DeploymentID, when set, scopes the key to a deployment: its processes send their traces
	// with it to the control plane's tracing API. It is accepted there only, and revoked with
	// the deployment.
	DeploymentID string `json:"deployment_id,omitempty"`
	// Holder names the process that minted a deployment key (its host and data folder): each
	// process of a cluster runs the deployment with a key of its own, and replacing its key
	// revokes only its own older ones.
	Holder string `json:"holder,omitempty"`
}

// DeploymentAggregate is the aggregate of a deployment's events.
func DeploymentAggregate(id string) eventlog.Aggregate { return deploymentAgg(id) }

// MaskEvent is e as it is shown (`jetgraph events deployment`, GET .../events): the values of
// the secrets it carries masked.
func MaskEvent(e eventlog.Event) eventlog.Event {
	var raw json.RawMessage
	switch e.Type {
	case DeploymentCreated, DeploymentUpdated:
		var d DeploymentData
		if json.Unmarshal(e.Data, &d) != nil {
			return e
		}
		d.Deployment = d.Deployment.Masked()
		raw, _ = json.Marshal(d)
	case RevisionCreated:
		var d RevisionData
		if json.Unmarshal(e.Data, &d) != nil {
			return e
		}
		d.Inputs.Secrets = Deployment{Secrets: d.Inputs.Secrets}.Masked().Secrets
		raw, _ = json.Marshal(d)
	default:
		return e
	}
	e.Data = raw
	return e
}
