package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/trace"
	"github.com/jetgraph/jetgraph/engine/tracing"
)

// maxFeedbackPage is the largest page of GET /feedback.
const maxFeedbackPage = 100

// tracingLifecycleRoutes mounts feedback and the changes to projects under the tracing group.
func (s *Server) tracingLifecycleRoutes(g *echo.Group) {
	g.POST("/feedback", s.createTraceFeedback)
	g.GET("/feedback", s.listTraceFeedback)
	g.GET("/feedback/:feedback_id", s.getTraceFeedback)
	g.PATCH("/feedback/:feedback_id", s.updateTraceFeedback)
	g.DELETE("/feedback/:feedback_id", s.deleteTraceFeedback)
	g.PATCH("/sessions/:session_id", s.updateTracingSession)
	g.DELETE("/sessions/:session_id", s.deleteTracingSession)
	g.DELETE("/sessions", s.deleteTracingSessions)
}

// readObject reads the request body as a JSON object of decoded values.
func readObject(c echo.Context, errs *engine.Violations) (map[string]any, error) {
	f, err := readBody(c, errs)
	if err != nil {
		return nil, err
	}
	obj := make(map[string]any, len(f.raw))
	for k, raw := range f.raw {
		var v any
		if err := trace.DecodeValue(raw, &v); err != nil {
			errs.Add("json_invalid", "JSON decode error", "body", k)
		}
		obj[k] = v
	}
	return obj, nil
}

// createTraceFeedback answers POST /feedback: the feedback as recorded.
func (s *Server) createTraceFeedback(c echo.Context) error {
	var errs engine.Violations
	obj, err := readObject(c, &errs)
	if err != nil {
		return err
	}
	if err := errs.Err("tracing.create_feedback"); err != nil {
		return err
	}
	f, err := s.deps.Tracing.CreateFeedback(c.Request().Context(), obj)
	if err != nil {
		return err
	}
	return ok(c, f)
}

// getTraceFeedback answers GET /feedback/{id}.
func (s *Server) getTraceFeedback(c echo.Context) error {
	var errs engine.Violations
	id := pathUUID(c, "feedback_id", &errs)
	if err := errs.Err("tracing.get_feedback"); err != nil {
		return err
	}
	f, err := s.deps.Tracing.GetFeedback(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return ok(c, f)
}

// updateTraceFeedback answers PATCH /feedback/{id}: the fields given change (score, value,
// correction, comment, feedback_config), the others stay.
func (s *Server) updateTraceFeedback(c echo.Context) error {
	var errs engine.Violations
	id := pathUUID(c, "feedback_id", &errs)
	obj, err := readObject(c, &errs)
	if err != nil {
		return err
	}
	if err := errs.Err("tracing.update_feedback"); err != nil {
		return err
	}
	f, err := s.deps.Tracing.UpdateFeedback(c.Request().Context(), id, obj)
	if err != nil {
		return err
	}
	return ok(c, f)
}

// deleteTraceFeedback answers DELETE /feedback/{id}.
func (s *Server) deleteTraceFeedback(c echo.Context) error {
	var errs engine.Violations
	id := pathUUID(c, "feedback_id", &errs)
	if err := errs.Err("tracing.delete_feedback"); err != nil {
		return err
	}
	if err := s.deps.Tracing.DeleteFeedback(c.Request().Context(), id); err != nil {
		return err
	}
	return ok(c, map[string]any{})
}

// queryList returns the values of a repeated query parameter, each also split at commas.
func queryList(c echo.Context, name string) []string {
	var out []string
	for _, v := range c.QueryParams()[name] {
		out = append(out, splitComma(v)...)
	}
	return out
}

// queryUUIDs returns queryList as canonical UUIDs, recording a problem for any other value.
func queryUUIDs(c echo.Context, name string, errs *engine.Violations) []string {
	ids := queryList(c, name)
	for i, id := range ids {
		canon, err := parseUUID(id)
		if err != nil {
			errs.Add("uuid_parsing", "Input should be a valid UUID", "query", name, i)
		}
		ids[i] = canon
	}
	return ids
}

// listTraceFeedback answers GET /feedback?run=&key=&source=&session=&limit=&offset=: the newest
// first.
func (s *Server) listTraceFeedback(c echo.Context) error {
	var errs engine.Violations
	q := queryFields(c, &errs)
	fq := tracing.FeedbackQuery{
		Runs: queryUUIDs(c, "run", &errs), Sessions: queryUUIDs(c, "session", &errs),
		Keys: queryList(c, "key"), Sources: queryList(c, "source"),
		Limit: q.Int("limit", maxFeedbackPage, 1), Offset: q.Int("offset", 0, 0),
	}
	if fq.Limit > maxFeedbackPage {
		q.add("less_than_equal", "Input should be less than or equal to 100", "limit")
	}
	if err := errs.Err("tracing.list_feedback"); err != nil {
		return err
	}
	fs, err := s.deps.Tracing.ListFeedback(c.Request().Context(), fq)
	if err != nil {
		return err
	}
	return ok(c, fs)
}

// updateTracingSession answers PATCH /sessions/{id}: the fields given and not null change.
func (s *Server) updateTracingSession(c echo.Context) error {
	var errs engine.Violations
	id := pathUUID(c, "session_id", &errs)
	f, err := readBody(c, &errs)
	if err != nil {
		return err
	}
	var u tracing.ProjectUpdate
	if f.present("name") {
		name := f.String("name")
		u.Name = &name
	}
	if f.present("description") {
		d := f.String("description")
		u.Description = &d
	}
	u.Extra = f.Object("extra")
	if f.present("end_time") {
		if t, err := trace.ParseTime(f.Any("end_time")); err != nil {
			f.add("datetime_parsing", err.Error(), "end_time")
		} else {
			u.EndTime = &t
		}
	}
	if err := errs.Err("tracing.update_session"); err != nil {
		return err
	}
	p, err := s.deps.Tracing.UpdateProject(c.Request().Context(), id, u)
	if err != nil {
		return err
	}
	return ok(c, p)
}

// deleteTracingSession answers DELETE /sessions/{id}: the project goes with its traces and
// feedback.
func (s *Server) deleteTracingSession(c echo.Context) error {
	var errs engine.Violations
	id := pathUUID(c, "session_id", &errs)
	if err := errs.Err("tracing.delete_session"); err != nil {
		return err
	}
	if err := s.deps.Tracing.DeleteProjects(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// deleteTracingSessions answers DELETE /sessions?session_ids=a&session_ids=b: all, or none when
// one is unknown.
func (s *Server) deleteTracingSessions(c echo.Context) error {
	var errs engine.Violations
	ids := queryUUIDs(c, "session_ids", &errs)
	if len(ids) == 0 && len(errs) == 0 {
		errs.Add("missing", "Field required", "query", "session_ids")
	}
	if err := errs.Err("tracing.delete_sessions"); err != nil {
		return err
	}
	if err := s.deps.Tracing.DeleteProjects(c.Request().Context(), ids...); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// sessionFeedbackStats adds a project's feedback statistics to its JSON object.
func (s *Server) sessionFeedbackStats(c echo.Context, out map[string]any) error {
	id, _ := out["id"].(string)
	st, err := s.deps.Tracing.ProjectFeedbackStats(c.Request().Context(), id)
	if err != nil {
		return err
	}
	out["feedback_stats"] = st
	return nil
}
