package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
)

// assistantGraphRoutes serves what an assistant's graph looks like: its drawing, its JSON Schemas
// and those of its subgraphs.
func (s *Server) assistantGraphRoutes() {
	s.echo.GET("/assistants/:assistant_id/graph", s.assistantGraph)
	s.echo.GET("/assistants/:assistant_id/schemas", s.assistantSchemas)
	s.echo.GET("/assistants/:assistant_id/subgraphs", s.assistantSubgraphs)
	s.echo.GET("/assistants/:assistant_id/subgraphs/:namespace", s.assistantSubgraphs)
}

// graphOf returns the assistant named by the path (an assistant id or a graph id) and its graph,
// built with the assistant's configurable values.
func (s *Server) graphOf(ctx context.Context, op, id string) (engine.Assistant, *graph.Graph, error) {
	a, err := s.deps.Assistants.Get(ctx, id)
	if err != nil {
		return engine.Assistant{}, nil, err
	}
	g, err := s.buildGraph(op, a)
	return a, g, err
}

// buildGraph builds the graph of assistant a with its configurable values.
func (s *Server) buildGraph(op string, a engine.Assistant) (*graph.Graph, error) {
	if s.deps.Graphs == nil {
		return nil, engine.E(engine.Op(op), engine.NotFound, fmt.Sprintf("Graph '%s' not found", a.GraphID))
	}
	if _, found := s.deps.Graphs.Get(a.GraphID); !found {
		return nil, engine.E(engine.Op(op), engine.NotFound, fmt.Sprintf("Graph '%s' not found", a.GraphID))
	}
	configurable, _ := a.Config["configurable"].(map[string]any)
	g, err := s.deps.Graphs.Build(a.GraphID, graph.Config{Configurable: configurable})
	if err != nil {
		return nil, engine.E(engine.Op(op), engine.BadRequest,
			fmt.Sprintf("Failed to build graph '%s': %v", a.GraphID, err), err)
	}
	return g, nil
}

// xrayQuery reads ?xray: true (every level), false, or a depth (a non-negative integer, 0 being
// false). Absent or empty is false.
func xrayQuery(c echo.Context, errs *engine.Violations) int {
	raw := c.QueryParam("xray")
	if raw == "" {
		return 0
	}
	if n, err := strconv.Atoi(raw); err == nil {
		if n < 0 {
			errs.Add("greater_than_equal", "Input should be greater than or equal to 0", "query", "xray")
			return 0
		}
		return n
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		errs.Add("value_error", "Invalid xray value: it should be a boolean or a non-negative integer", "query", "xray")
		return 0
	}
	if b {
		return graph.XrayAll
	}
	return 0
}

// boolQuery reads a boolean query parameter (true/false, 1/0, ...); absent or empty is false.
func boolQuery(c echo.Context, name string, errs *engine.Violations) bool {
	raw := c.QueryParam(name)
	if raw == "" {
		return false
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		errs.Add("bool_parsing", "Input should be a valid boolean, unable to interpret input", "query", name)
	}
	return b
}

// assistantGraph answers GET /assistants/{assistant_id}/graph?xray: the drawable graph.
func (s *Server) assistantGraph(c echo.Context) error {
	const op = "assistants.graph"
	var errs engine.Violations
	id := s.assistantPath(c, &errs)
	xray := xrayQuery(c, &errs)
	if err := errs.Err(op); err != nil {
		return err
	}
	if d, ok, err := s.hostedGraph(c.Request().Context(), op, id); ok || err != nil {
		if err != nil {
			return err
		}
		raw, err := d.Drawing(c.Request().Context(), xray)
		if err != nil {
			return engine.E(engine.Op(op), engine.BadRequest, fmt.Sprintf("Failed to draw graph: %v", err), err)
		}
		return c.JSONBlob(http.StatusOK, raw)
	}
	_, g, err := s.graphOf(c.Request().Context(), op, id)
	if err != nil {
		return err
	}
	return OK(c, g.Drawable(xray))
}

// assistantSchemas answers GET /assistants/{assistant_id}/schemas: {graph_id, input_schema,
// output_schema, state_schema, config_schema, context_schema}.
func (s *Server) assistantSchemas(c echo.Context) error {
	const op = "assistants.schemas"
	var errs engine.Violations
	id := s.assistantPath(c, &errs)
	if err := errs.Err(op); err != nil {
		return err
	}
	if d, ok, err := s.hostedGraph(c.Request().Context(), op, id); ok || err != nil {
		if err != nil {
			return err
		}
		sch, err := d.Schemas(c.Request().Context())
		if err != nil {
			return engine.E(engine.Op(op), engine.BadRequest, fmt.Sprintf("Failed to get schemas: %v", err), err)
		}
		a, _ := s.deps.Assistants.Get(c.Request().Context(), id)
		out := map[string]any{"graph_id": a.GraphID}
		for k, v := range sch {
			out[k] = v
		}
		return OK(c, out)
	}
	a, g, err := s.graphOf(c.Request().Context(), op, id)
	if err != nil {
		return err
	}
	sch := g.Schemas()
	sch.GraphID = a.GraphID
	return OK(c, sch)
}

// subgraphEntry is one subgraph of GET /assistants/{id}/subgraphs: the LangGraph API's
// input_schema, output_schema, state_schema, config_schema and context_schema, and the same
// schemas under input, output, state and config, the keys the LangGraph JS server uses.
type subgraphEntry struct {
	graph.Schemas
	In     map[string]any `json:"input"`
	Out    map[string]any `json:"output"`
	State  map[string]any `json:"state"`
	Config map[string]any `json:"config"`
}

// assistantSubgraphs answers GET /assistants/{assistant_id}/subgraphs[/{namespace}]?recurse: the
// schemas of the subgraphs by namespace ("gp_two", "gp_two|p_two"), in the order LangGraph yields
// them.
func (s *Server) assistantSubgraphs(c echo.Context) error {
	const op = "assistants.subgraphs"
	var errs engine.Violations
	id := s.assistantPath(c, &errs)
	recurse := boolQuery(c, "recurse", &errs)
	namespace := c.Param("namespace")
	if ns, err := url.PathUnescape(namespace); err == nil {
		namespace = ns
	}
	if err := errs.Err(op); err != nil {
		return err
	}
	if d, ok, err := s.hostedGraph(c.Request().Context(), op, id); ok || err != nil {
		if err != nil {
			return err
		}
		raw, err := d.Subgraphs(c.Request().Context(), namespace, recurse)
		if err != nil {
			return engine.E(engine.Op(op), engine.BadRequest, fmt.Sprintf("Failed to get subgraphs: %v", err), err)
		}
		return c.JSONBlob(http.StatusOK, raw)
	}
	_, g, err := s.graphOf(c.Request().Context(), op, id)
	if err != nil {
		return err
	}
	schemas := g.SubgraphSchemas(namespace, recurse)
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, ns := range g.SubgraphNamespaces(namespace, recurse) {
		sch := schemas[ns]
		entry, err := json.Marshal(subgraphEntry{Schemas: sch, In: sch.Input, Out: sch.Output, State: sch.State, Config: sch.Config})
		if err != nil {
			return engine.E(engine.Op(op), err)
		}
		key, _ := json.Marshal(ns)
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(key)
		buf.WriteByte(':')
		buf.Write(entry)
	}
	buf.WriteByte('}')
	return c.JSONBlob(http.StatusOK, buf.Bytes())
}

// hostedDescriber is a hosted graph that its host describes (*hosting.Graph is one).
type hostedDescriber interface {
	Drawing(ctx context.Context, xray int) (json.RawMessage, error)
	Schemas(ctx context.Context) (map[string]json.RawMessage, error)
	Subgraphs(ctx context.Context, namespace string, recurse bool) (json.RawMessage, error)
}

// hostedGraph returns the assistant's graph when a host process runs it (ok false for a Go graph).
func (s *Server) hostedGraph(ctx context.Context, op, id string) (hostedDescriber, bool, error) {
	if s.deps.Graphs == nil {
		return nil, false, nil
	}
	a, err := s.deps.Assistants.Get(ctx, id)
	if err != nil {
		return nil, false, err
	}
	e, found := s.deps.Graphs.Get(a.GraphID)
	if !found || e.Code == nil {
		return nil, false, nil
	}
	configurable, _ := a.Config["configurable"].(map[string]any)
	r, err := s.deps.Graphs.Runnable(a.GraphID, graph.Config{Configurable: configurable})
	if err != nil {
		return nil, false, engine.E(engine.Op(op), engine.BadRequest, fmt.Sprintf("Failed to build graph '%s': %v", a.GraphID, err), err)
	}
	d, ok := r.(hostedDescriber)
	if !ok {
		return nil, false, nil
	}
	return d, true, nil
}
