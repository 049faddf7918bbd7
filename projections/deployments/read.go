package deployments

import (
	"encoding/json"
	"slices"
	"strings"

	"go.etcd.io/bbolt"

	cp "github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/projections"
)

// Deployment returns a tenant's deployment ("": of any tenant); another tenant's is not
// there.
func (v *View) Deployment(tenant, id string) (cp.DeploymentRecord, bool, error) {
	var d cp.DeploymentRecord
	var ok bool
	err := v.db.View(func(tx *bbolt.Tx) error {
		var err error
		ok, err = projections.GetJSON(tx.Bucket(bDeployments), []byte(id), &d)
		return err
	})
	if ok && tenant != "" && d.TenantID != tenant {
		return cp.DeploymentRecord{}, false, err
	}
	return d, ok, err
}

// DeploymentByName returns the id of a tenant's deployment of that name.
func (v *View) DeploymentByName(tenant, name string) (string, bool, error) {
	var id string
	err := v.db.View(func(tx *bbolt.Tx) error {
		id = string(tx.Bucket(bNames).Get(key(tenant, name)))
		return nil
	})
	return id, id != "", err
}

// Deployments returns a tenant's deployments that keep returns true for, newest first; an
// empty tenant is every tenant's (the pipeline's start and its poller).
func (v *View) Deployments(tenant string, keep func(*cp.DeploymentRecord) bool) ([]cp.DeploymentRecord, error) {
	var out []cp.DeploymentRecord
	err := v.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bDeployments).ForEach(func(_, raw []byte) error {
			var d cp.DeploymentRecord
			if err := json.Unmarshal(raw, &d); err != nil {
				return err
			}
			if (tenant == "" || d.TenantID == tenant) && (keep == nil || keep(&d)) {
				out = append(out, d)
			}
			return nil
		})
	})
	slices.SortStableFunc(out, func(a, b cp.DeploymentRecord) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out, err
}

// Revision returns a deployment's revision.
func (v *View) Revision(deployment, id string) (cp.RevisionRecord, bool, error) {
	var r cp.RevisionRecord
	var ok bool
	err := v.db.View(func(tx *bbolt.Tx) error {
		var err error
		ok, err = projections.GetJSON(tx.Bucket(bRevisions), key(deployment, id), &r)
		return err
	})
	return r, ok, err
}

// Revisions returns a deployment's revisions, newest first.
func (v *View) Revisions(deployment string) ([]cp.RevisionRecord, error) {
	var out []cp.RevisionRecord
	prefix := deployment + "/"
	err := v.db.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(bRevisions).Cursor()
		for k, raw := c.Seek([]byte(prefix)); k != nil && strings.HasPrefix(string(k), prefix); k, raw = c.Next() {
			var r cp.RevisionRecord
			if err := json.Unmarshal(raw, &r); err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b cp.RevisionRecord) int { return b.Sequence - a.Sequence })
	return out, err
}

// RevisionLog returns a revision's whole log.
func (v *View) RevisionLog(revision string) (string, error) {
	var out string
	err := v.db.View(func(tx *bbolt.Tx) error {
		out = string(tx.Bucket(bLogs).Get([]byte(revision)))
		return nil
	})
	return out, err
}

// Listener returns a tenant's listener.
func (v *View) Listener(tenant, id string) (cp.Listener, bool, error) {
	var l cp.Listener
	var ok bool
	err := v.db.View(func(tx *bbolt.Tx) error {
		var err error
		ok, err = projections.GetJSON(tx.Bucket(bListeners), []byte(id), &l)
		return err
	})
	if ok && l.TenantID != tenant {
		return cp.Listener{}, false, err
	}
	return l, ok, err
}

// ListenerByCompute returns the id of a tenant's listener of that compute type and id.
func (v *View) ListenerByCompute(tenant, computeType, computeID string) (string, bool, error) {
	var id string
	err := v.db.View(func(tx *bbolt.Tx) error {
		id = string(tx.Bucket(bCompute).Get(key(tenant, computeType, computeID)))
		return nil
	})
	return id, id != "", err
}

// Listeners returns a tenant's listeners, oldest first.
func (v *View) Listeners(tenant string) ([]cp.Listener, error) {
	var out []cp.Listener
	err := v.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bListeners).ForEach(func(_, raw []byte) error {
			var l cp.Listener
			if err := json.Unmarshal(raw, &l); err != nil {
				return err
			}
			if l.TenantID == tenant {
				out = append(out, l)
			}
			return nil
		})
	})
	slices.SortStableFunc(out, func(a, b cp.Listener) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, err
}

// Key returns the API key of a hash.
func (v *View) Key(hash string) (cp.KeyRecord, bool, error) {
	var r cp.KeyRecord
	var ok bool
	err := v.db.View(func(tx *bbolt.Tx) error {
		var err error
		ok, err = projections.GetJSON(tx.Bucket(bKeys), []byte(hash), &r)
		return err
	})
	return r, ok, err
}

// Keys returns every API key, revoked ones included, oldest first.
func (v *View) Keys() ([]cp.KeyRecord, error) {
	var out []cp.KeyRecord
	err := v.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bKeys).ForEach(func(_, raw []byte) error {
			var r cp.KeyRecord
			if err := json.Unmarshal(raw, &r); err != nil {
				return err
			}
			out = append(out, r)
			return nil
		})
	})
	slices.SortStableFunc(out, func(a, b cp.KeyRecord) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, err
}
