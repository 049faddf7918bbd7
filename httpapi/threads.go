package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/threads"
)

func (s *Server) threadRoutes() {
	s.echo.POST("/threads", s.createThread)
	s.echo.POST("/threads/search", s.searchThreads)
	s.echo.POST("/threads/count", s.countThreads)
	s.echo.POST("/threads/prune", s.pruneThreads)
	s.echo.GET("/threads/:thread_id", s.getThread)
	s.echo.PATCH("/threads/:thread_id", s.patchThread)
	s.echo.DELETE("/threads/:thread_id", s.deleteThread)
}

// ttlField reads a time to live: minutes as a number, or {"strategy": "delete", "ttl": minutes}.
func ttlField(f *Fields, name string) *engine.TTLSpec {
	if !f.Present(name) {
		return nil
	}
	if n, ok := f.Any(name).(float64); ok {
		if !ttlInRange(f.errs, n, f.loc, name) {
			return nil
		}
		return &engine.TTLSpec{Strategy: "delete", Minutes: n}
	}
	var spec struct {
		Strategy *string  `json:"strategy"`
		TTL      *float64 `json:"ttl"`
	}
	if err := json.Unmarshal(f.raw[name], &spec); err != nil || spec.TTL == nil {
		f.Add("model_type", `TTL must be a number of minutes or {"strategy": "delete", "ttl": <minutes>}`, name)
		return nil
	}
	out := &engine.TTLSpec{Strategy: "delete", Minutes: *spec.TTL}
	if spec.Strategy != nil && *spec.Strategy != "delete" {
		f.errs.Add("literal_error", "Input should be 'delete'", f.loc, name, "strategy")
		return nil
	}
	if !ttlInRange(f.errs, out.Minutes, f.loc, name, "ttl") {
		return nil
	}
	return out
}

// ttlInRange records a problem at loc unless minutes is a time to live the engine accepts.
func ttlInRange(errs *engine.Violations, minutes float64, loc ...any) bool {
	if v := engine.TTLViolation(minutes, loc...); v != nil {
		*errs = append(*errs, *v)
		return false
	}
	return true
}

func (s *Server) createThread(c echo.Context) error {
	var errs engine.Violations
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	if err := stateWithin(f, "threads.create", "supersteps"); err != nil {
		return err
	}
	req := threads.Create{
		ThreadID: f.UUID("thread_id"),
		Metadata: f.Object("metadata"),
		IfExists: f.Enum("if_exists", engine.IfExistsRaise, engine.IfExistsRaise, engine.IfExistsDoNothing),
		TTL:      ttlField(f, "ttl"),
	}
	supersteps := readSupersteps(f)
	if err := errs.Err("threads.create"); err != nil {
		return err
	}
	var th engine.Thread
	if supersteps != nil {
		th, err = s.deps.Runner.CreateWithSupersteps(c.Request().Context(), req, supersteps)
	} else {
		th, err = s.deps.Threads.Create(c.Request().Context(), req)
	}
	if err != nil {
		return err
	}
	th.TTL = nil
	return OK(c, th)
}

func (s *Server) getThread(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	q := QueryFields(c, &errs)
	include := q.Any("include")
	if err := errs.Err("threads.get"); err != nil {
		return err
	}
	th, err := s.deps.Threads.Get(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if !includes(include, "ttl") {
		th.TTL = nil
	}
	return OK(c, th)
}

// includes reports whether an include parameter (a string, a comma list or a JSON list) names v.
func includes(include any, v string) bool {
	switch x := include.(type) {
	case string:
		return x == v || slices.Contains(SplitComma(x), v)
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok && includes(s, v) {
				return true
			}
		}
	}
	return false
}

func (s *Server) patchThread(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	metadata := f.Object("metadata")
	ttl := ttlField(f, "ttl")
	if err := errs.Err("threads.patch"); err != nil {
		return err
	}
	th, err := s.deps.Threads.Patch(c.Request().Context(), id, metadata, ttl)
	if err != nil {
		return err
	}
	if prefersMinimal(c.Request().Header) {
		// The Python SDK's threads.update(return_minimal=True) asks for no body.
		return c.NoContent(http.StatusNoContent)
	}
	th.TTL = nil
	return OK(c, th)
}

// preferMinimal is the RFC 7240 preference for an answer without a body.
const preferMinimal = "return=minimal"

// prefersMinimal reports whether the request's Prefer headers hold return=minimal.
func prefersMinimal(h http.Header) bool {
	for _, v := range h.Values("Prefer") {
		for _, p := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), preferMinimal) {
				return true
			}
		}
	}
	return false
}

func (s *Server) deleteThread(c echo.Context) error {
	var errs engine.Violations
	id := PathUUID(c, "thread_id", &errs)
	if err := errs.Err("threads.delete"); err != nil {
		return err
	}
	if err := s.deps.Threads.Delete(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// threadQuery reads the filters shared by search and count.
func threadQuery(f *Fields) engine.ThreadQuery {
	q := engine.ThreadQuery{
		Metadata: f.Object("metadata"),
		Values:   f.Object("values"),
		Status:   f.Enum("status", "", engine.ThreadStatuses...),
	}
	q.IDs = uuidList(f, "ids", 0)
	return q
}

// uuidList reads a list of UUIDs at name, canonical, recording each bad one; max > 0 bounds its
// length.
func uuidList(f *Fields, name string, max int) []string {
	raw := f.Strings(name)
	if max > 0 && len(raw) > max {
		f.Add("too_long", fmt.Sprintf("List should have at most %d items, not %d", max, len(raw)), name)
	}
	var ids []string
	for i, id := range raw {
		if canonical, err := ParseUUID(id); err != nil {
			f.errs.Add("uuid_parsing", "Input should be a valid UUID", f.loc, name, i)
		} else {
			ids = append(ids, canonical)
		}
	}
	return ids
}

func (s *Server) searchThreads(c echo.Context) error {
	var errs engine.Violations
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	q := threadQuery(f)
	q.Limit = f.Limit(10, 1)
	q.Offset = f.Int("offset", 0, 0)
	q.SortBy = f.Enum("sort_by", "updated_at", engine.ThreadSortFields...)
	q.SortOrder = f.Enum("sort_order", "desc", "asc", "desc")
	sel := f.Strings("select")
	for i, name := range sel {
		if !slices.Contains(threadFields, name) {
			errs.Add("literal_error", "Input should be one of "+quoteList(threadFields), "body", "select", i)
		}
	}
	paths := extractPaths(f, &errs)
	if err := errs.Err("threads.search"); err != nil {
		return err
	}
	ts, total, err := s.deps.Threads.Search(c.Request().Context(), q)
	if err != nil {
		return err
	}
	for i := range ts {
		ts[i].TTL = nil
	}
	paginate(c, total, q.Offset, len(ts))
	if len(paths) > 0 {
		out, err := withExtracted(ts, sel, paths)
		if err != nil {
			return err
		}
		return OK(c, out)
	}
	out, err := SelectFields(ts, sel)
	if err != nil {
		return err
	}
	return OK(c, out)
}

// threadFields are the fields a thread search may select.
var threadFields = []string{"thread_id", "created_at", "updated_at", "state_updated_at", "metadata", "status", "config", "values", "interrupts"}

func (s *Server) countThreads(c echo.Context) error {
	var errs engine.Violations
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	q := threadQuery(f)
	if err := errs.Err("threads.count"); err != nil {
		return err
	}
	_, total, err := s.deps.Threads.Search(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return OK(c, total)
}

// maxPrune bounds the threads one prune request names.
const maxPrune = 1000

// pruneThreads deletes the threads named (strategy "delete", the default) or drops all their
// checkpoints but the latest ("keep_latest"), and answers {"pruned_count": n}: threads that do
// not exist are not counted.
func (s *Server) pruneThreads(c echo.Context) error {
	var errs engine.Violations
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	f.Require("thread_ids")
	ids := uuidList(f, "thread_ids", maxPrune)
	strategy := f.Enum("strategy", engine.PruneDelete, engine.PruneDelete, engine.PruneKeepLatest)
	if err := errs.Err("threads.prune"); err != nil {
		return err
	}
	n, err := s.deps.Threads.Prune(c.Request().Context(), ids, strategy)
	if err != nil {
		return err
	}
	return OK(c, map[string]int{"pruned_count": n})
}
