package tracingapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/tracing"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/httpapi"
)

// The v2 read API of the langsmith clients (JS 0.12 client.runs.query()/retrieve(),
// client.traces.listRuns(), client.sessions.listV2(); Python 0.11 the same through
// client.runs and friends). The clients build its URLs from LANGSMITH_ENDPOINT, so with
// .../tracing they call .../tracing/api/v2/...: the routes hang off the tracing group.

// v2DefaultWindow is how far back a v2 run query looks when it gives no min_start_time, as the
// API documents (one day).
const v2DefaultWindow = 24 * time.Hour

// tracingV2Routes mounts the v2 reads on the authenticated tracing group.
func (s *Handlers) tracingV2Routes(g *echo.Group) {
	g.POST("/api/v2/runs/query", s.queryTracedRunsV2)
	g.GET("/api/v2/runs/:run_id", s.getTracedRunV2)
	g.GET("/api/v2/traces/:trace_id/runs", s.listTraceRunsV2)
	g.POST("/api/v2/traces/query", s.queryTracesV2)
	g.GET("/api/v2/sessions", s.listTracingSessionsV2)
	s.tracingV2ThreadRoutes(g)
	// The Python client's generated sessions resource (client.sessions): create_v2, retrieve_v2
	// and update_v2 under /api/v2, and create, retrieve, update and delete under /api/v1, the
	// same operations as /sessions; v2 answers name the project's type.
	g.POST("/api/v2/sessions", sessionV2(s.createTracingSession))
	g.GET("/api/v2/sessions/:session_id", sessionV2(s.getTracingSession))
	g.PATCH("/api/v2/sessions/:session_id", sessionV2(s.updateTracingSession))
	g.POST("/api/v1/sessions", s.createTracingSession)
	g.GET("/api/v1/sessions/:session_id", s.getTracingSession)
	g.PATCH("/api/v1/sessions/:session_id", s.updateTracingSession)
	g.DELETE("/api/v1/sessions/:session_id", s.deleteTracingSession)
}

// sessionShapeV2 marks, on the request's context, a session route that answers the v2 shape.
const sessionShapeV2 = "tracing.session_v2"

// sessionTypeProject is the v2 type of a tracing project (the API also knows AGENT and
// EXPERIMENT projects, which jetgraph does not make).
const sessionTypeProject = "PROJECT"

// sessionV2 has h answer in the v2 shape (see tracingSessionJSON).
func sessionV2(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Set(sessionShapeV2, true)
		return h(c)
	}
}

// v2Field says how a v2 select field is answered from a run's v1 JSON form (key) or, when get
// is set, computed from the run.
type v2Field struct {
	key string
	get func(r *trace.Run, v1 map[string]json.RawMessage) any
}

// v2RunFields are the RunSelectField values jetgraph answers; v2Unkept are the other values of
// the enum, accepted and left out of the answer (jetgraph keeps no such data), as /runs/query
// does with app_path.
var (
	v2RunFields = map[string]v2Field{
		"ID": {key: "id"}, "NAME": {key: "name"}, "START_TIME": {key: "start_time"},
		"END_TIME": {key: "end_time"}, "FIRST_TOKEN_TIME": {key: "first_token_time"},
		"ERROR": {key: "error"}, "EXTRA": {key: "extra"}, "EVENTS": {key: "events"},
		"INPUTS": {key: "inputs"}, "OUTPUTS": {key: "outputs"}, "PARENT_RUN_IDS": {key: "parent_run_ids"},
		"PROJECT_ID": {key: "session_id"}, "TRACE_ID": {key: "trace_id"}, "DOTTED_ORDER": {key: "dotted_order"},
		"REFERENCE_EXAMPLE_ID": {key: "reference_example_id"}, "TAGS": {key: "tags"},
		"TOTAL_TOKENS": {key: "total_tokens"}, "PROMPT_TOKENS": {key: "prompt_tokens"},
		"COMPLETION_TOKENS": {key: "completion_tokens"}, "TOTAL_COST": {key: "total_cost"},
		"PROMPT_COST": {key: "prompt_cost"}, "COMPLETION_COST": {key: "completion_cost"},
		"LATENCY_SECONDS": {key: "latency"}, "FEEDBACK_STATS": {key: "feedback_stats"},
		"RUN_TYPE":  {get: func(r *trace.Run, _ map[string]json.RawMessage) any { return strings.ToUpper(r.RunType) }},
		"STATUS":    {get: func(r *trace.Run, _ map[string]json.RawMessage) any { return strings.ToUpper(r.Status) }},
		"IS_ROOT":   {get: func(r *trace.Run, _ map[string]json.RawMessage) any { return r.IsRoot() }},
		"METADATA":  {get: func(r *trace.Run, _ map[string]json.RawMessage) any { return runMetadata(r) }},
		"THREAD_ID": {get: runThreadID},
		// Answered by v2Run: the download URLs are absolute, made from the request's.
		v2Attachments: {},
		"PROMPT_TOKEN_DETAILS": {get: func(r *trace.Run, _ map[string]json.RawMessage) any {
			return rawDetails(r.PromptTokenDetails)
		}},
		"COMPLETION_TOKEN_DETAILS": {get: func(r *trace.Run, _ map[string]json.RawMessage) any {
			return rawDetails(r.CompletionTokenDetails)
		}},
		"INPUTS_PREVIEW":  {get: func(_ *trace.Run, v1 map[string]json.RawMessage) any { return preview(v1["inputs"]) }},
		"OUTPUTS_PREVIEW": {get: func(_ *trace.Run, v1 map[string]json.RawMessage) any { return preview(v1["outputs"]) }},
		"ERROR_PREVIEW": {get: func(r *trace.Run, _ map[string]json.RawMessage) any {
			if r.Error == nil {
				return nil
			}
			return truncateRunes(*r.Error, previewLength)
		}},
	}
	v2Unkept = []string{"APP_PATH", "MANIFEST", "REFERENCE_DATASET_ID", "PROMPT_COST_DETAILS",
		"COMPLETION_COST_DETAILS", "PRICE_MODEL_ID", "THREAD_EVALUATION_TIME", "IS_IN_DATASET", "LAST_QUEUED_AT",
		"SHARE_URL", "LS_USER_ID"}
)

// v2Attachments selects a run's attachments: name -> download URL. The Python client downloads
// them as they come (without joining them to LANGSMITH_ENDPOINT), so they are absolute.
const v2Attachments = "ATTACHMENTS"

// tracingBase is the tracing API's base URL as the request reached it, with a trailing slash:
// where the attachment paths of trace.AttachmentPath hang.
func tracingBase(c echo.Context) string {
	return c.Scheme() + "://" + c.Request().Host + "/tracing/"
}

// previewLength is the length, in characters, of the *_PREVIEW fields.
const previewLength = 150

func runMetadata(r *trace.Run) any {
	m, _ := r.Extra["metadata"].(map[string]any)
	if m == nil {
		return nil
	}
	return m
}

func runThreadID(r *trace.Run, _ map[string]json.RawMessage) any {
	if id := r.ThreadID(); id != "" {
		return id
	}
	return nil
}

func rawDetails(d map[string]int) any {
	if len(d) == 0 {
		return nil
	}
	return map[string]any{"raw": d}
}

func preview(raw json.RawMessage) any {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return truncateRunes(string(raw), previewLength)
}

func truncateRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// v2Selects checks the selected fields (loc names where they came from); none selects only id,
// as the API documents.
func v2Selects(names []string, errs *engine.Violations, loc ...any) []string {
	if len(names) == 0 {
		return []string{"ID"}
	}
	for i, n := range names {
		if _, ok := v2RunFields[n]; !ok && !slices.Contains(v2Unkept, n) {
			errs.Add("enum", fmt.Sprintf("%q is not a RunSelectField", n), append(slices.Clone(loc), i)...)
		}
	}
	return names
}

// v2Run is the v2 form of a run: the selected fields that it has; base is tracingBase.
func v2Run(r *trace.Run, selects []string, base string) (map[string]any, error) {
	v1, err := httpapi.JSONFields(r)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(selects))
	for _, n := range selects {
		f, ok := v2RunFields[n]
		if !ok {
			continue
		}
		var v any
		if n == v2Attachments {
			if len(r.Attachments) > 0 {
				urls := make(map[string]string, len(r.Attachments))
				for name := range r.Attachments {
					urls[name] = base + trace.AttachmentPath(r.ID, name)
				}
				v = urls
			}
		} else if f.get != nil {
			v = f.get(r, v1)
		} else if rv := v1[f.key]; len(rv) > 0 && string(rv) != "null" {
			v = rv
		}
		if v != nil {
			out[strings.ToLower(n)] = v
		}
	}
	return out, nil
}

func v2Runs(runs []*trace.Run, selects []string, base string) ([]map[string]any, error) {
	out := make([]map[string]any, 0, len(runs))
	for _, r := range runs {
		m, err := v2Run(r, selects, base)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// v2UUIDs checks a list of ids, recording each bad one under its index.
func v2UUIDs(ids []string, errs *engine.Violations, loc ...any) {
	for i, id := range ids {
		if !trace.IsUUID(strings.ToLower(id)) {
			errs.Add("uuid_parsing", fmt.Sprintf("%q is not a UUID", id), append(slices.Clone(loc), i)...)
		}
	}
}

// v2Window reads min_start_time and max_start_time into q, defaulting to the last day.
func v2Window(f *httpapi.Fields, q *tracing.Query, now time.Time) {
	bound := func(name string, def time.Time) *time.Time {
		if !f.Present(name) {
			return &def
		}
		t, err := trace.ParseTime(f.Any(name))
		if err != nil {
			f.Add("datetime_parsing", err.Error(), name)
		}
		return &t
	}
	q.StartTime = bound("min_start_time", now.Add(-v2DefaultWindow))
	q.StartBefore = bound("max_start_time", now)
	// max_start_time is inclusive in the API: a run started at it is in.
	*q.StartBefore = q.StartBefore.Add(time.Nanosecond)
}

// queryTracedRunsV2 answers POST /api/v2/runs/query: {"items": [...], "next_cursor": "..."}.
func (s *Handlers) queryTracedRunsV2(c echo.Context) error {
	var errs engine.Violations
	f, err := httpapi.ReadBody(c, &errs)
	if err != nil {
		return err
	}
	q := tracing.Query{
		Sessions: f.Strings("project_ids"), Trace: f.String("trace_id"), Filter: f.String("filter"),
		TraceFilter: f.String("trace_filter"), TreeFilter: f.String("tree_filter"), IDs: f.Strings("ids"),
		RunType: strings.ToLower(f.String("run_type")), Cursor: f.String("cursor"),
		Limit: f.Int("page_size", tracing.DefaultQueryLimit, 1),
	}
	q.IsRoot, q.Error = optBool(f, "is_root"), optBool(f, "has_error")
	if len(q.Sessions) == 0 {
		f.Add("missing", "project_ids is required (reference_dataset_id is not served)", "project_ids")
	}
	if f.Present("ai_search") {
		f.Add("value_error", "ai_search is not served by this server", "ai_search")
	}
	v2UUIDs(q.Sessions, &errs, "body", "project_ids")
	v2UUIDs(q.IDs, &errs, "body", "ids")
	if q.Trace != "" {
		v2UUIDs([]string{q.Trace}, &errs, "body", "trace_id")
	}
	v2Window(f, &q, time.Now())
	selects := v2Selects(f.Strings("selects"), &errs, "body", "selects")
	if len(errs) > 0 {
		tracing.CheckFilters(q, &errs)
	}
	if err := errs.Err("tracing.query_v2"); err != nil {
		return err
	}
	page, err := s.runs.QueryRuns(c.Request().Context(), q)
	if err != nil {
		return err
	}
	items, err := v2Runs(page.Runs, selects, tracingBase(c))
	if err != nil {
		return err
	}
	return httpapi.OK(c, map[string]any{"items": items, "next_cursor": page.Next})
}

// getTracedRunV2 answers GET /api/v2/runs/{run_id}?project_id=...&selects=...: the run, when it
// is in that project.
func (s *Handlers) getTracedRunV2(c echo.Context) error {
	var errs engine.Violations
	id := httpapi.PathUUID(c, "run_id", &errs)
	project := v2Project(c, &errs)
	selects := v2Selects(c.QueryParams()["selects"], &errs, "query", "selects")
	if err := errs.Err("tracing.get_run_v2"); err != nil {
		return err
	}
	r, err := s.runs.GetRun(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if r.SessionID != project {
		return engine.E(engine.Op("tracing.get_run_v2"), engine.NotFound, fmt.Sprintf("Run %s not found in project %s", id, project))
	}
	out, err := v2Run(r, selects, tracingBase(c))
	if err != nil {
		return err
	}
	return httpapi.OK(c, out)
}

// v2Project reads the required project_id query parameter.
func v2Project(c echo.Context, errs *engine.Violations) string {
	project := strings.ToLower(c.QueryParam("project_id"))
	switch {
	case project == "":
		errs.Add("missing", "Field required", "query", "project_id")
	case !trace.IsUUID(project):
		errs.Add("uuid_parsing", fmt.Sprintf("%q is not a UUID", project), "query", "project_id")
	}
	return project
}

// listTraceRunsV2 answers GET /api/v2/traces/{trace_id}/runs: every run of the trace in the
// window, in execution order (dotted_order).
func (s *Handlers) listTraceRunsV2(c echo.Context) error {
	var errs engine.Violations
	traceID := httpapi.PathUUID(c, "trace_id", &errs)
	project := v2Project(c, &errs)
	qf := httpapi.QueryFields(c, &errs)
	q := tracing.Query{Trace: traceID, Sessions: []string{project}, Filter: qf.String("filter")}
	v2Window(qf, &q, time.Now())
	selects := v2Selects(c.QueryParams()["selects"], &errs, "query", "selects")
	if err := errs.Err("tracing.trace_runs_v2"); err != nil {
		return err
	}
	var runs []*trace.Run
	for {
		page, err := s.runs.QueryRuns(c.Request().Context(), q)
		if err != nil {
			return err
		}
		runs = append(runs, page.Runs...)
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	slices.SortFunc(runs, func(a, b *trace.Run) int { return strings.Compare(a.DottedOrder, b.DottedOrder) })
	items, err := v2Runs(runs, selects, tracingBase(c))
	if err != nil {
		return err
	}
	return httpapi.OK(c, map[string]any{"items": items})
}

// queryTracesV2 answers POST /api/v2/traces/query: the project's traces started in the window,
// newest first, each its root run (the selected fields) and the trace's roll-ups.
func (s *Handlers) queryTracesV2(c echo.Context) error {
	var errs engine.Violations
	f, err := httpapi.ReadBody(c, &errs)
	if err != nil {
		return err
	}
	isRoot := true
	q := tracing.Query{IsRoot: &isRoot, TraceFilter: f.String("trace_filter"), TreeFilter: f.String("tree_filter"),
		IDs: f.Strings("trace_ids"), Cursor: f.String("cursor"), Limit: f.Int("page_size", tracing.DefaultQueryLimit, 1)}
	if f.Require("project_id") {
		q.Sessions = []string{f.String("project_id")}
		v2UUIDs(q.Sessions, &errs, "body", "project_id")
	}
	if f.Present("ai_search") {
		f.Add("value_error", "ai_search is not served by this server", "ai_search")
	}
	v2UUIDs(q.IDs, &errs, "body", "trace_ids")
	v2Window(f, &q, time.Now())
	selects := v2Selects(f.Strings("selects"), &errs, "body", "selects")
	if len(errs) > 0 {
		tracing.CheckFilters(q, &errs)
	}
	if err := errs.Err("tracing.query_traces_v2"); err != nil {
		return err
	}
	page, err := s.runs.QueryRuns(c.Request().Context(), q)
	if err != nil {
		return err
	}
	items := make([]map[string]any, 0, len(page.Runs))
	for _, r := range page.Runs {
		root, err := v2Run(r, selects, tracingBase(c))
		if err != nil {
			return err
		}
		agg := map[string]any{"total_tokens": r.TotalTokens}
		if r.TotalCost != nil {
			agg["total_cost"] = *r.TotalCost
		}
		if r.FirstTokenTime != nil {
			agg["first_token_time"] = engine.Time{Time: *r.FirstTokenTime}
		}
		items = append(items, map[string]any{"root_run": root, "trace_aggregates": agg})
	}
	return httpapi.OK(c, map[string]any{"items": items, "next_cursor": page.Next})
}

// listTracingSessionsV2 answers GET /api/v2/sessions: the projects, newest first, filtered by
// name, name_contains or id, paged by page_size and an opaque cursor (null on the last page).
func (s *Handlers) listTracingSessionsV2(c echo.Context) error {
	var errs engine.Violations
	q := httpapi.QueryFields(c, &errs)
	pq := tracing.ProjectQuery{Name: q.String("name"), NameContains: q.String("name_contains"),
		Limit: q.Int("page_size", 100, 1)}
	for _, id := range c.QueryParams()["id"] {
		pq.IDs = append(pq.IDs, strings.ToLower(id))
	}
	v2UUIDs(pq.IDs, &errs, "query", "id")
	pq.Offset = v2Offset(q, &errs)
	withStats := q.Bool("include_stats", false)
	if err := errs.Err("tracing.list_sessions_v2"); err != nil {
		return err
	}
	c.Set(sessionShapeV2, true)
	// One more than the page tells whether another follows.
	pq.Limit++
	ps, err := s.projects.ListProjects(c.Request().Context(), pq)
	if err != nil {
		return err
	}
	var next any
	if len(ps) == pq.Limit {
		ps = ps[:pq.Limit-1]
		next = encodeOffset(pq.Offset + len(ps))
	}
	items := make([]any, len(ps))
	for i, p := range ps {
		if items[i], err = s.tracingSessionJSON(c, p, withStats); err != nil {
			return err
		}
	}
	return httpapi.OK(c, map[string]any{"items": items, "next_cursor": next})
}
