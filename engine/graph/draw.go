package graph

import (
	"math"
	"slices"
)

// Drawable is a graph drawn for GET /assistants/{id}/graph, in the JSON shape of LangGraph's
// Graph.to_json (with the "id" of runnable data removed, as the LangGraph API does):
//
//	{"nodes": [{"id": "__start__", "type": "schema", "data": "__start__"},
//	           {"id": "agent", "type": "runnable", "data": {"name": "agent"}}, ...],
//	 "edges": [{"source": "__start__", "target": "agent", "conditional": false}, ...]}
type Drawable struct {
	Nodes []DrawNode `json:"nodes"`
	Edges []DrawEdge `json:"edges"`
}

// DrawNode is a node of a Drawable. Type is "schema" for __start__ and __end__ (Data is then the
// id) and "runnable" for the graph's nodes (Data is a NodeData). Metadata holds "__interrupt"
// ("before", "after" or "before,after") for nodes the graph was compiled to interrupt at.
type DrawNode struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Data     any            `json:"data"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// NodeData is the data of a runnable node: its name, the node id (prefixed inside an expanded
// subgraph, as LangGraph names them).
type NodeData struct {
	Name string `json:"name"`
}

// DrawEdge is an edge of a Drawable. Conditional edges are where a Branch or a Command may go.
// Data is a label; jetgraph's branches have none, so it is always omitted.
type DrawEdge struct {
	Source      string `json:"source"`
	Target      string `json:"target"`
	Data        any    `json:"data,omitempty"`
	Conditional bool   `json:"conditional"`
}

// XrayAll is the xray depth that expands every level of subgraphs (xray=true in the API).
const XrayAll = math.MaxInt32

// Node types of a Drawable.
const (
	drawSchema   = "schema"
	drawRunnable = "runnable"
)

// Drawable draws the graph: __start__, the nodes in the order they were added, __end__; the edges,
// source by source (__start__ first, then the nodes in order): plain edges, then every destination
// of each Branch (all nodes but the source, and __end__, when the branch declared none), then the
// Command destinations declared with Ends — the last two conditional.
//
// With xray >= 1 each subgraph node is replaced by the subgraph drawn with xray-1, its nodes
// prefixed "<node>:" and its own __start__ and __end__ trimmed when they are plain entry and exit
// points; edges into the node then go to the subgraph's first node and edges out of it leave from
// its last. A subgraph of a single node, or without one first and one last node, stays a node.
func (g *Graph) Drawable(xray int) Drawable {
	d := Drawable{Nodes: []DrawNode{schemaNode(Start)}, Edges: []DrawEdge{}}
	// entry[n] is where an edge to n lands and exit[n] where an edge from n leaves: n itself, or
	// the first and last node of n's expanded subgraph.
	entry := map[string]string{End: End}
	exit := map[string]string{Start: Start}
	for _, name := range g.order {
		entry[name], exit[name] = name, name
		if sub := g.nodes[name].sub; sub != nil && xray > 0 {
			inner := sub.Drawable(xray - 1)
			if first, last, ok := inner.trim(); ok {
				entry[name], exit[name] = name+":"+first, name+":"+last
				d.extend(inner, name)
				continue
			}
		}
		d.Nodes = append(d.Nodes, DrawNode{ID: name, Type: drawRunnable, Data: NodeData{Name: name},
			Metadata: g.interruptMetadata(name)})
	}
	d.Nodes = append(d.Nodes, schemaNode(End))

	seen := map[[2]string]bool{}
	add := func(from, to string, conditional bool) {
		target, ok := entry[to]
		if !ok { // a Command destination that is not a node: nothing to draw
			return
		}
		key := [2]string{exit[from], target}
		if seen[key] {
			return
		}
		seen[key] = true
		d.Edges = append(d.Edges, DrawEdge{Source: key[0], Target: key[1], Conditional: conditional})
	}
	for _, from := range append([]string{Start}, g.order...) {
		for _, to := range g.edges[from] {
			add(from, to, false)
		}
		for _, br := range g.branches[from] {
			ends := br.ends
			if len(ends) == 0 {
				ends = g.defaultEnds(from)
			}
			for _, to := range ends {
				add(from, to, true)
			}
		}
		if n := g.nodes[from]; n != nil {
			for _, to := range n.ends {
				add(from, to, true)
			}
		}
	}
	return d
}

// defaultEnds are the destinations drawn for a branch that declared none: every node but from,
// then End.
func (g *Graph) defaultEnds(from string) []string {
	ends := make([]string, 0, len(g.order)+1)
	for _, name := range g.order {
		if name != from {
			ends = append(ends, name)
		}
	}
	return append(ends, End)
}

// interruptMetadata is the metadata of a node the graph interrupts before or after, else nil.
func (g *Graph) interruptMetadata(name string) map[string]any {
	on := func(list []string) bool { return slices.Contains(list, name) || slices.Contains(list, "*") }
	var when string
	switch before, after := on(g.interruptBefore), on(g.interruptAfter); {
	case before && after:
		when = "before,after"
	case before:
		when = "before"
	case after:
		when = "after"
	default:
		return nil
	}
	return map[string]any{"__interrupt": when}
}

func schemaNode(id string) DrawNode { return DrawNode{ID: id, Type: drawSchema, Data: id} }

// extend adds inner's nodes and edges to d with their ids prefixed "<prefix>:".
func (d *Drawable) extend(inner Drawable, prefix string) {
	p := func(id string) string { return prefix + ":" + id }
	for _, n := range inner.Nodes {
		n.ID = p(n.ID)
		switch data := n.Data.(type) {
		case NodeData:
			n.Data = NodeData{Name: p(data.Name)}
		case string:
			n.Data = p(data)
		}
		d.Nodes = append(d.Nodes, n)
	}
	for _, e := range inner.Edges {
		e.Source, e.Target = p(e.Source), p(e.Target)
		d.Edges = append(d.Edges, e)
	}
}

// trim prepares a drawn subgraph for expansion in its parent, as LangGraph's trim_first_node and
// trim_last_node do: the first node (the one no edge leads to) is removed when it has a single edge
// out and a single first node remains without it; likewise the last node (the one no edge leaves)
// when it has a single edge in. It reports the ids of the first and last nodes left, and false
// when the subgraph should stay one node (a single node left, or no single first or last node).
func (d *Drawable) trim() (first, last string, ok bool) {
	if f, found := d.firstNode(""); found {
		if _, still := d.firstNode(f); still && d.degree(f, true) == 1 {
			d.remove(f)
		}
	}
	if l, found := d.lastNode(""); found {
		if _, still := d.lastNode(l); still && d.degree(l, false) == 1 {
			d.remove(l)
		}
	}
	if len(d.Nodes) <= 1 {
		return "", "", false
	}
	first, okFirst := d.firstNode("")
	last, okLast := d.lastNode("")
	return first, last, okFirst && okLast
}

// firstNode returns the single node, other than exclude, that no edge leads to (ignoring edges
// from exclude): the entry of the drawing.
func (d *Drawable) firstNode(exclude string) (string, bool) {
	targets := map[string]bool{}
	for _, e := range d.Edges {
		if e.Source != exclude {
			targets[e.Target] = true
		}
	}
	return d.single(exclude, targets)
}

// lastNode returns the single node, other than exclude, that no edge leaves (ignoring edges to
// exclude): the exit of the drawing.
func (d *Drawable) lastNode(exclude string) (string, bool) {
	sources := map[string]bool{}
	for _, e := range d.Edges {
		if e.Target != exclude {
			sources[e.Source] = true
		}
	}
	return d.single(exclude, sources)
}

// single returns the one node that is neither exclude nor in skip.
func (d *Drawable) single(exclude string, skip map[string]bool) (string, bool) {
	found, n := "", 0
	for _, node := range d.Nodes {
		if node.ID != exclude && !skip[node.ID] {
			found, n = node.ID, n+1
		}
	}
	return found, n == 1
}

// degree counts the edges leaving id (out) or reaching it.
func (d *Drawable) degree(id string, out bool) int {
	n := 0
	for _, e := range d.Edges {
		if out && e.Source == id || !out && e.Target == id {
			n++
		}
	}
	return n
}

// remove deletes node id and its edges.
func (d *Drawable) remove(id string) {
	d.Nodes = slices.DeleteFunc(d.Nodes, func(n DrawNode) bool { return n.ID == id })
	d.Edges = slices.DeleteFunc(d.Edges, func(e DrawEdge) bool { return e.Source == id || e.Target == id })
}
