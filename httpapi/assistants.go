package httpapi

import (
	"math"
	"net/http"
	"net/url"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/assistants"
)

func (s *Server) assistantRoutes() {
	s.echo.POST("/assistants", s.createAssistant)
	s.echo.POST("/assistants/search", s.searchAssistants)
	s.echo.POST("/assistants/count", s.countAssistants)
	s.echo.GET("/assistants/:assistant_id", s.getAssistant)
	s.echo.PATCH("/assistants/:assistant_id", s.patchAssistant)
	s.echo.DELETE("/assistants/:assistant_id", s.deleteAssistant)
	s.echo.POST("/assistants/:assistant_id/versions", s.assistantVersions)
	s.echo.POST("/assistants/:assistant_id/latest", s.setLatestAssistant)
	s.assistantGraphRoutes()
}

// assistantFields are the fields an assistant search may select.
var assistantFields = []string{"assistant_id", "graph_id", "config", "context", "metadata", "version",
	"name", "description", "created_at", "updated_at"}

// assistantPath returns the assistant id of the path: a UUID, or a registered graph id standing for
// its system assistant. Anything else is recorded as a problem.
func (s *Server) assistantPath(c echo.Context, errs *engine.Violations) string {
	raw := c.Param("assistant_id")
	if p, err := url.PathUnescape(raw); err == nil {
		raw = p
	}
	id, ok := s.deps.Assistants.ID(raw)
	if !ok {
		errs.Add("uuid_parsing", "Input should be a valid UUID", "path", "assistant_id")
	}
	return id
}

// optString returns the string at name, nil when absent or null.
func optString(f *Fields, name string) *string {
	if !f.Present(name) {
		return nil
	}
	n := len(*f.errs)
	v := f.String(name)
	if len(*f.errs) > n {
		return nil
	}
	return &v
}

// graphField reads a graph id, which must be a registered graph; required says it must be given.
func (s *Server) graphField(f *Fields, required bool) string {
	if required && !f.Require("graph_id") || !f.Present("graph_id") {
		return ""
	}
	n := len(*f.errs)
	g := f.String("graph_id")
	if len(*f.errs) == n {
		s.deps.Assistants.CheckGraph(f.errs, g, f.loc, "graph_id")
	}
	return g
}

// configField reads an assistant config: an object whose tags, recursion_limit and configurable,
// when given, have their types. Other keys are kept as they are.
func configField(f *Fields, name string) map[string]any {
	m := f.Object(name)
	if m == nil {
		return nil
	}
	if v := m["tags"]; v != nil {
		list, ok := v.([]any)
		for _, t := range list {
			if _, isString := t.(string); !isString {
				ok = false
			}
		}
		if !ok {
			f.errs.Add("list_type", "Input should be a valid list of strings", f.loc, name, "tags")
		}
	}
	if v := m["recursion_limit"]; v != nil {
		if n, ok := v.(float64); !ok || n != math.Trunc(n) {
			f.errs.Add("int_type", "Input should be a valid integer", f.loc, name, "recursion_limit")
		} else if n < 1 {
			f.errs.Add("greater_than_equal", "Input should be greater than or equal to 1", f.loc, name, "recursion_limit")
		}
	}
	if v := m["configurable"]; v != nil {
		if _, ok := v.(map[string]any); !ok {
			f.errs.Add("dict_type", "Input should be a valid dictionary", f.loc, name, "configurable")
		}
	}
	return m
}

func (s *Server) createAssistant(c echo.Context) error {
	var errs engine.Violations
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	req := assistants.Create{
		AssistantID: f.UUID("assistant_id"),
		GraphID:     s.graphField(f, true),
		Config:      configField(f, "config"),
		Context:     f.Object("context"),
		Metadata:    f.Object("metadata"),
		IfExists:    f.Enum("if_exists", engine.IfExistsRaise, engine.IfExistsRaise, engine.IfExistsDoNothing),
		Name:        f.String("name"),
		Description: optString(f, "description"),
	}
	if err := errs.Err("assistants.create"); err != nil {
		return err
	}
	a, err := s.deps.Assistants.Create(c.Request().Context(), req)
	if err != nil {
		return err
	}
	return OK(c, a)
}

func (s *Server) getAssistant(c echo.Context) error {
	var errs engine.Violations
	id := s.assistantPath(c, &errs)
	if err := errs.Err("assistants.get"); err != nil {
		return err
	}
	a, err := s.deps.Assistants.Get(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return OK(c, a)
}

func (s *Server) patchAssistant(c echo.Context) error {
	var errs engine.Violations
	id := s.assistantPath(c, &errs)
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	p := assistants.Patch{
		GraphID:     s.graphField(f, false),
		Config:      configField(f, "config"),
		Context:     f.Object("context"),
		Metadata:    f.Object("metadata"),
		Name:        optString(f, "name"),
		Description: optString(f, "description"),
	}
	if err := errs.Err("assistants.patch"); err != nil {
		return err
	}
	a, err := s.deps.Assistants.Patch(c.Request().Context(), id, p)
	if err != nil {
		return err
	}
	return OK(c, a)
}

func (s *Server) deleteAssistant(c echo.Context) error {
	var errs engine.Violations
	id := s.assistantPath(c, &errs)
	deleteThreads := QueryFields(c, &errs).Bool("delete_threads", false)
	if err := errs.Err("assistants.delete"); err != nil {
		return err
	}
	if err := s.deps.Assistants.Delete(c.Request().Context(), id, deleteThreads); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) assistantVersions(c echo.Context) error {
	var errs engine.Violations
	id := s.assistantPath(c, &errs)
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	metadata := f.Object("metadata")
	limit := f.Limit(10, 1)
	offset := f.Int("offset", 0, 0)
	if err := errs.Err("assistants.versions"); err != nil {
		return err
	}
	vs, total, err := s.deps.Assistants.Versions(c.Request().Context(), id, metadata, limit, offset)
	if err != nil {
		return err
	}
	paginate(c, total, offset, len(vs))
	return OK(c, vs)
}

func (s *Server) setLatestAssistant(c echo.Context) error {
	var errs engine.Violations
	id := s.assistantPath(c, &errs)
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	var version int
	if f.Require("version") {
		version = f.Int("version", 0, 1)
	}
	if err := errs.Err("assistants.set_latest"); err != nil {
		return err
	}
	a, err := s.deps.Assistants.SetLatest(c.Request().Context(), id, version)
	if err != nil {
		return err
	}
	return OK(c, a)
}

// assistantQuery reads the filters shared by search and count.
func assistantQuery(f *Fields) engine.AssistantQuery {
	return engine.AssistantQuery{
		Metadata: f.Object("metadata"),
		GraphID:  f.String("graph_id"),
		Name:     f.String("name"),
	}
}

func (s *Server) searchAssistants(c echo.Context) error {
	var errs engine.Violations
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	q := assistantQuery(f)
	q.Limit = f.Limit(10, 1)
	q.Offset = f.Int("offset", 0, 0)
	q.SortBy = f.Enum("sort_by", "created_at", engine.AssistantSortFields...)
	q.SortOrder = f.Enum("sort_order", "desc", "asc", "desc")
	sel := f.Strings("select")
	for i, name := range sel {
		if !slices.Contains(assistantFields, name) {
			errs.Add("literal_error", "Input should be one of "+quoteList(assistantFields), "body", "select", i)
		}
	}
	if err := errs.Err("assistants.search"); err != nil {
		return err
	}
	as, total, err := s.deps.Assistants.Search(c.Request().Context(), q)
	if err != nil {
		return err
	}
	paginate(c, total, q.Offset, len(as))
	out, err := SelectFields(as, sel)
	if err != nil {
		return err
	}
	return OK(c, out)
}

func (s *Server) countAssistants(c echo.Context) error {
	var errs engine.Violations
	f, err := ReadBody(c, &errs)
	if err != nil {
		return err
	}
	q := assistantQuery(f)
	if err := errs.Err("assistants.count"); err != nil {
		return err
	}
	_, total, err := s.deps.Assistants.Search(c.Request().Context(), q)
	if err != nil {
		return err
	}
	return OK(c, total)
}
