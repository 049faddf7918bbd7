package hosting

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jetgraph/jetgraph/engine/graph"
)

// Frames of protocol 1's describe requests (additive: a host without them answers an error).
const (
	frameGraph   = "graph"
	frameSchemas = "schemas"
	frameSubs    = "subgraphs"
)

// Drawing returns the library's drawable graph as JSON ({nodes, edges}), subgraphs expanded to
// depth xray (graph.XrayAll for every level).
func (g *Graph) Drawing(ctx context.Context, xray int) (json.RawMessage, error) {
	depth := xray
	if xray == graph.XrayAll {
		depth = -1
	}
	raw, err := g.request(ctx, frameGraph, nil, map[string]any{"xray": depth})
	if err != nil {
		return nil, fmt.Errorf("hosting: graph: %w", err)
	}
	return raw, nil
}

// Schemas returns the graph's JSON Schemas as the library draws them: {input_schema,
// output_schema, state_schema, config_schema, context_schema}.
func (g *Graph) Schemas(ctx context.Context) (map[string]json.RawMessage, error) {
	raw, err := g.request(ctx, frameSchemas, nil, map[string]any{})
	if err != nil {
		return nil, fmt.Errorf("hosting: schemas: %w", err)
	}
	out := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("hosting: schemas: %w", err)
	}
	return out, nil
}

// Subgraphs returns the schemas of the graph's subgraphs by namespace ("child", "child|inner"),
// those under namespace only ("" for all), every level when recurse; a JSON object in the
// library's order.
func (g *Graph) Subgraphs(ctx context.Context, namespace string, recurse bool) (json.RawMessage, error) {
	raw, err := g.request(ctx, frameSubs, nil, map[string]any{"namespace": namespace, "recurse": recurse})
	if err != nil {
		return nil, fmt.Errorf("hosting: subgraphs: %w", err)
	}
	return raw, nil
}
