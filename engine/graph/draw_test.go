package graph

import (
	"slices"
	"testing"
)

func TestDrawable(t *testing.T) {
	tests := []struct {
		name string
		g    *Graph
		xray int
	}{
		{"nested", nestedGraph(t), 0},
		{"nested_xray1", nestedGraph(t), 1},
		{"nested_xray_all", nestedGraph(t), XrayAll},
		{"branchy", branchGraph(t), 0},
		{"branchy_xray", branchGraph(t), XrayAll},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			golden(t, "draw_"+tc.name, tc.g.Drawable(tc.xray))
		})
	}
}

// edgeSet is "source>target" (with "?" for conditional ones) for every edge.
func edgeSet(d Drawable) []string {
	var out []string
	for _, e := range d.Edges {
		s := e.Source + ">" + e.Target
		if e.Conditional {
			s += "?"
		}
		out = append(out, s)
	}
	return out
}

func nodeIDs(d Drawable) []string {
	var out []string
	for _, n := range d.Nodes {
		out = append(out, n.ID)
	}
	return out
}

func TestDrawableShapes(t *testing.T) {
	nested, branchy := nestedGraph(t), branchGraph(t)
	tests := []struct {
		name         string
		d            Drawable
		nodes, edges []string
	}{
		{"subgraph stays a node", nested.Drawable(0),
			[]string{"__start__", "gp_one", "gp_two", "__end__"},
			[]string{"__start__>gp_one", "gp_one>gp_two", "gp_two>__end__"}},
		{"xray 1 expands one level", nested.Drawable(1),
			[]string{"__start__", "gp_one", "gp_two:p_one", "gp_two:p_two", "__end__"},
			[]string{"gp_two:p_one>gp_two:p_two", "__start__>gp_one", "gp_one>gp_two:p_one", "gp_two:p_two>__end__"}},
		{"xray all expands every level", nested.Drawable(XrayAll),
			[]string{"__start__", "gp_one", "gp_two:p_one", "gp_two:p_two:c_one", "gp_two:p_two:c_two", "__end__"},
			[]string{"gp_two:p_two:c_one>gp_two:p_two:c_two", "gp_two:p_one>gp_two:p_two:c_one",
				"__start__>gp_one", "gp_one>gp_two:p_one", "gp_two:p_two:c_two>__end__"}},
		{"branches and command ends", branchy.Drawable(XrayAll),
			[]string{"__start__", "router", "weather", "chat", "dispatch", "single", "__end__"},
			[]string{"__start__>router", "router>weather?", "router>chat?", "weather>dispatch",
				"chat>router?", "chat>weather?", "chat>dispatch?", "chat>single?", "chat>__end__?",
				"dispatch>weather?", "dispatch>__end__?", "single>__end__"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := nodeIDs(tc.d); !slices.Equal(got, tc.nodes) {
				t.Errorf("nodes %v, want %v", got, tc.nodes)
			}
			if got := edgeSet(tc.d); !slices.Equal(got, tc.edges) {
				t.Errorf("edges %v, want %v", got, tc.edges)
			}
		})
	}

	d := nested.Drawable(1)
	for _, n := range d.Nodes {
		switch n.ID {
		case "__start__", "__end__":
			if n.Type != "schema" || n.Data != n.ID {
				t.Errorf("%s: %+v", n.ID, n)
			}
		case "gp_two:p_one":
			if n.Type != "runnable" || n.Data != (NodeData{Name: n.ID}) || n.Metadata["__interrupt"] != "before" {
				t.Errorf("expanded node keeps its subgraph's interrupt: %+v", n)
			}
		default:
			if n.Type != "runnable" || n.Data != (NodeData{Name: n.ID}) || n.Metadata != nil {
				t.Errorf("%s: %+v", n.ID, n)
			}
		}
	}
	if md := branchy.Drawable(0).Nodes[3].Metadata; md["__interrupt"] != "after" {
		t.Errorf("chat interrupts after: %v", md)
	}
}

// TestDrawableKeepsUntrimmableEnds checks a subgraph whose start fans out: its __start__ stays,
// prefixed, and edges into the subgraph node land on it.
func TestDrawableKeepsUntrimmableEnds(t *testing.T) {
	fan := NewBuilder("fan").Channel("x", LastValue()).Node("a", noop).Node("b", noop).
		Edge(Start, "a").Edge(Start, "b").Edge("a", End).Edge("b", End).MustCompile(CompileOptions{})
	g := NewBuilder("outer").Channel("x", LastValue()).Subgraph("fan", fan).
		Edge(Start, "fan").Edge("fan", End).MustCompile(CompileOptions{})
	d := g.Drawable(1)
	want := []string{"fan:__start__>fan:a", "fan:__start__>fan:b", "fan:a>fan:__end__", "fan:b>fan:__end__",
		"__start__>fan:__start__", "fan:__end__>__end__"}
	if got := edgeSet(d); !slices.Equal(got, want) {
		t.Errorf("edges %v, want %v", got, want)
	}
	if n := d.Nodes[1]; n.ID != "fan:__start__" || n.Type != "schema" || n.Data != "fan:__start__" {
		t.Errorf("kept start node: %+v", n)
	}
}
