package controlplane

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

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

// parseListener is ParseListener, then the compute_config check of a k8s listener.
func (s *Service) parseListener(body map[string]any, cur *Listener) (Listener, error) {
	l, err := ParseListener(body, cur)
	if err != nil || s.compute == nil || l.ComputeType != "k8s" {
		return l, err
	}
	raw, err := json.Marshal(l.ComputeConfig)
	if err != nil {
		return l, engine.E(engine.Op("controlplane.listener"), err)
	}
	return l, s.compute(raw, "body", "compute_config")
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
	if other, taken, err := s.view.ListenerByCompute(l.TenantID, l.ComputeType, l.ComputeID); err != nil || (taken && other != l.ID) {
		if err == nil {
			err = engine.E(engine.Op(op), engine.Exists, fmt.Sprintf("Listener %s already has compute id %s.", other, l.ComputeID))
		}
		return l, err
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
