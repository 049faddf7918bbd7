package tracing

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// A project's id is derived from its name (projections.ProjectID): runs create their project on
// first use by name, on any process and in any order, and a rebuild after the events that
// created a project have expired gives it the same id. An id a client proposes is ignored.

// CreateProject creates a project, or with upsert returns the existing project of that name
// (without upsert, an existing name is an Exists error). It answers once the projection has it.
func (s *Service) CreateProject(ctx context.Context, name string, description *string, extra map[string]any, upsert bool) (projections.Project, error) {
	const op = "tracing.create_project"
	tenant := engine.TenantFrom(ctx)
	if strings.TrimSpace(name) == "" {
		return projections.Project{}, engine.Violations{{Loc: []any{"body", "name"}, Msg: "Field required", Type: "missing"}}.Err(op)
	}
	// Another process may have created it a moment ago: read the projection as of now.
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.proj.CatchUp(cctx); err != nil {
		return projections.Project{}, engine.E(engine.Op(op), engine.Unavailable, "The trace projection is behind; retry.", err)
	}
	if p, ok, err := s.projectByName(tenant, name); err != nil || ok {
		if err == nil && !upsert {
			err = engine.E(engine.Op(op), engine.Exists, fmt.Sprintf("Project %q already exists", name))
		}
		return p, err
	}
	agg := eventlog.Aggregate{Kind: projections.TraceProjectKind, Tenant: tenant, ID: projections.ProjectID(tenant, name)}
	e, err := eventlog.New(agg, projections.ProjectCreated, projections.ProjectData{Name: name, Description: description, Extra: extra})
	if err != nil {
		return projections.Project{}, engine.E(engine.Op(op), err)
	}
	seq, err := s.log.Append(ctx, e, eventlog.Any)
	if err != nil {
		return projections.Project{}, engine.E(engine.Op(op), engine.Unavailable, "The event log is unavailable.", err)
	}
	if err := s.proj.WaitFor(cctx, seq); err != nil {
		return projections.Project{}, engine.E(engine.Op(op), engine.Unavailable, err)
	}
	p, _, err := s.projectByName(tenant, name)
	return p, err
}

func (s *Service) projectByName(tenant, name string) (p projections.Project, ok bool, err error) {
	err = s.read("tracing.project", func(v *projections.TraceView) error {
		p, ok, err = v.ProjectByName(tenant, name)
		return err
	})
	return p, ok, err
}

// GetProject returns a project by id.
func (s *Service) GetProject(ctx context.Context, id string) (projections.Project, error) {
	var p projections.Project
	err := s.read("tracing.get_project", func(v *projections.TraceView) error {
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
func (s *Service) ListProjects(ctx context.Context, q ProjectQuery) ([]projections.Project, error) {
	var all []projections.Project
	err := s.read("tracing.list_projects", func(v *projections.TraceView) error {
		var err error
		all, err = v.Projects(engine.TenantFrom(ctx))
		return err
	})
	if err != nil {
		return nil, err
	}
	out := []projections.Project{}
	for _, p := range all {
		switch {
		case q.Name != "" && p.Name != q.Name,
			q.NameContains != "" && !strings.Contains(strings.ToLower(p.Name), strings.ToLower(q.NameContains)),
			len(q.IDs) > 0 && !slices.Contains(q.IDs, p.ID):
			continue
		}
		out = append(out, p)
	}
	if q.Offset >= len(out) {
		return []projections.Project{}, nil
	}
	out = out[q.Offset:]
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// ProjectStats summarises a project from its roll-ups, kept current on every event: the
// statistics of its traces, the same as RunStats of {session: [id], is_root: true}.
func (s *Service) ProjectStats(ctx context.Context, id string) (trace.Stats, error) {
	var ps projections.ProjectStats
	err := s.read("tracing.project_stats", func(v *projections.TraceView) error {
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
