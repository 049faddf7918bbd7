package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

func listenerNotFound(op, id string) error {
	return engine.E(engine.Op(op), engine.NotFound, fmt.Sprintf("Listener ID %s not found.", id))
}

// listenerAgg is a listener's aggregate.
func listenerAgg(id string) eventlog.Aggregate {
	return eventlog.Aggregate{Kind: ListenerKind, Tenant: eventlog.DefaultTenant, ID: id}
}

// GetListener returns a tenant's listener.
func (s *Service) GetListener(ctx context.Context, id string) (Listener, error) {
	const op = "controlplane.get_listener"
	if err := s.catchUp(ctx, op); err != nil {
		return Listener{}, err
	}
	l, ok, err := s.view.Listener(engine.TenantFrom(ctx), id)
	switch {
	case err != nil:
		return l, engine.E(engine.Op(op), err)
	case !ok:
		return l, listenerNotFound(op, id)
	}
	return l, nil
}

// ListListeners returns a page of the tenant's listeners, oldest first.
func (s *Service) ListListeners(ctx context.Context, offset, limit int) ([]Listener, int, error) {
	const op = "controlplane.list_listeners"
	if err := s.catchUp(ctx, op); err != nil {
		return nil, 0, err
	}
	all, err := s.view.Listeners(engine.TenantFrom(ctx))
	if err != nil {
		return nil, 0, engine.E(engine.Op(op), err)
	}
	page := pageOf(all, offset, limit)
	return page, offset + len(page), nil
}

// CreateListener registers a compute target; its compute id is unique per compute type.
func (s *Service) CreateListener(ctx context.Context, body map[string]any) (Listener, error) {
	const op = "controlplane.create_listener"
	l, err := s.parseListener(body, nil)
	if err != nil {
		return l, err
	}
	l.ID, l.TenantID = uuid.NewString(), engine.TenantFrom(ctx)
	return s.saveListener(ctx, op, l, ListenerCreated, eventlog.At(0))
}

// The compute types of listeners. Both are a Kubernetes cluster whose deployments are rendered
// as manifests into its GitOps repository: "cluster" is the spec's name, "k8s" jetgraph's first
// one, and a listener keeps the name it was created with.
const (
	ComputeTypeK8s     = "k8s"
	ComputeTypeCluster = "cluster"
)

// computeTypes are the compute types, in the order the enum's message lists them.
var computeTypes = []string{ComputeTypeK8s, ComputeTypeCluster}

// Kubernetes tells whether a listener's deployments are rendered for Kubernetes: true of every
// compute type a listener can have today.
func Kubernetes(computeType string) bool { return slices.Contains(computeTypes, computeType) }

// parseListener is ParseListener, then the compute_config check of a Kubernetes listener.
func (s *Service) parseListener(body map[string]any, cur *Listener) (Listener, error) {
	l, err := ParseListener(body, cur)
	if err != nil || s.compute == nil || !Kubernetes(l.ComputeType) {
		return l, err
	}
	raw, err := json.Marshal(l.ComputeConfig)
	if err != nil {
		return l, engine.E(engine.Op("controlplane.listener"), err)
	}
	return l, s.compute(raw, "body", "compute_config")
}

// Namespaces are the namespaces a listener's deployments may use (compute_config.k8s_namespaces,
// the first the default); none means any.
func (l Listener) Namespaces() []string {
	list, _ := l.ComputeConfig["k8s_namespaces"].([]any)
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// DefaultNamespace is where a deployment goes on a listener that lists no namespaces.
const DefaultNamespace = "default"

// PlaceNamespace is where a deployment that asked for requested ("" for none) goes on a
// listener that allows the namespaces allowed: requested, else the first allowed, else
// "default". problem says why it cannot go there ("" when it can): the command refuses the
// deployment with it, and the publisher (manifests) applies the same rule.
func PlaceNamespace(allowed []string, requested string) (ns, problem string) {
	ns = requested
	if ns == "" && len(allowed) > 0 {
		ns = allowed[0]
	}
	if ns == "" {
		ns = DefaultNamespace
	}
	if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
		return ns, fmt.Sprintf("namespace %q: %s", ns, strings.Join(msgs, "; "))
	}
	if len(allowed) > 0 && !slices.Contains(allowed, ns) {
		return ns, fmt.Sprintf("namespace %q is not one of the listener's compute_config.k8s_namespaces (%s)", ns, strings.Join(allowed, ", "))
	}
	return ns, ""
}

// checkPlacement adds to c what is wrong with placing a new external_container deployment d on
// its listener: a listener that does not exist, a namespace it does not allow.
func (s *Service) checkPlacement(c *checker, tenant string, d Deployment) error {
	if d.Source != SourceExternalContainer || d.SourceConfig.ListenerID == nil {
		return nil
	}
	loc := []any{"body", "source_config"}
	l, ok, err := s.view.Listener(tenant, *d.SourceConfig.ListenerID)
	switch {
	case err != nil:
		return err
	case !ok:
		c.add("value_error", "Listener ID "+*d.SourceConfig.ListenerID+" not found.", at(loc, "listener_id"))
		return nil
	}
	requested := ""
	if lc := d.SourceConfig.ListenerConfig; lc != nil && lc.ClusterNamespace != nil {
		requested = *lc.ClusterNamespace
	}
	if _, problem := PlaceNamespace(l.Namespaces(), requested); problem != "" && requested != "" {
		c.add("value_error", problem, at(loc, "listener_config", "cluster_namespace"))
	}
	return nil
}

// checkMoves refuses a listener change that would move or strand a deployment: each one's
// namespace under next must be the one it has under cur and allowed.
func (s *Service) checkMoves(cur, next Listener) error {
	const op = "controlplane.update_listener"
	users, err := s.view.Deployments(cur.TenantID, func(d *DeploymentRecord) bool {
		return d.SourceConfig.ListenerID != nil && *d.SourceConfig.ListenerID == cur.ID
	})
	if err != nil {
		return engine.E(engine.Op(op), err)
	}
	var v engine.Violations
	for _, d := range users {
		requested := ""
		if lc := d.SourceConfig.ListenerConfig; lc != nil && lc.ClusterNamespace != nil {
			requested = *lc.ClusterNamespace
		}
		was, _ := PlaceNamespace(cur.Namespaces(), requested)
		now, problem := PlaceNamespace(next.Namespaces(), requested)
		switch {
		case problem != "":
			v.Add("value_error", fmt.Sprintf("deployment %s (%s) is in namespace %q, which this change no longer allows", d.Name, d.ID, was), "body", "compute_config", "k8s_namespaces")
		case now != was:
			v.Add("value_error", fmt.Sprintf("deployment %s (%s) is in namespace %q, the listener's default: this change would move it to %q (give the deployment's namespace first, or keep it listed)", d.Name, d.ID, was, now), "body", "compute_config", "k8s_namespaces")
		}
	}
	return v.Err(op)
}

// UpdateListener changes a listener's compute id or config.
func (s *Service) UpdateListener(ctx context.Context, id string, body map[string]any) (Listener, error) {
	const op = "controlplane.update_listener"
	cur, err := s.GetListener(ctx, id)
	if err != nil {
		return cur, err
	}
	l, err := s.parseListener(body, &cur)
	if err != nil {
		return cur, err
	}
	if err := s.checkMoves(cur, l); err != nil {
		return cur, err
	}
	version, err := s.proj.Version(listenerAgg(id))
	if err != nil {
		return cur, engine.E(engine.Op(op), err)
	}
	return s.saveListener(ctx, op, l, ListenerUpdated, eventlog.At(version))
}

func (s *Service) saveListener(ctx context.Context, op string, l Listener, typ string, expect eventlog.Expect) (Listener, error) {
	if err := s.catchUp(ctx, op); err != nil {
		return l, err
	}
	for _, typ := range computeTypes { // k8s and cluster name the same kind of compute
		if other, taken, err := s.view.ListenerByCompute(l.TenantID, typ, l.ComputeID); err != nil || (taken && other != l.ID) {
			if err == nil {
				err = engine.E(engine.Op(op), engine.Exists, fmt.Sprintf("Listener %s already has compute id %s.", other, l.ComputeID))
			}
			return l, err
		}
	}
	e, err := eventlog.New(listenerAgg(l.ID), typ, ListenerData{Listener: l})
	if err != nil {
		return l, engine.E(engine.Op(op), err)
	}
	if err := s.commit(ctx, op, expect, e); err != nil {
		return l, err
	}
	return s.GetListener(ctx, l.ID)
}

// DeleteListener removes a listener no deployment uses.
func (s *Service) DeleteListener(ctx context.Context, id string) error {
	const op = "controlplane.delete_listener"
	l, err := s.GetListener(ctx, id)
	if err != nil {
		return err
	}
	users, err := s.view.Deployments(l.TenantID, func(d *DeploymentRecord) bool {
		return d.SourceConfig.ListenerID != nil && *d.SourceConfig.ListenerID == id
	})
	if err != nil {
		return engine.E(engine.Op(op), err)
	}
	if len(users) > 0 {
		return engine.E(engine.Op(op), engine.Conflict, fmt.Sprintf("Listener %s is used by deployment %s.", id, users[0].ID))
	}
	e, err := eventlog.New(listenerAgg(id), ListenerDeleted, struct{}{})
	if err != nil {
		return engine.E(engine.Op(op), err)
	}
	return s.commit(ctx, op, eventlog.Any, e)
}
