package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/trace"
	"github.com/jetgraph/jetgraph/engine/tracing"
)

// tracingRoutes mounts the LLM tracing API that the langsmith clients speak under /tracing
// (LANGSMITH_ENDPOINT=http://<host>/tracing).
func (s *Server) tracingRoutes() {
	s.echo.GET("/tracing/info", s.tracingInfo)
	g := s.echo.Group("/tracing", s.tracingAuth)
	g.POST("/runs/multipart", s.traceIngestMultipart)
	g.POST("/runs/batch", s.traceIngestBatch)
	g.POST("/runs", s.postTracedRun)
	g.PATCH("/runs/:run_id", s.patchTracedRun)
	g.GET("/runs/:run_id", s.getTracedRun)
	g.POST("/runs/query", s.queryTracedRuns)
	g.POST("/runs/stats", s.tracedRunStats)
	g.POST("/sessions", s.createTracingSession)
	g.GET("/sessions", s.listTracingSessions)
	g.GET("/sessions/:session_id", s.getTracingSession)
	s.tracingV2Routes(g)
	s.tracingLifecycleRoutes(g)
}

// tracing returns the service, or an Unavailable error when this server has none.
func (s *Server) tracing() (*tracing.Service, error) {
	if s.deps.Tracing == nil {
		return nil, engine.E(engine.Op("tracing"), engine.Unavailable, "The tracing service is not enabled on this server.")
	}
	return s.deps.Tracing, nil
}

// tracingAuth acts for the tenant of the request's x-api-key.
func (s *Server) tracingAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		svc, err := s.tracing()
		if err != nil {
			return err
		}
		tenant, ok := svc.Tenant(strings.TrimSpace(c.Request().Header.Get("X-Api-Key")))
		if !ok {
			return echo.NewHTTPError(http.StatusUnauthorized, "Invalid API key.")
		}
		req := c.Request()
		c.SetRequest(req.WithContext(engine.WithTenant(req.Context(), tenant)))
		return next(c)
	}
}

// tracingInfo answers GET /tracing/info: no auth, the shape the clients read.
func (s *Server) tracingInfo(c echo.Context) error {
	svc, err := s.tracing()
	if err != nil {
		return err
	}
	return ok(c, svc.Info())
}

// traceAccepted answers an ingestion: 202 with what was accepted and the problems of what was not
// (the clients ignore the body of a 2xx; the problems are logged too).
func traceAccepted(c echo.Context, res tracing.Result) error {
	return c.JSON(http.StatusAccepted, res)
}

// traceIngest reads a request body with parse and ingests what it holds.
func (s *Server) traceIngest(c echo.Context, parse func(body io.Reader) (*tracing.Batch, error)) error {
	svc, err := s.tracing()
	if err != nil {
		return err
	}
	body, done, err := tracingBody(c, svc.BodyLimit())
	if err != nil {
		return err
	}
	defer done()
	batch, err := parse(body)
	if err != nil {
		return err
	}
	res, err := svc.Ingest(c.Request().Context(), batch)
	if err != nil {
		return err
	}
	return traceAccepted(c, res)
}

// traceIngestMultipart answers POST /runs/multipart, reading the parts as they arrive.
func (s *Server) traceIngestMultipart(c echo.Context) error {
	return s.traceIngest(c, func(body io.Reader) (*tracing.Batch, error) {
		return parseTraceMultipart(c, body, s.deps.Tracing.BodyLimit())
	})
}

// traceIngestBatch answers POST /runs/batch.
func (s *Server) traceIngestBatch(c echo.Context) error { return s.traceIngest(c, parseTraceBatch) }

// readTracedRun reads a body holding one run.
func readTracedRun(body io.Reader) (json.RawMessage, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, traceBodyError(err, "request")
	}
	return data, nil
}

// postTracedRun answers POST /runs: one run.
func (s *Server) postTracedRun(c echo.Context) error {
	return s.traceIngest(c, func(body io.Reader) (*tracing.Batch, error) {
		data, err := readTracedRun(body)
		if err != nil {
			return nil, err
		}
		return &tracing.Batch{Ops: []*tracing.Op{traceRunOp(trace.KindPost, nil, data)}}, nil
	})
}

// patchTracedRun answers PATCH /runs/{run_id}: a change to one run, which must carry its trace_id
// unless its post has been applied.
func (s *Server) patchTracedRun(c echo.Context) error {
	var errs engine.Violations
	id := pathUUID(c, "run_id", &errs)
	if err := errs.Err("tracing.patch_run"); err != nil {
		return err
	}
	return s.traceIngest(c, func(body io.Reader) (*tracing.Batch, error) {
		data, err := readTracedRun(body)
		if err != nil {
			return nil, err
		}
		o := traceRunOp(trace.KindPatch, nil, data)
		if got := o.ID(); got != "" && got != id {
			return nil, engine.Violations{{Loc: []any{"body", "id"}, Msg: "not the run id of the path", Type: "value_error"}}.Err("tracing.patch_run")
		}
		if o.Run != nil {
			o.Run["id"] = id
		}
		return &tracing.Batch{Ops: []*tracing.Op{o}}, nil
	})
}

// getTracedRun answers GET /runs/{run_id}: the run with its descendants' roll-ups.
func (s *Server) getTracedRun(c echo.Context) error {
	var errs engine.Violations
	id := pathUUID(c, "run_id", &errs)
	if err := errs.Err("tracing.get_run"); err != nil {
		return err
	}
	r, err := s.deps.Tracing.GetRun(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return ok(c, r)
}

// optBool reads an optional boolean criterion: nil when absent.
func optBool(f *fields, name string) *bool {
	if !f.present(name) {
		return nil
	}
	v := f.Bool(name, false)
	return &v
}

// tracedRunQuery reads the criteria shared by /runs/query and /runs/stats.
func tracedRunQuery(f *fields) tracing.Query {
	q := tracing.Query{
		Sessions: f.Strings("session"), Trace: f.String("trace"), ParentRun: f.String("parent_run"),
		RunType: f.String("run_type"), Filter: f.String("filter"), TraceFilter: f.String("trace_filter"),
		TreeFilter: f.String("tree_filter"), IDs: f.Strings("id"),
	}
	q.IsRoot, q.Error = optBool(f, "is_root"), optBool(f, "error")
	if f.present("start_time") {
		t, err := trace.ParseTime(f.Any("start_time"))
		if err != nil {
			f.add("datetime_parsing", err.Error(), "start_time")
		} else {
			q.StartTime = &t
		}
	}
	return q
}

// coreRunFields are answered whatever a query selects: the clients build their run model from
// each row (the Python client's pydantic Run requires id, name, run_type, start_time and
// trace_id), and place it in its trace by the others.
var coreRunFields = []string{"id", "name", "run_type", "start_time", "end_time", "trace_id",
	"dotted_order", "parent_run_id", "session_id", "status"}

// queryTracedRuns answers POST /runs/query: {"runs": [...], "cursors": {"next": ...}}.
func (s *Server) queryTracedRuns(c echo.Context) error {
	var errs engine.Violations
	f, err := readBody(c, &errs)
	if err != nil {
		return err
	}
	q := tracedRunQuery(f)
	q.Limit = f.Limit(tracing.DefaultQueryLimit, 1)
	q.Cursor = f.String("cursor")
	// Fields this server does not keep (app_path...) are left out of the answer:
	// the clients select them by default.
	sel := f.Strings("select")
	if err := errs.Err("tracing.query"); err != nil {
		return err
	}
	page, err := s.deps.Tracing.QueryRuns(c.Request().Context(), q)
	if err != nil {
		return err
	}
	var runs any = page.Runs
	if len(sel) > 0 {
		if runs, err = selectFields(page.Runs, append(sel, coreRunFields...)); err != nil {
			return err
		}
	}
	var next *string
	if page.Next != "" {
		next = &page.Next
	}
	return ok(c, map[string]any{"runs": runs, "cursors": map[string]any{"next": next}})
}

// tracedRunStats answers POST /runs/stats.
func (s *Server) tracedRunStats(c echo.Context) error {
	var errs engine.Violations
	f, err := readBody(c, &errs)
	if err != nil {
		return err
	}
	q := tracedRunQuery(f)
	if err := errs.Err("tracing.stats"); err != nil {
		return err
	}
	st, err := s.deps.Tracing.RunStats(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return ok(c, st)
}

// createTracingSession answers POST /sessions[?upsert=true]: create a project, or return the one of
// that name with upsert.
func (s *Server) createTracingSession(c echo.Context) error {
	var errs engine.Violations
	f, err := readBody(c, &errs)
	if err != nil {
		return err
	}
	q := queryFields(c, &errs)
	upsert := q.Bool("upsert", false)
	name := f.String("name")
	var description *string
	if f.present("description") {
		d := f.String("description")
		description = &d
	}
	extra := f.Object("extra")
	if !f.present("name") {
		f.add("missing", "Field required", "name")
	}
	if err := errs.Err("tracing.create_session"); err != nil {
		return err
	}
	p, err := s.deps.Tracing.CreateProject(c.Request().Context(), name, description, extra, upsert)
	if err != nil {
		return err
	}
	return ok(c, p)
}

// listTracingSessions answers GET /sessions: a list, filtered by name, name_contains or id, paged
// by limit and offset.
func (s *Server) listTracingSessions(c echo.Context) error {
	var errs engine.Violations
	q := queryFields(c, &errs)
	pq := tracing.ProjectQuery{Name: q.String("name"), NameContains: q.String("name_contains"),
		Limit: q.Limit(100, 1), Offset: q.Int("offset", 0, 0)}
	for _, id := range c.QueryParams()["id"] {
		pq.IDs = append(pq.IDs, splitComma(strings.ToLower(id))...)
	}
	withStats := q.Bool("include_stats", false)
	if err := errs.Err("tracing.list_sessions"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	ps, err := s.deps.Tracing.ListProjects(ctx, pq)
	if err != nil {
		return err
	}
	out := make([]any, len(ps))
	for i, p := range ps {
		if out[i], err = s.tracingSessionJSON(c, p, withStats); err != nil {
			return err
		}
	}
	return ok(c, out)
}

// getTracingSession answers GET /sessions/{id}[?include_stats=true].
func (s *Server) getTracingSession(c echo.Context) error {
	var errs engine.Violations
	id := pathUUID(c, "session_id", &errs)
	withStats := queryFields(c, &errs).Bool("include_stats", false)
	if err := errs.Err("tracing.get_session"); err != nil {
		return err
	}
	p, err := s.deps.Tracing.GetProject(c.Request().Context(), id)
	if err != nil {
		return err
	}
	out, err := s.tracingSessionJSON(c, p, withStats)
	if err != nil {
		return err
	}
	return ok(c, out)
}

// tracingSessionJSON is a project, with its statistics merged in when asked for.
func (s *Server) tracingSessionJSON(c echo.Context, p any, withStats bool) (any, error) {
	if !withStats {
		return p, nil
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	id, _ := out["id"].(string)
	st, err := s.deps.Tracing.ProjectStats(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	if raw, err = json.Marshal(st); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, s.sessionFeedbackStats(c, out)
}
