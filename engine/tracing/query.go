package tracing

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/projections/traces"
)

// DefaultQueryLimit is the page size of a run query that gives none.
const DefaultQueryLimit = 100

// Query selects runs (POST /runs/query, POST /runs/stats). Every criterion given must hold.
type Query struct {
	Sessions  []string // project ids; none: every project
	Trace     string   // runs of this trace
	ParentRun string   // children of this run
	IsRoot    *bool
	RunType   string
	// Filter applies to the run, TraceFilter to the root of its trace, TreeFilter to any run
	// of its trace (the filter language of trace.ParseFilter).
	Filter, TraceFilter, TreeFilter string
	StartTime                       *time.Time // runs started at or after it
	StartBefore                     *time.Time // runs started before it
	Error                           *bool      // runs with (true) or without (false) an error
	IDs                             []string
	Limit                           int    // 0: DefaultQueryLimit
	Cursor                          string // from a previous Page
	// Ascending pages the runs oldest first (the clients' order "asc"); newest first without.
	Ascending bool
}

// Page is one page of a run query, newest runs first (oldest first when the query is
// ascending); Next is the cursor of the following page, "" on the last one.
type Page struct {
	Runs []*trace.Run
	Next string
}

// matcher is a checked query with what it learns about traces while it runs.
type matcher struct {
	q                     Query
	filter, traceF, treeF trace.Filter
	sessions, ids         map[string]bool
	v                     *traces.TraceView
	tenant                string
	rootMatch, treeMatch  map[string]bool
}

// CheckFilters records in errs the problems of q's filters, for a handler that lists every
// problem of a request before it queries.
func CheckFilters(q Query, errs *engine.Violations) {
	parseFilters(q, errs)
}

// parseFilters parses q's filter, trace_filter and tree_filter (nil when not given).
func parseFilters(q Query, errs *engine.Violations) (filter, traceF, treeF trace.Filter) {
	parse := func(field, text string) trace.Filter {
		if strings.TrimSpace(text) == "" {
			return nil
		}
		f, err := trace.ParseFilter(text)
		if err != nil {
			errs.Add("value_error", err.Error(), "body", field)
		}
		return f
	}
	return parse("filter", q.Filter), parse("trace_filter", q.TraceFilter), parse("tree_filter", q.TreeFilter)
}

func (s *Service) compile(q Query) (*matcher, *traces.Position, error) {
	var errs engine.Violations
	m := &matcher{q: q, rootMatch: map[string]bool{}, treeMatch: map[string]bool{}}
	m.filter, m.traceF, m.treeF = parseFilters(q, &errs)
	if q.RunType != "" && !slices.Contains(trace.RunTypes, q.RunType) {
		errs.Add("enum", fmt.Sprintf("%q is not one of %s", q.RunType, strings.Join(trace.RunTypes, ", ")), "body", "run_type")
	}
	set := func(field string, ids []string) map[string]bool {
		if len(ids) == 0 {
			return nil
		}
		out := map[string]bool{}
		for i, id := range ids {
			if !trace.IsUUID(strings.ToLower(id)) {
				errs.Add("uuid_parsing", fmt.Sprintf("%q is not a UUID", id), "body", field, i)
			}
			out[strings.ToLower(id)] = true
		}
		return out
	}
	m.sessions, m.ids = set("session", q.Sessions), set("id", q.IDs)
	for field, id := range map[string]string{"trace": q.Trace, "parent_run": q.ParentRun} {
		if id != "" && !trace.IsUUID(strings.ToLower(id)) {
			errs.Add("uuid_parsing", fmt.Sprintf("%q is not a UUID", id), "body", field)
		}
	}
	m.q.Trace, m.q.ParentRun = strings.ToLower(q.Trace), strings.ToLower(q.ParentRun)
	var after *traces.Position
	if q.Cursor != "" {
		p, err := decodeCursor(q.Cursor)
		if err != nil {
			errs.Add("value_error", "not a cursor this server gave", "body", "cursor")
		}
		after = p
	}
	return m, after, errs.Err("tracing.query")
}

// EncodeCursor and decodeCursor turn a position into the opaque text clients pass back.
func encodeCursor(p traces.Position) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(p.Start, 10) + ":" + p.ID))
}

func decodeCursor(s string) (*traces.Position, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	start, id, ok := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(start, 10, 64)
	if !ok || err != nil {
		return nil, fmt.Errorf("bad cursor")
	}
	return &traces.Position{Start: n, ID: id}, nil
}

func position(r *trace.Run) traces.Position {
	return traces.Position{Start: r.StartTime.UnixNano(), ID: r.ID}
}

// before reports whether position a comes before b in the query's order.
func (m *matcher) before(a, b traces.Position) bool {
	if m.q.Ascending {
		return b.Before(a)
	}
	return a.Before(b)
}

// match reports whether a run meets every criterion.
func (m *matcher) match(r *trace.Run) (bool, error) {
	q := m.q
	switch {
	case m.sessions != nil && !m.sessions[r.SessionID],
		m.ids != nil && !m.ids[r.ID],
		q.Trace != "" && r.TraceID != q.Trace,
		q.ParentRun != "" && (r.ParentRunID == nil || *r.ParentRunID != q.ParentRun),
		q.IsRoot != nil && r.IsRoot() != *q.IsRoot,
		q.RunType != "" && r.RunType != q.RunType,
		q.StartTime != nil && r.StartTime.Before(*q.StartTime),
		q.StartBefore != nil && !r.StartTime.Before(*q.StartBefore),
		q.Error != nil && (r.Status == trace.StatusError) != *q.Error,
		m.filter != nil && !m.filter.Match(r):
		return false, nil
	}
	if m.traceF != nil {
		ok, seen := m.rootMatch[r.TraceID]
		if !seen {
			root, found, err := m.v.Run(m.tenant, r.TraceID)
			if err != nil {
				return false, err
			}
			ok = found && m.traceF.Match(root)
			m.rootMatch[r.TraceID] = ok
		}
		if !ok {
			return false, nil
		}
	}
	if m.treeF != nil {
		ok, seen := m.treeMatch[r.TraceID]
		if !seen {
			for _, id := range m.v.TraceRunIDs(m.tenant, r.TraceID) {
				run, found, err := m.v.Run(m.tenant, id)
				if err != nil {
					return false, err
				}
				if ok = found && m.treeF.Match(run); ok {
					break
				}
			}
			m.treeMatch[r.TraceID] = ok
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// collect returns the matching runs after the position after, in the query's order, at most
// limit of them (limit <= 0: all).
func (m *matcher) collect(after *traces.Position, limit int) ([]*trace.Run, error) {
	var out []*trace.Run
	keep := func(r *trace.Run) (bool, error) {
		if after != nil && !m.before(*after, position(r)) {
			return false, nil
		}
		return m.match(r)
	}
	// A run list named by the query: its ids, its trace, or its parent's trace.
	var ids []string
	switch {
	case m.ids != nil:
		for id := range m.ids {
			ids = append(ids, id)
		}
	case m.q.Trace != "":
		ids = m.v.TraceRunIDs(m.tenant, m.q.Trace)
	case m.q.ParentRun != "":
		traceID, ok, err := m.v.TraceOf(m.tenant, m.q.ParentRun)
		if err != nil || !ok {
			return nil, err
		}
		ids = m.v.TraceRunIDs(m.tenant, traceID)
	default:
		return m.scanProjects(after, limit, keep)
	}
	for _, id := range ids {
		r, ok, err := m.v.Run(m.tenant, id)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if yes, err := keep(r); err != nil {
			return nil, err
		} else if yes {
			out = append(out, r)
		}
	}
	return m.sortAndCut(out, limit), nil
}

// scanProjects walks the projects' start-time indexes, each in the query's order, stopping each
// at limit matches: the page is among them.
func (m *matcher) scanProjects(after *traces.Position, limit int, keep func(*trace.Run) (bool, error)) ([]*trace.Run, error) {
	projects := m.q.Sessions
	if len(projects) == 0 {
		all, err := m.v.Projects(m.tenant)
		if err != nil {
			return nil, err
		}
		for _, p := range all {
			projects = append(projects, p.ID)
		}
	}
	var out []*trace.Run
	for _, p := range projects {
		n := 0
		err := m.v.ScanProject(m.tenant, strings.ToLower(p), after, m.q.Ascending, func(id string, _ traces.Position) (bool, error) {
			r, ok, err := m.v.Run(m.tenant, id)
			if err != nil || !ok {
				return err == nil, err
			}
			yes, err := keep(r)
			if yes {
				out = append(out, r)
				n++
			}
			return err == nil && (limit <= 0 || n < limit), err
		})
		if err != nil {
			return nil, err
		}
	}
	return m.sortAndCut(out, limit), nil
}

func (m *matcher) sortAndCut(runs []*trace.Run, limit int) []*trace.Run {
	slices.SortFunc(runs, func(a, b *trace.Run) int {
		pa, pb := position(a), position(b)
		switch {
		case m.before(pa, pb):
			return -1
		case m.before(pb, pa):
			return 1
		}
		return 0
	})
	if limit > 0 && len(runs) > limit {
		runs = runs[:limit]
	}
	return runs
}

// QueryRuns returns a page of the runs matching q, newest first (oldest first if ascending).
func (s *Service) QueryRuns(ctx context.Context, q Query) (Page, error) {
	m, after, err := s.compile(q)
	if err != nil {
		return Page{}, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultQueryLimit
	}
	var page Page
	err = s.read("tracing.query", func(v *traces.TraceView) error {
		m.v, m.tenant = v, engine.TenantFrom(ctx)
		runs, err := m.collect(after, limit+1)
		if err != nil {
			return err
		}
		if len(runs) > limit {
			runs = runs[:limit]
			page.Next = encodeCursor(position(runs[limit-1]))
		}
		page.Runs = runs
		return nil
	})
	if page.Runs == nil {
		page.Runs = []*trace.Run{}
	}
	if err == nil {
		err = s.withFeedbackStats(engine.TenantFrom(ctx), page.Runs...)
	}
	return page, err
}

// RunStats summarises every run matching q (its limit and cursor are ignored).
func (s *Service) RunStats(ctx context.Context, q Query) (trace.Stats, error) {
	q.Cursor = ""
	m, _, err := s.compile(q)
	if err != nil {
		return trace.Stats{}, err
	}
	var runs []*trace.Run
	err = s.read("tracing.stats", func(v *traces.TraceView) error {
		m.v, m.tenant = v, engine.TenantFrom(ctx)
		runs, err = m.collect(nil, 0)
		return err
	})
	if err != nil {
		return trace.Stats{}, err
	}
	return trace.ComputeStats(runs), nil
}
