package tracing

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections/traces"
)

// A project's id is derived from its name (traces.ProjectID): runs create their project on
// first use by name, on any process and in any order, and a rebuild after the events that
// created a project have expired gives it the same id. An id a client proposes is ignored.

// CreateProject creates a project, or with upsert returns the existing project of that name
// (without upsert, an existing name is an Exists error). It answers once the projection has it.
func (s *Service) CreateProject(ctx context.Context, name string, description *string, extra map[string]any, upsert bool) (trace.Project, error) {
	const op = "tracing.create_project"
	tenant := engine.TenantFrom(ctx)
	if strings.TrimSpace(name) == "" {
		return trace.Project{}, engine.Violations{{Loc: []any{"body", "name"}, Msg: "Field required", Type: "missing"}}.Err(op)
	}
	if e := engine.ProjectNameViolation(name, "body", "name"); e != nil {
		return trace.Project{}, engine.Violations{*e}.Err(op)
	}
	// Another process may have created it a moment ago: read the projection as of now.
	if err := s.catchUp(ctx, op); err != nil {
		return trace.Project{}, err
	}
	if p, ok, err := s.projectByName(tenant, name); err != nil || ok {
		if err == nil && !upsert {
			err = engine.E(engine.Op(op), engine.Exists, fmt.Sprintf("Project %q already exists", name))
		}
		return p, err
	}
	agg := eventlog.Aggregate{Kind: traces.TraceProjectKind, Tenant: tenant, ID: traces.ProjectID(tenant, name)}
	e, err := eventlog.New(agg, traces.ProjectCreated, traces.ProjectData{Name: name, Description: description, Extra: extra})
	if err != nil {
		return trace.Project{}, engine.E(engine.Op(op), err)
	}
	if err := s.commit(ctx, op, e); err != nil {
		return trace.Project{}, err
	}
	p, _, err := s.projectByName(tenant, name)
	return p, err
}

// ProjectUpdate holds the fields of a project to change; nil ones are left as they are (the
// clients send every field, null when unchanged).
type ProjectUpdate struct {
	Name        *string
	Description *string
	Extra       map[string]any
	EndTime     *time.Time
}

// UpdateProject changes a project (PATCH /sessions/{id}) and returns it as it is then. A name
// another project has is an Exists error.
func (s *Service) UpdateProject(ctx context.Context, id string, u ProjectUpdate) (trace.Project, error) {
	const op = "tracing.update_project"
	tenant := engine.TenantFrom(ctx)
	id = strings.ToLower(id)
	if u.Name != nil && strings.TrimSpace(*u.Name) == "" {
		return trace.Project{}, engine.Violations{{Loc: []any{"body", "name"}, Msg: "String should not be empty", Type: "string_too_short"}}.Err(op)
	}
	if u.Name != nil {
		if e := engine.ProjectNameViolation(*u.Name, "body", "name"); e != nil {
			return trace.Project{}, engine.Violations{*e}.Err(op)
		}
	}
	if err := s.catchUp(ctx, op); err != nil {
		return trace.Project{}, err
	}
	p, err := s.GetProject(ctx, id)
	if err != nil {
		return p, err
	}
	if u.Name != nil && *u.Name != p.Name {
		if other, ok, err := s.projectByName(tenant, *u.Name); err != nil || ok {
			if err == nil {
				err = engine.E(engine.Op(op), engine.Exists, fmt.Sprintf("Project %q already exists (%s)", *u.Name, other.ID))
			}
			return p, err
		}
	}
	d := traces.ProjectUpdateData{Name: u.Name, Description: u.Description, Extra: u.Extra}
	if u.EndTime != nil {
		t := engine.At(*u.EndTime)
		d.EndTime = &t
	}
	e, err := eventlog.New(eventlog.Aggregate{Kind: traces.TraceProjectKind, Tenant: tenant, ID: p.ID}, traces.ProjectUpdated, d)
	if err != nil {
		return p, engine.E(engine.Op(op), err)
	}
	if err := s.commit(ctx, op, e); err != nil {
		return p, err
	}
	return s.GetProject(ctx, id)
}

// DeleteProjects deletes projects (DELETE /sessions/{id}, DELETE /sessions?session_ids=...)
// with their traces and feedback, one event each, once all are known to exist. It answers once
// the projection has applied the deletions.
func (s *Service) DeleteProjects(ctx context.Context, ids ...string) error {
	const op = "tracing.delete_project"
	tenant := engine.TenantFrom(ctx)
	if err := s.catchUp(ctx, op); err != nil {
		return err
	}
	events := make([]eventlog.Event, 0, len(ids))
	for _, id := range ids {
		p, err := s.GetProject(ctx, id)
		if err != nil {
			return err
		}
		e, err := eventlog.New(eventlog.Aggregate{Kind: traces.TraceProjectKind, Tenant: tenant, ID: p.ID}, traces.ProjectDeleted, struct{}{})
		if err != nil {
			return engine.E(engine.Op(op), err)
		}
		events = append(events, e)
	}
	for _, e := range events {
		if err := s.commit(ctx, op, e); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) projectByName(tenant, name string) (p trace.Project, ok bool, err error) {
	err = s.read("tracing.project", func(v *traces.TraceView) error {
		p, ok, err = v.ProjectByName(tenant, name)
		return err
	})
	return p, ok, err
}

// GetProject returns a project by id.
func (s *Service) GetProject(ctx context.Context, id string) (trace.Project, error) {
	var p trace.Project
	err := s.read("tracing.get_project", func(v *traces.TraceView) error {
		var ok bool
		var err error
		if p, ok, err = v.Project(engine.TenantFrom(ctx), strings.ToLower(id)); err == nil && !ok {
			err = engine.E(engine.Op("tracing.get_project"), engine.NotFound, fmt.Sprintf("Project %s not found", id))
		}
		return err
	})
	return p, err
}

// ProjectQuery selects projects.
type ProjectQuery struct {
	Name         string   // exactly this name
	NameContains string   // names containing this, case-insensitively
	IDs          []string // these ids
	Limit        int      // 0: all
	Offset       int
}

// ListProjects returns a page of the tenant's projects matching q, the newest first.
func (s *Service) ListProjects(ctx context.Context, q ProjectQuery) ([]trace.Project, error) {
	var all []trace.Project
	err := s.read("tracing.list_projects", func(v *traces.TraceView) error {
		var err error
		all, err = v.Projects(engine.TenantFrom(ctx))
		return err
	})
	if err != nil {
		return nil, err
	}
	out := []trace.Project{}
	for _, p := range all {
		switch {
		case q.Name != "" && p.Name != q.Name,
			q.NameContains != "" && !strings.Contains(strings.ToLower(p.Name), strings.ToLower(q.NameContains)),
			len(q.IDs) > 0 && !slices.Contains(q.IDs, p.ID):
			continue
		}
		out = append(out, p)
	}
	return page(out, q.Offset, q.Limit), nil
}

// page returns the items from offset on, at most limit of them (0: all); never nil.
func page[T any](items []T, offset, limit int) []T {
	if offset >= len(items) {
		return []T{}
	}
	items = items[offset:]
	if limit > 0 && len(items) > limit {
		items = items[:limit]
	}
	return items
}

// ProjectStats summarises a project from its roll-ups, kept current on every event: the
// statistics of its traces, the same as RunStats of {session: [id], is_root: true}.
func (s *Service) ProjectStats(ctx context.Context, id string) (trace.Stats, error) {
	var ps traces.ProjectStats
	err := s.read("tracing.project_stats", func(v *traces.TraceView) error {
		ps = v.ProjectStats(engine.TenantFrom(ctx), strings.ToLower(id))
		return nil
	})
	if err != nil {
		return trace.Stats{}, err
	}
	st := trace.Stats{
		RunCount: int(ps.Roots), PromptTokens: int(ps.PromptTokens), CompletionTokens: int(ps.CompletionTokens),
		TotalTokens: int(ps.TotalTokens), PromptCost: ps.PromptCost, CompletionCost: ps.CompletionCost,
		TotalCost: ps.TotalCost, LastRunStartTime: ps.LastRunStart,
		LatencyP50: percentile(ps.Latencies, 0.5), LatencyP99: percentile(ps.Latencies, 0.99),
		FirstTokenP50: percentile(ps.FirstTokens, 0.5), FirstTokenP99: percentile(ps.FirstTokens, 0.99),
	}
	if ps.Roots > 0 {
		st.ErrorRate = float64(ps.Errors) / float64(ps.Roots)
		st.StreamingRate = float64(ps.Streaming) / float64(ps.Roots)
	}
	return st, nil
}

// percentile is the p-quantile of sorted values, interpolated linearly between the closest ranks
// and rounded to microseconds: the rule of trace.ComputeStats. nil when there are none.
func percentile(sorted []float64, p float64) *float64 {
	if len(sorted) == 0 {
		return nil
	}
	pos := p * float64(len(sorted)-1)
	lo, hi := int(math.Floor(pos)), int(math.Ceil(pos))
	q := sorted[lo] + (sorted[hi]-sorted[lo])*(pos-float64(lo))
	q = math.Round(q*1e6) / 1e6
	return &q
}
