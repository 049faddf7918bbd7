package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/httpapi"
)

// startGraphStack is startStack serving the example graphs, with their registry in the Deps.
func startGraphStack(t testing.TB) *stack {
	t.Helper()
	reg := graphs.Examples()
	p := platformtest.Start(t, platform.Config{Graphs: reg}, nil)
	srv := httpapi.New(httpapi.Deps{Threads: p.Threads, Assistants: p.Assistants, Store: p.Store, Events: p.Log,
		Health: p.Health, Graphs: reg})
	ts := serve(t, srv.Handler())
	return &stack{URL: ts.URL, P: p}
}

// objectKeys returns the top-level keys of the JSON object at path, in the order of the body.
func (s *stack) objectKeys(t *testing.T, path string) []string {
	t.Helper()
	resp, err := http.Get(s.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, raw)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatalf("GET %s: not an object: %s", path, raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	_, _ = dec.Token() // {
	keys := []string{}
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// drawn returns the node ids and the edges ("a>b", "a>b?" when conditional) of a drawable graph.
func drawn(v any) (nodes, edges []string) {
	for _, n := range field(v, "nodes").([]any) {
		nodes = append(nodes, field(n, "id").(string))
	}
	for _, e := range field(v, "edges").([]any) {
		s := field(e, "source").(string) + ">" + field(e, "target").(string)
		if field(e, "conditional") == true {
			s += "?"
		}
		edges = append(edges, s)
	}
	return nodes, edges
}

func TestAssistantGraph(t *testing.T) {
	s := startGraphStack(t)

	code, _, g := s.call(t, "GET", "/assistants/agent/graph", "")
	if code != 200 {
		t.Fatalf("GET graph: %d %v", code, g)
	}
	nodes, edges := drawn(g)
	if !slices.Equal(nodes, []string{"__start__", "agent", "tool", "checkSharedState", "__end__"}) {
		t.Errorf("agent nodes %v", nodes)
	}
	for _, want := range []string{"__start__>agent", "tool>agent", "agent>tool?", "agent>__end__?", "agent>checkSharedState?", "checkSharedState>__end__"} {
		if !slices.Contains(edges, want) {
			t.Errorf("agent edges %v lack %s", edges, want)
		}
	}
	first := field(g, "nodes").([]any)[0]
	if !reflect.DeepEqual(first, map[string]any{"id": "__start__", "type": "schema", "data": "__start__"}) {
		t.Errorf("start node %v", first)
	}
	agent := field(g, "nodes").([]any)[1]
	if field(agent, "type") != "runnable" || field(agent, "data", "name") != "agent" {
		t.Errorf("agent node %v", agent)
	}

	nested := asstCreate(t, s, `{"graph_id":"nested"}`)["assistant_id"].(string)
	for _, tc := range []struct {
		query string
		has   string
		lacks string
	}{
		{"", "gp_two", "gp_two:p_one"},
		{"?xray=false", "gp_two", "gp_two:p_one"},
		{"?xray=0", "gp_two", "gp_two:p_one"},
		{"?xray=1", "gp_two:p_two", "gp_two:p_two:c_one"},
		{"?xray=2", "gp_two:p_two:c_one", "gp_two:p_two"},
		{"?xray=true", "gp_two:p_two:c_two", "gp_two"},
		{"?xray=True", "gp_two:p_two:c_two", "gp_two"},
	} {
		code, _, g := s.call(t, "GET", "/assistants/"+nested+"/graph"+tc.query, "")
		nodes, _ := drawn(g)
		if code != 200 || !slices.Contains(nodes, tc.has) || slices.Contains(nodes, tc.lacks) {
			t.Errorf("graph%s: %d, nodes %v: want %s, not %s", tc.query, code, nodes, tc.has, tc.lacks)
		}
	}

	// The graph is built with the assistant's config.
	dyn := asstCreate(t, s, `{"graph_id":"dynamic","config":{"configurable":{"nodeName":"custom"}}}`)["assistant_id"].(string)
	if _, _, g := s.call(t, "GET", "/assistants/"+dyn+"/graph", ""); !slices.Contains(must(drawn(g)), "custom") {
		t.Errorf("dynamic graph ignores the assistant config: %v", g)
	}
	bad := asstCreate(t, s, `{"graph_id":"dynamic","config":{"configurable":{"nodeName":"a:b"}}}`)["assistant_id"].(string)
	if code, _, body := s.call(t, "GET", "/assistants/"+bad+"/graph", ""); code != 400 {
		t.Errorf("unbuildable graph: %d %v", code, body)
	}
}

func must(nodes, _ []string) []string { return nodes }

func TestAssistantSchemas(t *testing.T) {
	s := startGraphStack(t)

	code, _, sch := s.call(t, "GET", "/assistants/state_schema_graph/schemas", "")
	if code != 200 || field(sch, "graph_id") != "state_schema_graph" {
		t.Fatalf("GET schemas: %d %v", code, sch)
	}
	for _, k := range []string{"input_schema", "output_schema", "state_schema"} {
		if field(sch, k, "type") != "object" || field(sch, k, "properties", "messages", "langgraph_type") != "messages" {
			t.Errorf("%s: %v", k, field(sch, k))
		}
	}
	keys := s.objectKeys(t, "/assistants/state_schema_graph/schemas")
	want := []string{"graph_id", "input_schema", "output_schema", "state_schema", "config_schema", "context_schema"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	if m := sch.(map[string]any); m["config_schema"] != nil || m["context_schema"] != nil {
		t.Errorf("no config or context schema is null: %v", m)
	}
	if _, _, plain := s.call(t, "GET", "/assistants/plain_zod_graph/schemas", ""); field(plain, "state_schema", "properties", "items", "langgraph_type") != nil {
		t.Errorf("a plain list is not marked as messages: %v", plain)
	}
	_, _, agent := s.call(t, "GET", "/assistants/agent/schemas", "")
	if field(agent, "config_schema", "properties", "model_name", "type") != "string" {
		t.Errorf("agent config schema %v", field(agent, "config_schema"))
	}
	_, _, rt := s.call(t, "GET", "/assistants/simple_runtime/schemas", "")
	if field(rt, "context_schema", "properties", "model", "enum") == nil {
		t.Errorf("simple_runtime context schema %v", field(rt, "context_schema"))
	}
}

func TestAssistantSubgraphs(t *testing.T) {
	s := startGraphStack(t)
	id := asstCreate(t, s, `{"graph_id":"nested"}`)["assistant_id"].(string)
	base := "/assistants/" + id + "/subgraphs"
	for _, tc := range []struct {
		path string
		want []string
	}{
		{base, []string{"gp_two"}},
		{base + "?recurse=false", []string{"gp_two"}},
		{base + "?recurse=true", []string{"gp_two", "gp_two|p_two"}},
		{base + "?recurse=1", []string{"gp_two", "gp_two|p_two"}},
		{base + "/gp_two", []string{"gp_two"}},
		{base + "/gp_two%7Cp_two", []string{"gp_two|p_two"}},
		{base + "/gp_two%7Cp_two?recurse=true", []string{"gp_two|p_two"}},
		{base + "/nope", []string{}},
		{"/assistants/agent/subgraphs?recurse=true", []string{}},
	} {
		if got := s.objectKeys(t, tc.path); !slices.Equal(got, tc.want) {
			t.Errorf("GET %s: keys %v, want %v", tc.path, got, tc.want)
		}
	}

	_, _, subs := s.call(t, "GET", base+"?recurse=true", "")
	for ns, want := range map[string][2]any{
		"gp_two":       {"parent", []any{"parent_one", "parent_two"}},
		"gp_two|p_two": {"child", []any{"child_one", "child_two"}},
	} {
		entry := field(subs, ns)
		// Both the Python server's keys and the JS server's.
		for _, k := range []string{"state_schema", "state"} {
			props := field(entry, k, "properties")
			if got := field(props, want[0].(string), "enum"); !reflect.DeepEqual(got, want[1]) {
				t.Errorf("%s %s: %s enum %v", ns, k, want[0], got)
			}
			if field(props, "messages", "type") != "array" {
				t.Errorf("%s %s: messages %v", ns, k, field(props, "messages"))
			}
		}
		if _, has := entry.(map[string]any)["graph_id"]; has {
			t.Errorf("%s: a subgraph entry has no graph id: %v", ns, entry)
		}
	}
}

func TestAssistantGraphErrors(t *testing.T) {
	s := startGraphStack(t)
	for _, tc := range []struct {
		path   string
		code   int
		detail string
		loc    []any
	}{
		{"/assistants/" + missingAssistant + "/graph", 404, "Assistant not found", nil},
		{"/assistants/" + missingAssistant + "/schemas", 404, "Assistant not found", nil},
		{"/assistants/" + missingAssistant + "/subgraphs", 404, "Assistant not found", nil},
		{"/assistants/" + missingAssistant + "/subgraphs/gp_two", 404, "Assistant not found", nil},
		{"/assistants/not-a-graph/graph", 422, "", []any{"path", "assistant_id"}},
		{"/assistants/nested/graph?xray=deep", 422, "", []any{"query", "xray"}},
		{"/assistants/nested/graph?xray=-1", 422, "", []any{"query", "xray"}},
		{"/assistants/nested/subgraphs?recurse=maybe", 422, "", []any{"query", "recurse"}},
		{"/assistants/nested/subgraphs/gp_two?recurse=maybe", 422, "", []any{"query", "recurse"}},
	} {
		code, _, body := s.call(t, "GET", tc.path, "")
		if code != tc.code {
			t.Errorf("GET %s: %d, want %d: %v", tc.path, code, tc.code, body)
			continue
		}
		if tc.detail != "" && field(body, "detail") != tc.detail {
			t.Errorf("GET %s: detail %v", tc.path, field(body, "detail"))
		}
		if tc.loc != nil {
			list, _ := field(body, "detail").([]any)
			if len(list) != 1 || !reflect.DeepEqual(field(list[0], "loc"), tc.loc) {
				t.Errorf("GET %s: detail %v, want one problem at %v", tc.path, field(body, "detail"), tc.loc)
			}
		}
	}
}
