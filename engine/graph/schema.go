package graph

import (
	"maps"
	"strings"
)

// Schemas are the JSON Schemas of a graph as GET /assistants/{id}/schemas returns them (and, without
// the graph id, as each entry of GET /assistants/{id}/subgraphs does).
//
// Input, Output and State are objects {"title", "type": "object", "properties"} with one property
// per state key: the channel's schema, or {} (any value) when the channel has none. A messages
// channel's schema carries "langgraph_type": "messages". Config is the schema of the configurable
// values and Context that of the runtime context; both are nil (JSON null) when the graph declares
// none. The maps are shared with the graph and must not be modified.
type Schemas struct {
	GraphID string         `json:"graph_id,omitempty"`
	Input   map[string]any `json:"input_schema"`
	Output  map[string]any `json:"output_schema"`
	State   map[string]any `json:"state_schema"`
	Config  map[string]any `json:"config_schema"`
	Context map[string]any `json:"context_schema"`
}

// defaultName is the name LangGraph gives an unnamed graph; schema titles start with it.
const defaultName = "LangGraph"

// Schemas returns the graph's JSON Schemas. GraphID is left empty: the graph does not know the id
// it is served under.
func (g *Graph) Schemas() Schemas {
	return Schemas{
		Input:   g.objectSchema("Input", g.input),
		Output:  g.objectSchema("Output", g.output),
		State:   g.objectSchema("State", g.keys),
		Config:  titled(g.configSchema, g.title("Config")),
		Context: titled(g.contextSchema, g.title("Context")),
	}
}

// title is the schema title of one of the graph's schemas: the graph name and a suffix, as
// LangGraph's "LangGraphInput".
func (g *Graph) title(suffix string) string {
	name := g.Name
	if name == "" {
		name = defaultName
	}
	return name + suffix
}

// objectSchema is the object schema of the given state keys.
func (g *Graph) objectSchema(suffix string, keys []string) map[string]any {
	props := make(map[string]any, len(keys))
	for _, k := range keys {
		props[k] = g.channelSchema(k)
	}
	return map[string]any{"title": g.title(suffix), "type": "object", "properties": props}
}

// channelSchema is the JSON Schema of key's values: its spec's schema, {} when there is none, and
// always marked "langgraph_type": "messages" for a messages channel.
func (g *Graph) channelSchema(key string) map[string]any {
	spec, ok := g.channels[key]
	if !ok {
		return map[string]any{}
	}
	if spec.Schema == nil {
		if spec.Messages {
			return map[string]any{"type": "array", "items": map[string]any{"type": "object"}, "langgraph_type": "messages"}
		}
		return map[string]any{}
	}
	if spec.Messages && spec.Schema["langgraph_type"] != "messages" {
		s := maps.Clone(spec.Schema)
		s["langgraph_type"] = "messages"
		return s
	}
	return spec.Schema
}

// titled returns schema with a title (a copy when one is added); nil stays nil.
func titled(schema map[string]any, title string) map[string]any {
	if schema == nil {
		return nil
	}
	if _, has := schema["title"]; has {
		return schema
	}
	s := maps.Clone(schema)
	s["title"] = title
	return s
}

// NamespaceSep separates the node names of a subgraph namespace ("gp_two|p_two").
const NamespaceSep = "|"

// SubgraphSchemas returns the schemas of the graph's subgraphs by namespace, as LangGraph's
// get_subgraphs yields them. With namespace "" it gives every subgraph node of the graph ("gp_two"),
// and with recurse also their subgraphs, depth first ("gp_two|p_two"). With a namespace it gives
// only the subgraph of that namespace, found at any depth, or nothing when there is none.
func (g *Graph) SubgraphSchemas(namespace string, recurse bool) map[string]Schemas {
	out := map[string]Schemas{}
	g.walkSubgraphs("", namespace, recurse, func(ns string, sub *Graph) { out[ns] = sub.Schemas() })
	return out
}

// SubgraphNamespaces returns the namespaces SubgraphSchemas would give, in the order LangGraph
// yields them (node order, each subgraph before its own subgraphs).
func (g *Graph) SubgraphNamespaces(namespace string, recurse bool) []string {
	var out []string
	g.walkSubgraphs("", namespace, recurse, func(ns string, _ *Graph) { out = append(out, ns) })
	return out
}

// walkSubgraphs calls fn for each subgraph selected by namespace and recurse (see SubgraphSchemas);
// prefix is the namespace of g itself followed by the separator ("" at the root).
func (g *Graph) walkSubgraphs(prefix, namespace string, recurse bool, fn func(ns string, sub *Graph)) {
	for _, name := range g.order {
		sub := g.nodes[name].sub
		if sub == nil {
			continue
		}
		ns := prefix + name
		if namespace != "" {
			if namespace == name {
				fn(ns, sub)
				return
			}
			if rest, ok := strings.CutPrefix(namespace, name+NamespaceSep); ok {
				sub.walkSubgraphs(ns+NamespaceSep, rest, recurse, fn)
			}
			continue
		}
		fn(ns, sub)
		if recurse {
			sub.walkSubgraphs(ns+NamespaceSep, "", true, fn)
		}
	}
}
