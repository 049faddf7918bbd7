package tracingapi

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/tracing"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/httpapi"
)

// maxFeedbackPage is the largest page of GET /feedback.
const maxFeedbackPage = 100

// tracingLifecycleRoutes mounts feedback and the changes to projects under the tracing group.
func (s *Handlers) tracingLifecycleRoutes(e *echo.Echo, g *echo.Group) {
	g.POST("/feedback", s.createTraceFeedback)
	g.GET("/feedback", s.listTraceFeedback)
	g.GET("/feedback/:feedback_id", s.getTraceFeedback)
	g.PATCH("/feedback/:feedback_id", s.updateTraceFeedback)
	g.DELETE("/feedback/:feedback_id", s.deleteTraceFeedback)
	g.PATCH("/sessions/:session_id", s.updateTracingSession)
	g.DELETE("/sessions/:session_id", s.deleteTracingSession)
	g.DELETE("/sessions", s.deleteTracingSessions)
	s.feedbackTokenRoutes(e, g)
}

// readObject reads the request body as a JSON object of decoded values.
func readObject(c echo.Context, errs *engine.Violations) (map[string]any, error) {
	f, err := httpapi.ReadBody(c, errs)
	if err != nil {
		return nil, err
	}
	obj := make(map[string]any, len(f.Raw()))
	for k, raw := range f.Raw() {
		var v any
		if err := trace.DecodeValue(raw, &v); err != nil {
			errs.Add("json_invalid", "JSON decode error", "body", k)
		}
		obj[k] = v
	}
	return obj, nil
}

// createTraceFeedback answers POST /feedback: the feedback as recorded.
func (s *Handlers) createTraceFeedback(c echo.Context) error {
	var errs engine.Violations
	obj, err := readObject(c, &errs)
	if err != nil {
		return err
	}
	if err := errs.Err("tracing.create_feedback"); err != nil {
		return err
	}
	f, err := s.feedback.CreateFeedback(c.Request().Context(), obj)
	if err != nil {
		return err
	}
	return httpapi.OK(c, f)
}

// getTraceFeedback answers GET /feedback/{id}.
func (s *Handlers) getTraceFeedback(c echo.Context) error {
	var errs engine.Violations
	id := httpapi.PathUUID(c, "feedback_id", &errs)
	if err := errs.Err("tracing.get_feedback"); err != nil {
		return err
	}
	f, err := s.feedback.GetFeedback(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return httpapi.OK(c, f)
}

// updateTraceFeedback answers PATCH /feedback/{id}: the fields given change (score, value,
// correction, comment, feedback_config), the others stay.
func (s *Handlers) updateTraceFeedback(c echo.Context) error {
	var errs engine.Violations
	id := httpapi.PathUUID(c, "feedback_id", &errs)
	obj, err := readObject(c, &errs)
	if err != nil {
		return err
	}
	if err := errs.Err("tracing.update_feedback"); err != nil {
		return err
	}
	f, err := s.feedback.UpdateFeedback(c.Request().Context(), id, obj)
	if err != nil {
		return err
	}
	return httpapi.OK(c, f)
}

// deleteTraceFeedback answers DELETE /feedback/{id}.
func (s *Handlers) deleteTraceFeedback(c echo.Context) error {
	var errs engine.Violations
	id := httpapi.PathUUID(c, "feedback_id", &errs)
	if err := errs.Err("tracing.delete_feedback"); err != nil {
		return err
	}
	if err := s.feedback.DeleteFeedback(c.Request().Context(), id); err != nil {
		return err
	}
	return httpapi.OK(c, map[string]any{})
}

// queryList returns the values of a repeated query parameter, each also split at commas.
func queryList(c echo.Context, name string) []string {
	var out []string
	for _, v := range c.QueryParams()[name] {
		out = append(out, httpapi.SplitComma(v)...)
	}
	return out
}

// queryUUIDs returns queryList as canonical UUIDs, recording a problem for any other value.
func queryUUIDs(c echo.Context, name string, errs *engine.Violations) []string {
	ids := queryList(c, name)
	for i, id := range ids {
		canon, err := httpapi.ParseUUID(id)
		if err != nil {
			errs.Add("uuid_parsing", "Input should be a valid UUID", "query", name, i)
		}
		ids[i] = canon
	}
	return ids
}

// listTraceFeedback answers GET /feedback?run=&key=&source=&session=&limit=&offset=: the newest
// first.
func (s *Handlers) listTraceFeedback(c echo.Context) error {
	var errs engine.Violations
	q := httpapi.QueryFields(c, &errs)
	fq := tracing.FeedbackQuery{
		Runs: queryUUIDs(c, "run", &errs), Sessions: queryUUIDs(c, "session", &errs),
		Keys: queryList(c, "key"), Sources: queryList(c, "source"),
		Limit: q.Int("limit", maxFeedbackPage, 1), Offset: q.Int("offset", 0, 0),
	}
	if fq.Limit > maxFeedbackPage {
		q.Add("less_than_equal", "Input should be less than or equal to 100", "limit")
	}
	if err := errs.Err("tracing.list_feedback"); err != nil {
		return err
	}
	fs, err := s.feedback.ListFeedback(c.Request().Context(), fq)
	if err != nil {
		return err
	}
	return httpapi.OK(c, fs)
}

// updateTracingSession answers PATCH /sessions/{id}: the fields given and not null change.
func (s *Handlers) updateTracingSession(c echo.Context) error {
	var errs engine.Violations
	id := httpapi.PathUUID(c, "session_id", &errs)
	f, err := httpapi.ReadBody(c, &errs)
	if err != nil {
		return err
	}
	var u tracing.ProjectUpdate
	if f.Present("name") {
		name := f.String("name")
		u.Name = &name
	}
	if f.Present("description") {
		d := f.String("description")
		u.Description = &d
	}
	u.Extra = f.Object("extra")
	if f.Present("end_time") {
		if t, err := trace.ParseTime(f.Any("end_time")); err != nil {
			f.Add("datetime_parsing", err.Error(), "end_time")
		} else {
			u.EndTime = &t
		}
	}
	if err := errs.Err("tracing.update_session"); err != nil {
		return err
	}
	p, err := s.projects.UpdateProject(c.Request().Context(), id, u)
	if err != nil {
		return err
	}
	out, err := s.tracingSessionJSON(c, p, false)
	if err != nil {
		return err
	}
	return httpapi.OK(c, out)
}

// deleteTracingSession answers DELETE /sessions/{id}: the project goes with its traces and
// feedback.
func (s *Handlers) deleteTracingSession(c echo.Context) error {
	var errs engine.Violations
	id := httpapi.PathUUID(c, "session_id", &errs)
	if err := errs.Err("tracing.delete_session"); err != nil {
		return err
	}
	if err := s.projects.DeleteProjects(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// deleteTracingSessions answers DELETE /sessions?session_ids=a&session_ids=b: all, or none when
// one is unknown.
func (s *Handlers) deleteTracingSessions(c echo.Context) error {
	var errs engine.Violations
	ids := queryUUIDs(c, "session_ids", &errs)
	if len(ids) == 0 && len(errs) == 0 {
		errs.Add("missing", "Field required", "query", "session_ids")
	}
	if err := errs.Err("tracing.delete_sessions"); err != nil {
		return err
	}
	if err := s.projects.DeleteProjects(c.Request().Context(), ids...); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// sessionFeedbackStats adds a project's feedback statistics to its JSON object.
func (s *Handlers) sessionFeedbackStats(c echo.Context, out map[string]any) error {
	id, _ := out["id"].(string)
	st, err := s.projects.ProjectFeedbackStats(c.Request().Context(), id)
	if err != nil {
		return err
	}
	out["feedback_stats"] = st
	return nil
}

// feedbackTokenRoutes mounts presigned feedback tokens: made with the API key, used without.
func (s *Handlers) feedbackTokenRoutes(e *echo.Echo, g *echo.Group) {
	g.POST("/feedback/tokens", s.createFeedbackTokens)
	e.GET("/tracing/feedback/tokens/:token", s.useFeedbackToken)
	e.POST("/tracing/feedback/tokens/:token", s.useFeedbackToken)
}

// tokenRequest reads one token request at loc: run_id, feedback_key, feedback_config, id (of
// the feedback to write), and expires_at or expires_in ({days, hours, minutes}; 3 hours when
// neither is given).
func tokenRequest(v any, loc []any, now time.Time, errs *engine.Violations) tracing.TokenRequest {
	var r tracing.TokenRequest
	obj, ok := v.(map[string]any)
	if !ok {
		errs.Add("dict_type", "Input should be a valid dictionary", loc...)
		return r
	}
	at := func(name string) []any { return append(slices.Clone(loc), name) }
	if r.RunID, _ = obj["run_id"].(string); !trace.IsUUID(r.RunID) {
		errs.Add("uuid_parsing", "Input should be a valid UUID", at("run_id")...)
	}
	if r.Key, _ = obj["feedback_key"].(string); strings.TrimSpace(r.Key) == "" || len(r.Key) > trace.MaxFeedbackKey {
		errs.Add("string_type", fmt.Sprintf("Input should be a non-empty string of at most %d bytes", trace.MaxFeedbackKey), at("feedback_key")...)
	}
	if id, given := obj["id"]; given && id != nil {
		if r.FeedbackID, _ = id.(string); !trace.IsUUID(r.FeedbackID) {
			errs.Add("uuid_parsing", "Input should be a valid UUID", at("id")...)
		}
	}
	if cfg, given := obj["feedback_config"]; given && cfg != nil {
		if r.Config, ok = cfg.(map[string]any); !ok {
			errs.Add("dict_type", "Input should be a valid dictionary", at("feedback_config")...)
		}
	}
	r.ExpiresAt = now.Add(tracing.DefaultTokenLife)
	switch in, at2 := obj["expires_in"], obj["expires_at"]; {
	case at2 != nil:
		t, err := trace.ParseTime(at2)
		if err != nil {
			errs.Add("datetime_parsing", err.Error(), at("expires_at")...)
		}
		r.ExpiresAt = t
	case in != nil:
		delta, ok := in.(map[string]any)
		var d time.Duration
		for unit, size := range map[string]time.Duration{"days": 24 * time.Hour, "hours": time.Hour, "minutes": time.Minute} {
			n, isNum := delta[unit].(float64)
			if delta[unit] != nil && (!isNum || n < 0 || n != float64(int64(n))) {
				ok = false
			}
			d += time.Duration(n) * size
		}
		if !ok {
			errs.Add("model_type", "Input should be {days, hours, minutes}, whole numbers at least 0", at("expires_in")...)
		}
		r.ExpiresAt = now.Add(d)
	}
	if !r.ExpiresAt.After(now) {
		errs.Add("value_error", "The token would expire at once", at("expires_at")...)
	}
	return r
}

// createFeedbackTokens answers POST /feedback/tokens: one request object and one token, or a list
// and a list. A token is {id, url, expires_at}; its URL is on this server, as the request reached it.
func (s *Handlers) createFeedbackTokens(c echo.Context) error {
	var errs engine.Violations
	data, err := httpapi.ReadJSON(c, &errs)
	if err != nil {
		return err
	}
	var body any
	if len(errs) == 0 {
		if err := trace.DecodeValue(data, &body); err != nil {
			errs.Add("json_invalid", "JSON decode error", "body")
		}
	}
	now := time.Now()
	var reqs []tracing.TokenRequest
	list, isList := body.([]any)
	if isList {
		for i, v := range list {
			reqs = append(reqs, tokenRequest(v, []any{"body", i}, now, &errs))
		}
	} else if len(errs) == 0 {
		reqs = append(reqs, tokenRequest(body, []any{"body"}, now, &errs))
	}
	if err := errs.Err("tracing.create_feedback_token"); err != nil {
		return err
	}
	toks, err := s.feedback.CreateFeedbackTokens(c.Request().Context(), reqs)
	if err != nil {
		return err
	}
	out := make([]any, len(toks))
	for i, tok := range toks {
		out[i] = map[string]any{"id": tok.ID, "expires_at": tok.ExpiresAt,
			"url": c.Scheme() + "://" + c.Request().Host + "/tracing/feedback/tokens/" + tok.ID}
	}
	if isList {
		return httpapi.OK(c, out)
	}
	return httpapi.OK(c, out[0])
}

// useFeedbackToken answers GET and POST /feedback/tokens/{token}, with no API key: feedback of
// the token's key on its run, from the query (score, value, comment, correction) or the JSON
// body (those and metadata).
func (s *Handlers) useFeedbackToken(c echo.Context) error {
	var errs engine.Violations
	id := httpapi.PathUUID(c, "token", &errs)
	var obj map[string]any
	var err error
	if c.Request().Method == http.MethodPost {
		if obj, err = readObject(c, &errs); err != nil {
			return err
		}
	} else {
		obj = map[string]any{}
		for _, name := range []string{"score", "value", "comment", "correction"} {
			v := c.QueryParam(name)
			if v == "" {
				continue
			}
			obj[name] = v
			if name == "score" {
				if n, err := strconv.ParseFloat(v, 64); err == nil {
					obj[name] = n
				} else if b, err := strconv.ParseBool(v); err == nil {
					obj[name] = b
				} else {
					errs.Add("float_parsing", "Input should be a number or a boolean", "query", name)
				}
			}
		}
	}
	metadata, isObj := obj["metadata"].(map[string]any)
	if obj["metadata"] != nil && !isObj {
		errs.Add("dict_type", "Input should be a valid dictionary", "body", "metadata")
	}
	if err := errs.Err("tracing.feedback_with_token"); err != nil {
		return err
	}
	f, err := s.feedback.FeedbackWithToken(c.Request().Context(), id, obj, metadata)
	if err != nil {
		return err
	}
	return httpapi.OK(c, f)
}
