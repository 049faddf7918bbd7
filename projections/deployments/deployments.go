// Package deployments folds the control stream (eventlog.ControlStream) into bbolt:
// deployments, their revisions (status history, failure reason, commit, log), listeners and
// API keys, for the control plane's reads.
package deployments

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/bbolt"

	cp "github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/seal"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// Buckets of the projection. Keys: deployments and listeners their id (the owner is in the
// record: every control aggregate is filed under the log's default tenant); names tenant/name;
// revisions deployment/revision; logs the revision id; keys the key's hash, key ids the id.
var (
	bDeployments = []byte("cp_deployments")
	bNames       = []byte("cp_deployment_names")
	bRevisions   = []byte("cp_revisions")
	bLogs        = []byte("cp_revision_logs")
	bListeners   = []byte("cp_listeners")
	bCompute     = []byte("cp_listener_compute")
	bKeys        = []byte("cp_keys")
	bKeyIDs      = []byte("cp_key_ids")
)

// LogTailBytes is how much of its log a revision record shows (log_tail).
const LogTailBytes = 2048

// View is the control plane's projection: the fold and its reads.
type View struct {
	db   *projections.DB
	keys *seal.Keyring
}

// SealSecrets makes the fold seal secret values that an event carries in clear text (one
// appended before the control plane sealed them), so that controlplane.db holds none. A value
// sealed already is kept as it is.
func (v *View) SealSecrets(keys *seal.Keyring) { v.keys = keys }

// New returns the view over db; the projector folding into it is the caller's.
func New(db *projections.DB) *View { return &View{db: db} }

// Name is the projection's name (its cursor).
func (v *View) Name() string { return "deployments" }

// Buckets are the projection's bbolt buckets.
func (v *View) Buckets() []string {
	return []string{string(bDeployments), string(bNames), string(bRevisions), string(bLogs),
		string(bListeners), string(bCompute), string(bKeys), string(bKeyIDs)}
}

func key(parts ...string) []byte { return []byte(strings.Join(parts, "/")) }

// Apply folds one event. An event about a record that is not there is refused (the projector
// halts): the commands never append one.
func (v *View) Apply(tx *bbolt.Tx, e eventlog.Event) error {
	switch e.Aggregate.Kind {
	case cp.DeploymentKind:
		return v.applyDeployment(tx, e)
	case cp.ListenerKind:
		return applyListener(tx, e)
	case cp.KeyKind:
		return applyKey(tx, e)
	}
	return nil
}

func decode(e eventlog.Event, v any) error {
	if err := json.Unmarshal(e.Data, v); err != nil {
		return fmt.Errorf("%s %s: %w", e.Type, e.Aggregate, err)
	}
	return nil
}

func missing(e eventlog.Event, what string) error {
	return fmt.Errorf("%s %s: no such %s", e.Type, e.Aggregate, what)
}

func (v *View) applyDeployment(tx *bbolt.Tx, e eventlog.Event) error {
	deps, revs := tx.Bucket(bDeployments), tx.Bucket(bRevisions)
	k := []byte(e.Aggregate.ID)
	var d cp.DeploymentRecord
	found, err := projections.GetJSON(deps, k, &d)
	if err != nil {
		return err
	}
	if !found && e.Type != cp.DeploymentCreated {
		return missing(e, "deployment")
	}
	switch e.Type {
	case cp.DeploymentCreated, cp.DeploymentUpdated:
		var data cp.DeploymentData
		if err := decode(e, &data); err != nil {
			return err
		}
		next := data.Deployment
		next.Secrets = cp.SealedSecrets(v.keys, next.Secrets)
		if found {
			next.Status, next.LatestRevisionID, next.ActiveRevisionID, next.CreatedAt =
				d.Status, d.LatestRevisionID, d.ActiveRevisionID, d.CreatedAt
		} else {
			next.CreatedAt = e.Time
			if err := tx.Bucket(bNames).Put(key(next.TenantID, next.Name), []byte(next.ID)); err != nil {
				return err
			}
		}
		d.Deployment, d.UpdatedAt = next, e.Time
	case cp.DeploymentStatusChanged:
		var data cp.DeploymentStatusData
		if err := decode(e, &data); err != nil {
			return err
		}
		d.Status, d.UpdatedAt = data.Status, e.Time
	case cp.DeploymentDeleted:
		if err := deleteDeployment(tx, d); err != nil {
			return err
		}
		return nil
	case cp.RevisionCreated:
		var data cp.RevisionData
		if err := decode(e, &data); err != nil {
			return err
		}
		data.Inputs.Secrets = cp.SealedSecrets(v.keys, data.Inputs.Secrets)
		r := cp.RevisionRecord{Revision: data.Revision, Inputs: data.Inputs, Tenant: d.TenantID}
		r.CreatedAt, r.UpdatedAt = e.Time, e.Time
		r.StatusHistory = []cp.StatusChange{{Status: r.Status, At: e.Time}}
		r.Sequence = revisionCount(revs, d.ID) + 1
		if err := projections.PutJSON(revs, key(d.ID, r.ID), r); err != nil {
			return err
		}
		id := r.ID
		d.LatestRevisionID, d.UpdatedAt = &id, e.Time
		d.SourceRevisionConfig = r.SourceRevisionConfig
	case cp.RevisionStatusChanged:
		var data cp.RevisionStatusData
		if err := decode(e, &data); err != nil {
			return err
		}
		var r cp.RevisionRecord
		if ok, err := projections.GetJSON(revs, key(d.ID, data.RevisionID), &r); err != nil || !ok {
			return orMissing(err, e, "revision")
		}
		r.Status, r.UpdatedAt = data.Status, e.Time
		r.StatusHistory = append(r.StatusHistory, cp.StatusChange{Status: data.Status, At: e.Time, Note: data.Note})
		if data.Reason != "" {
			reason := data.Reason
			r.FailureReason = &reason
		}
		if data.CommitSHA != "" {
			sha := data.CommitSHA
			r.SourceRevisionConfig.RepoCommitSHA = &sha
			if d.LatestRevisionID != nil && *d.LatestRevisionID == r.ID {
				d.SourceRevisionConfig.RepoCommitSHA = &sha
			}
		}
		if data.Artifact != nil {
			r.Built = data.Artifact
			r.Artifact = &cp.ArtifactRef{Kind: data.Artifact.Kind, Digest: data.Artifact.Digest, GitOpsCommit: data.Artifact.GitOpsCommit}
		}
		if data.Status == cp.RevisionDeployed {
			id := r.ID
			d.ActiveRevisionID = &id
			if d.PendingRollout == r.ID {
				d.PendingRollout = ""
			}
		}
		if data.Status == cp.RevisionDeployFailed && d.PendingRollout == r.ID {
			d.PendingRollout = ""
		}
		d.UpdatedAt = e.Time
		if err := projections.PutJSON(revs, key(d.ID, r.ID), r); err != nil {
			return err
		}
	case cp.RevisionLogged:
		var data cp.RevisionLogData
		if err := decode(e, &data); err != nil {
			return err
		}
		var r cp.RevisionRecord
		if ok, err := projections.GetJSON(revs, key(d.ID, data.RevisionID), &r); err != nil || !ok {
			return orMissing(err, e, "revision")
		}
		logs := tx.Bucket(bLogs)
		full := append(slices.Clone(logs.Get([]byte(r.ID))), data.Text...)
		if err := logs.Put([]byte(r.ID), full); err != nil {
			return err
		}
		r.LogTail = tail(full)
		if err := projections.PutJSON(revs, key(d.ID, r.ID), r); err != nil {
			return err
		}
		return nil // the deployment itself did not change
	case cp.RolloutRequested:
		var data cp.RolloutData
		if err := decode(e, &data); err != nil {
			return err
		}
		if revs.Get(key(d.ID, data.RevisionID)) == nil {
			return missing(e, "revision")
		}
		d.PendingRollout, d.UpdatedAt = data.RevisionID, e.Time
	default:
		return nil // a newer build's event type: nothing of it is kept here
	}
	return projections.PutJSON(deps, k, d)
}

func orMissing(err error, e eventlog.Event, what string) error {
	if err != nil {
		return err
	}
	return missing(e, what)
}

// tail is the end of a log, cut at a line start when it can be.
func tail(log []byte) string {
	if len(log) <= LogTailBytes {
		return string(log)
	}
	t := log[len(log)-LogTailBytes:]
	if i := slices.Index(t, '\n'); i >= 0 && i < len(t)-1 {
		t = t[i+1:]
	}
	return strings.ToValidUTF8(string(t), "")
}

func revisionCount(revs *bbolt.Bucket, deployment string) int {
	n := 0
	prefix := []byte(deployment + "/")
	c := revs.Cursor()
	for k, _ := c.Seek(prefix); k != nil && strings.HasPrefix(string(k), string(prefix)); k, _ = c.Next() {
		n++
	}
	return n
}

func deleteDeployment(tx *bbolt.Tx, d cp.DeploymentRecord) error {
	revs, logs := tx.Bucket(bRevisions), tx.Bucket(bLogs)
	prefix := d.ID + "/"
	var ids [][]byte
	c := revs.Cursor()
	for k, _ := c.Seek([]byte(prefix)); k != nil && strings.HasPrefix(string(k), prefix); k, _ = c.Next() {
		ids = append(ids, slices.Clone(k))
	}
	for _, k := range ids {
		if err := logs.Delete(k[len(prefix):]); err != nil {
			return err
		}
		if err := revs.Delete(k); err != nil {
			return err
		}
	}
	if err := tx.Bucket(bNames).Delete(key(d.TenantID, d.Name)); err != nil {
		return err
	}
	return tx.Bucket(bDeployments).Delete([]byte(d.ID))
}

func applyListener(tx *bbolt.Tx, e eventlog.Event) error {
	b, compute := tx.Bucket(bListeners), tx.Bucket(bCompute)
	k := []byte(e.Aggregate.ID)
	var cur cp.Listener
	found, err := projections.GetJSON(b, k, &cur)
	if err != nil {
		return err
	}
	if found {
		if err := compute.Delete(key(cur.TenantID, cur.ComputeType, cur.ComputeID)); err != nil {
			return err
		}
	}
	switch e.Type {
	case cp.ListenerCreated, cp.ListenerUpdated:
		if !found && e.Type == cp.ListenerUpdated {
			return missing(e, "listener")
		}
		var data cp.ListenerData
		if err := decode(e, &data); err != nil {
			return err
		}
		l := data.Listener
		l.UpdatedAt = e.Time
		if found {
			l.CreatedAt = cur.CreatedAt
		} else {
			l.CreatedAt = e.Time
		}
		if err := compute.Put(key(l.TenantID, l.ComputeType, l.ComputeID), []byte(l.ID)); err != nil {
			return err
		}
		return projections.PutJSON(b, k, l)
	case cp.ListenerDeleted:
		if !found {
			return missing(e, "listener")
		}
		return b.Delete(k)
	}
	return nil
}

func applyKey(tx *bbolt.Tx, e eventlog.Event) error {
	b, ids := tx.Bucket(bKeys), tx.Bucket(bKeyIDs)
	switch e.Type {
	case cp.KeyCreated:
		var data cp.KeyData
		if err := decode(e, &data); err != nil {
			return err
		}
		data.CreatedAt = e.Time
		if err := ids.Put([]byte(data.ID), []byte(data.Hash)); err != nil {
			return err
		}
		return projections.PutJSON(b, []byte(data.Hash), cp.KeyRecord{KeyData: data})
	case cp.KeyRevoked:
		hash := ids.Get([]byte(e.Aggregate.ID))
		var r cp.KeyRecord
		if ok, err := projections.GetJSON(b, hash, &r); err != nil || !ok {
			return orMissing(err, e, "key")
		}
		r.Revoked = true
		return projections.PutJSON(b, hash, r)
	}
	return nil
}
