package graph

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/jetgraph/jetgraph/engine/goldentest"
)

// golden compares v, as indented JSON, with testdata/<name>.json (goldentest rewrites it).
func golden(t *testing.T, name string, v any) {
	t.Helper()
	goldentest.JSON(t, filepath.Join("testdata", name+".json"), v)
}

func noop(context.Context, any, *Runtime) (any, error) { return nil, nil }

func route(context.Context, State, *Runtime) (any, error) { return End, nil }

func enum(values ...any) Spec {
	return LastValue().WithSchema(map[string]any{"type": "string", "enum": values})
}

// nestedGraph is the example graph "nested": gp_one -> gp_two, gp_two = p_one -> p_two,
// p_two = c_one -> c_two; every level has messages (a list), the middle one parent and the inner
// one child (enums). The middle graph interrupts before p_one.
func nestedGraph(t testing.TB) *Graph {
	t.Helper()
	child := NewBuilder("child").Channel("messages", Append()).Channel("child", enum("child_one", "child_two")).
		Node("c_one", noop).Node("c_two", noop).
		Edge(Start, "c_one").Edge("c_one", "c_two").Edge("c_two", End).MustCompile(CompileOptions{})
	parent := NewBuilder("parent").Channel("messages", Append()).Channel("parent", enum("parent_one", "parent_two")).
		Node("p_one", noop).Subgraph("p_two", child).
		Edge(Start, "p_one").Edge("p_one", "p_two").Edge("p_two", End).
		MustCompile(CompileOptions{InterruptBefore: []string{"p_one"}})
	return NewBuilder("nested").Channel("messages", Append()).
		Node("gp_one", noop).Subgraph("gp_two", parent).
		Edge(Start, "gp_one").Edge("gp_one", "gp_two").Edge("gp_two", End).MustCompile(CompileOptions{})
}

// branchGraph has a branch that declares its ends and one that does not, a Command node with
// Ends, and a subgraph of one node (never expanded).
func branchGraph(t testing.TB) *Graph {
	t.Helper()
	single := NewBuilder("single").Channel("x", LastValue()).Node("only", noop).
		Edge(Start, "only").Edge("only", End).MustCompile(CompileOptions{})
	return NewBuilder("branchy").Channel("messages", Messages()).Channel("route", LastValue()).
		Node("router", noop).Node("weather", noop).Node("chat", noop).
		Node("dispatch", noop, Ends("weather", End)).Subgraph("single", single).
		Edge(Start, "router").
		Branch("router", route, "weather", "chat").
		Branch("chat", route).
		Edge("weather", "dispatch").Edge("single", End).
		InputKeys("messages").OutputKeys("messages", "route").
		ConfigSchema(map[string]any{"type": "object", "properties": map[string]any{"model_name": map[string]any{"type": "string"}}}).
		ContextSchema(map[string]any{"title": "Ctx", "type": "object", "properties": map[string]any{
			"model": map[string]any{"enum": []any{"openai", "anthropic"}}}}, map[string]any{"model": "openai"}).
		MustCompile(CompileOptions{InterruptAfter: []string{"chat"}})
}

func TestSchemas(t *testing.T) {
	tests := []struct {
		name string
		g    *Graph
	}{
		{"nested", nestedGraph(t)},
		{"branchy", branchGraph(t)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			golden(t, "schemas_"+tc.name, tc.g.Schemas())
		})
	}

	s := branchGraph(t).Schemas()
	msgs := s.State["properties"].(map[string]any)["messages"].(map[string]any)
	if msgs["langgraph_type"] != "messages" || msgs["type"] != "array" {
		t.Errorf("messages channel schema = %v", msgs)
	}
	if props := s.Input["properties"].(map[string]any); len(props) != 1 || props["messages"] == nil {
		t.Errorf("input schema follows InputKeys: %v", props)
	}
	if s.Config["title"] != "branchyConfig" || s.Context["title"] != "Ctx" {
		t.Errorf("titles: config %v, context %v", s.Config["title"], s.Context["title"])
	}
	if n := nestedGraph(t).Schemas(); n.Config != nil || n.Context != nil {
		t.Errorf("no config or context schema should be null: %v %v", n.Config, n.Context)
	}
	raw, _ := json.Marshal(nestedGraph(t).Schemas())
	var keys map[string]any
	_ = json.Unmarshal(raw, &keys)
	if _, has := keys["graph_id"]; has || keys["config_schema"] != nil || len(keys) != 5 {
		t.Errorf("JSON keys %v", keys)
	}
}

func TestSubgraphSchemas(t *testing.T) {
	g := nestedGraph(t)
	tests := []struct {
		namespace string
		recurse   bool
		want      []string
	}{
		{"", false, []string{"gp_two"}},
		{"", true, []string{"gp_two", "gp_two|p_two"}},
		{"gp_two", false, []string{"gp_two"}},
		{"gp_two", true, []string{"gp_two"}},
		{"gp_two|p_two", false, []string{"gp_two|p_two"}},
		{"gp_two|p_two", true, []string{"gp_two|p_two"}},
		{"gp_one", true, nil},
		{"gp_two|p_one", true, nil},
		{"nope", false, nil},
	}
	for _, tc := range tests {
		got := g.SubgraphSchemas(tc.namespace, tc.recurse)
		keys := make([]string, 0, len(got))
		for k := range got {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, tc.want) && len(keys)+len(tc.want) > 0 {
			t.Errorf("SubgraphSchemas(%q, %v) = %v, want %v", tc.namespace, tc.recurse, keys, tc.want)
		}
		if ns := g.SubgraphNamespaces(tc.namespace, tc.recurse); !slices.Equal(ns, tc.want) {
			t.Errorf("SubgraphNamespaces(%q, %v) = %v, want %v", tc.namespace, tc.recurse, ns, tc.want)
		}
	}

	all := g.SubgraphSchemas("", true)
	for ns, want := range map[string]struct {
		key  string
		enum []any
	}{
		"gp_two":       {"parent", []any{"parent_one", "parent_two"}},
		"gp_two|p_two": {"child", []any{"child_one", "child_two"}},
	} {
		props := all[ns].State["properties"].(map[string]any)
		if e := props[want.key].(map[string]any)["enum"]; !reflect.DeepEqual(e, want.enum) {
			t.Errorf("%s: %s enum = %v", ns, want.key, e)
		}
		if typ := props["messages"].(map[string]any)["type"]; typ != "array" {
			t.Errorf("%s: messages type = %v", ns, typ)
		}
	}
	golden(t, "subgraphs_nested", all)
}
