// Package tracingapi serves the LLM tracing API that the official langsmith clients speak, under
// /tracing (LANGSMITH_ENDPOINT=http://<host>/tracing): ingestion (multipart, batch, single runs),
// run and project reads (v1 and v2), feedback and its presigned tokens. It is the tracing
// context's room in the HTTP layer: its handlers use small interfaces of the tracing service
// defined here, read requests with httpapi's request kit, and return errors that the server's
// one error mapping answers; the server mounts them (httpapi.Deps.Tracing).
package tracingapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/tracing"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/httpapi"
)

// Ingestion is what the clients' ingestion needs of the tracing service: their API keys, the
// body limit, the info they read, the appends.
type Ingestion interface {
	// KeyTenant is the tenant of the request's key, and whether a key said so (not the default
	// tenant of a request without one).
	KeyTenant(ctx context.Context, key, tenantHeader string) (tenant string, keyed bool, err error)
	Info() tracing.Info
	BodyLimit() int64
	Ingest(ctx context.Context, b *tracing.Batch) (tracing.Result, error)
}

// Runs reads traced runs.
type Runs interface {
	GetRun(ctx context.Context, id string) (*trace.Run, error)
	QueryRuns(ctx context.Context, q tracing.Query) (tracing.Page, error)
	RunStats(ctx context.Context, q tracing.Query) (trace.Stats, error)
	// Blob is the stored content of an attachment, by its digest.
	Blob(ctx context.Context, digest string) ([]byte, error)
}

// Projects keeps the tracing projects (the clients' sessions).
type Projects interface {
	CreateProject(ctx context.Context, name string, description *string, extra map[string]any, upsert bool) (trace.Project, error)
	GetProject(ctx context.Context, id string) (trace.Project, error)
	ListProjects(ctx context.Context, q tracing.ProjectQuery) ([]trace.Project, error)
	UpdateProject(ctx context.Context, id string, u tracing.ProjectUpdate) (trace.Project, error)
	DeleteProjects(ctx context.Context, ids ...string) error
	ProjectStats(ctx context.Context, id string) (trace.Stats, error)
	ProjectFeedbackStats(ctx context.Context, id string) (map[string]trace.FeedbackStat, error)
}

// Feedback keeps the feedback on runs and the presigned tokens that create it.
type Feedback interface {
	CreateFeedback(ctx context.Context, obj map[string]any) (trace.Feedback, error)
	GetFeedback(ctx context.Context, id string) (trace.Feedback, error)
	UpdateFeedback(ctx context.Context, id string, update map[string]any) (trace.Feedback, error)
	DeleteFeedback(ctx context.Context, id string) error
	ListFeedback(ctx context.Context, q tracing.FeedbackQuery) ([]trace.Feedback, error)
	CreateFeedbackTokens(ctx context.Context, reqs []tracing.TokenRequest) ([]trace.FeedbackToken, error)
	FeedbackWithToken(ctx context.Context, tokenID string, fields, metadata map[string]any) (trace.Feedback, error)
}

// Service is all the handlers need: *tracing.Service.
type Service interface {
	Ingestion
	Runs
	Projects
	Feedback
}

// Handlers answers the tracing API. Each group of handlers uses only its part of the service.
type Handlers struct {
	ingestion Ingestion
	runs      Runs
	projects  Projects
	feedback  Feedback
	// runtimeAuth, when the runtime authenticates, admits the requests without a tracing key.
	runtimeAuth httpapi.Authenticator
}

// RequireRuntimeAuth makes a request without a tracing key (which acts for the default tenant,
// where the runtime's own runs are traced) pass a, the runtime API's authentication: the server
// calls it when the runtime authenticates.
func (s *Handlers) RequireRuntimeAuth(a httpapi.Authenticator) { s.runtimeAuth = a }

// New returns the handlers of svc, to mount on the server (httpapi.Deps.Tracing).
func New(svc Service) *Handlers {
	return &Handlers{ingestion: svc, runs: svc, projects: svc, feedback: svc}
}

// Mount registers the LLM tracing API that the langsmith clients speak under /tracing
// (LANGSMITH_ENDPOINT=http://<host>/tracing) on e, the server's: its middleware and error
// mapping answer these routes as they do the runtime's.
func (s *Handlers) Mount(e *echo.Echo) {
	e.GET("/tracing/info", s.tracingInfo)
	g := e.Group("/tracing", s.tracingAuth)
	g.POST("/runs/multipart", s.traceIngestMultipart)
	g.POST("/runs/batch", s.traceIngestBatch)
	g.POST("/runs", s.postTracedRun)
	g.PATCH("/runs/:run_id", s.patchTracedRun)
	g.GET("/runs/:run_id", s.getTracedRun)
	g.GET("/runs/:run_id/attachments/:name", s.getRunAttachment)
	g.POST("/runs/query", s.queryTracedRuns)
	g.POST("/runs/stats", s.tracedRunStats)
	g.POST("/sessions", s.createTracingSession)
	g.GET("/sessions", s.listTracingSessions)
	g.GET("/sessions/:session_id", s.getTracingSession)
	s.tracingV2Routes(g)
	s.tracingLifecycleRoutes(e, g)
}

// tracingAuth acts for the tenant of the request's x-api-key (and X-Tenant-Id, which the
// clients send when a workspace is configured); an unknown key is a 401.
func (s *Handlers) tracingAuth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		tenant, keyed, err := s.ingestion.KeyTenant(req.Context(), strings.TrimSpace(req.Header.Get("X-Api-Key")),
			strings.TrimSpace(req.Header.Get("X-Tenant-Id")))
		if engine.Is(engine.Unauthorized, err) {
			return echo.NewHTTPError(http.StatusUnauthorized, "Invalid API key.")
		}
		if err != nil {
			return err
		}
		if !keyed && s.runtimeAuth != nil {
			// The default tenant holds the traces of the runtime's runs: whoever reads or writes
			// it without a tracing key must be someone the runtime API admits.
			if _, err := s.runtimeAuth.Authenticate(req); err != nil {
				return err
			}
		}
		c.SetRequest(req.WithContext(engine.WithTenant(req.Context(), tenant)))
		return next(c)
	}
}

// tracingInfo answers GET /tracing/info: no auth, the shape the clients read.
func (s *Handlers) tracingInfo(c echo.Context) error {
	return httpapi.OK(c, s.ingestion.Info())
}

// traceAccepted answers an ingestion: 202 with what was accepted and the problems of what was not
// (the clients ignore the body of a 2xx; the problems are logged too).
func traceAccepted(c echo.Context, res tracing.Result) error {
	return c.JSON(http.StatusAccepted, res)
}

// traceIngest reads a request body with parse and ingests what it holds.
func (s *Handlers) traceIngest(c echo.Context, parse func(body io.Reader) (*tracing.Batch, error)) error {
	body, done, err := tracingBody(c, s.ingestion.BodyLimit())
	if err != nil {
		return err
	}
	defer done()
	batch, err := parse(body)
	if err != nil {
		return err
	}
	res, err := s.ingestion.Ingest(c.Request().Context(), batch)
	if err != nil {
		return err
	}
	return traceAccepted(c, res)
}

// traceIngestMultipart answers POST /runs/multipart, reading the parts as they arrive.
func (s *Handlers) traceIngestMultipart(c echo.Context) error {
	return s.traceIngest(c, func(body io.Reader) (*tracing.Batch, error) {
		return parseTraceMultipart(c, body, s.ingestion.BodyLimit())
	})
}

// traceIngestBatch answers POST /runs/batch.
func (s *Handlers) traceIngestBatch(c echo.Context) error { return s.traceIngest(c, parseTraceBatch) }

// readTracedRun reads a body holding one run.
func readTracedRun(body io.Reader) (json.RawMessage, error) {
	return readTraceText(body, "tracing.run")
}

// postTracedRun answers POST /runs: one run.
func (s *Handlers) postTracedRun(c echo.Context) error {
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
func (s *Handlers) patchTracedRun(c echo.Context) error {
	var errs engine.Violations
	id := httpapi.PathUUID(c, "run_id", &errs)
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
func (s *Handlers) getTracedRun(c echo.Context) error {
	var errs engine.Violations
	id := httpapi.PathUUID(c, "run_id", &errs)
	if err := errs.Err("tracing.get_run"); err != nil {
		return err
	}
	r, err := s.runs.GetRun(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return httpapi.OK(c, r)
}

// getRunAttachment answers GET /runs/{run_id}/attachments/{name}: the attachment's bytes, with
// its mime type; where a run's s3_urls send the clients (trace.AttachmentPath).
func (s *Handlers) getRunAttachment(c echo.Context) error {
	var errs engine.Violations
	id := httpapi.PathUUID(c, "run_id", &errs)
	name, err := url.PathUnescape(c.Param("name"))
	if err != nil {
		errs.Add("value_error", "Invalid escape in the attachment name", "path", "name")
	}
	if err := errs.Err("tracing.get_attachment"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	r, err := s.runs.GetRun(ctx, id)
	if err != nil {
		return err
	}
	a, ok := r.Attachments[name]
	if !ok {
		return engine.E(engine.Op("tracing.get_attachment"), engine.NotFound,
			fmt.Sprintf("Run %s has no attachment %q", id, name))
	}
	data, err := s.runs.Blob(ctx, a.Digest)
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, a.MimeType, data)
}

// optBool reads an optional boolean criterion: nil when absent.
func optBool(f *httpapi.Fields, name string) *bool {
	if !f.Present(name) {
		return nil
	}
	v := f.Bool(name, false)
	return &v
}

// tracedRunQuery reads the criteria shared by /runs/query and /runs/stats.
func tracedRunQuery(f *httpapi.Fields) tracing.Query {
	q := tracing.Query{
		Sessions: f.Strings("session"), Trace: f.String("trace"), ParentRun: f.String("parent_run"),
		RunType: f.String("run_type"), Filter: f.String("filter"), TraceFilter: f.String("trace_filter"),
		TreeFilter: f.String("tree_filter"), IDs: f.Strings("id"),
	}
	q.IsRoot, q.Error = optBool(f, "is_root"), optBool(f, "error")
	if f.Present("start_time") {
		t, err := trace.ParseTime(f.Any("start_time"))
		if err != nil {
			f.Add("datetime_parsing", err.Error(), "start_time")
		} else {
			q.StartTime = &t
		}
	}
	return q
}

// The orders of a run query.
const (
	orderAsc  = "asc"
	orderDesc = "desc"
)

// coreRunFields are answered whatever a query selects: the clients build their run model from
// each row (the Python client's pydantic Run requires id, name, run_type, start_time and
// trace_id), and place it in its trace by the others.
var coreRunFields = []string{"id", "name", "run_type", "start_time", "end_time", "trace_id",
	"dotted_order", "parent_run_id", "session_id", "status"}

// queryTracedRuns answers POST /runs/query: {"runs": [...], "cursors": {"next": ...}}.
func (s *Handlers) queryTracedRuns(c echo.Context) error {
	var errs engine.Violations
	f, err := httpapi.ReadBody(c, &errs)
	if err != nil {
		return err
	}
	q := tracedRunQuery(f)
	q.Limit = f.Limit(tracing.DefaultQueryLimit, 1)
	q.Cursor = f.String("cursor")
	// The Python client's read_thread asks for its turns oldest first.
	q.Ascending = f.Enum("order", orderDesc, orderAsc, orderDesc) == orderAsc
	// Fields this server does not keep (app_path...) are left out of the answer:
	// the clients select them by default.
	sel := f.Strings("select")
	if err := errs.Err("tracing.query"); err != nil {
		return err
	}
	page, err := s.runs.QueryRuns(c.Request().Context(), q)
	if err != nil {
		return err
	}
	var runs any = page.Runs
	if len(sel) > 0 {
		if runs, err = httpapi.SelectFields(page.Runs, append(sel, coreRunFields...)); err != nil {
			return err
		}
	}
	var next *string
	if page.Next != "" {
		next = &page.Next
	}
	return httpapi.OK(c, map[string]any{"runs": runs, "cursors": map[string]any{"next": next}})
}

// tracedRunStats answers POST /runs/stats.
func (s *Handlers) tracedRunStats(c echo.Context) error {
	var errs engine.Violations
	f, err := httpapi.ReadBody(c, &errs)
	if err != nil {
		return err
	}
	q := tracedRunQuery(f)
	if err := errs.Err("tracing.stats"); err != nil {
		return err
	}
	st, err := s.runs.RunStats(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return httpapi.OK(c, st)
}

// createTracingSession answers POST /sessions[?upsert=true]: create a project, or return the one of
// that name with upsert.
func (s *Handlers) createTracingSession(c echo.Context) error {
	var errs engine.Violations
	f, err := httpapi.ReadBody(c, &errs)
	if err != nil {
		return err
	}
	q := httpapi.QueryFields(c, &errs)
	upsert := q.Bool("upsert", false)
	name := f.String("name")
	var description *string
	if f.Present("description") {
		d := f.String("description")
		description = &d
	}
	extra := f.Object("extra")
	if !f.Present("name") {
		f.Add("missing", "Field required", "name")
	}
	// The v2 create names the type; jetgraph makes tracing projects only.
	f.Enum("type", sessionTypeProject, sessionTypeProject)
	if err := errs.Err("tracing.create_session"); err != nil {
		return err
	}
	p, err := s.projects.CreateProject(c.Request().Context(), name, description, extra, upsert)
	if err != nil {
		return err
	}
	out, err := s.tracingSessionJSON(c, p, false)
	if err != nil {
		return err
	}
	return httpapi.OK(c, out)
}

// listTracingSessions answers GET /sessions: a list, filtered by name, name_contains or id, paged
// by limit and offset.
func (s *Handlers) listTracingSessions(c echo.Context) error {
	var errs engine.Violations
	q := httpapi.QueryFields(c, &errs)
	pq := tracing.ProjectQuery{Name: q.String("name"), NameContains: q.String("name_contains"),
		Limit: q.Limit(100, 1), Offset: q.Int("offset", 0, 0)}
	for _, id := range c.QueryParams()["id"] {
		pq.IDs = append(pq.IDs, httpapi.SplitComma(strings.ToLower(id))...)
	}
	withStats := q.Bool("include_stats", false)
	if err := errs.Err("tracing.list_sessions"); err != nil {
		return err
	}
	ctx := c.Request().Context()
	ps, err := s.projects.ListProjects(ctx, pq)
	if err != nil {
		return err
	}
	out := make([]any, len(ps))
	for i, p := range ps {
		if out[i], err = s.tracingSessionJSON(c, p, withStats); err != nil {
			return err
		}
	}
	return httpapi.OK(c, out)
}

// getTracingSession answers GET /sessions/{id}[?include_stats=true].
func (s *Handlers) getTracingSession(c echo.Context) error {
	var errs engine.Violations
	id := httpapi.PathUUID(c, "session_id", &errs)
	withStats := httpapi.QueryFields(c, &errs).Bool("include_stats", false)
	if err := errs.Err("tracing.get_session"); err != nil {
		return err
	}
	p, err := s.projects.GetProject(c.Request().Context(), id)
	if err != nil {
		return err
	}
	out, err := s.tracingSessionJSON(c, p, withStats)
	if err != nil {
		return err
	}
	return httpapi.OK(c, out)
}

// tracingSessionJSON is a project, with its statistics merged in when asked for, and its type on
// the v2 routes (sessionV2).
func (s *Handlers) tracingSessionJSON(c echo.Context, p any, withStats bool) (any, error) {
	v2 := c.Get(sessionShapeV2) != nil
	if !withStats && !v2 {
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
	if v2 {
		out["type"] = sessionTypeProject
	}
	if !withStats {
		return out, nil
	}
	id, _ := out["id"].(string)
	st, err := s.projects.ProjectStats(c.Request().Context(), id)
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
