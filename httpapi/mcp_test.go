package httpapi_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpSession connects the official Go SDK's client to the stack's /mcp over real HTTP.
func mcpSession(t testing.TB, s *stack) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "jetgraph-test", Version: "v0"}, nil)
	sess, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("connect to /mcp: %v", err)
	}
	t.Cleanup(func() { _ = sess.Close() })
	return sess
}

// mcpTools lists the tools by name.
func mcpTools(t testing.TB, sess *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		if out[tool.Name] != nil {
			t.Fatalf("tool name %q listed twice", tool.Name)
		}
		out[tool.Name] = tool
	}
	return out
}

// jsonOf is v as decoded JSON (maps, slices, float64), to compare wire values.
func jsonOf(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMCPListsAssistantsAsTools: every assistant is a tool with its graph's input schema (the
// one /schemas serves) and its description; an assistant created afterwards is listed at the
// next request, its name sanitised, a second one of the same name told apart by its id.
func TestMCPListsAssistantsAsTools(t *testing.T) {
	s := startRunStack(t, nil)
	sess := mcpSession(t, s)
	tools := mcpTools(t, sess)
	for _, name := range []string{"echo", "agent", "error"} {
		if tools[name] == nil {
			t.Fatalf("tool %q missing from %v", name, keys(tools))
		}
	}
	_, schemas := s.must(t, 200, "GET", "/assistants/echo/schemas", "")
	if got, want := jsonOf(t, tools["echo"].InputSchema), field(schemas, "input_schema"); !reflect.DeepEqual(got, want) {
		t.Errorf("echo's input schema = %v, want the graph's %v", got, want)
	}
	if tools["echo"].Description == "" {
		t.Error("echo has no description")
	}

	s.must(t, 200, "POST", "/assistants", `{"graph_id": "echo", "name": "My echo/v2", "description": "Repeats you."}`)
	_, second := s.must(t, 200, "POST", "/assistants", `{"graph_id": "echo", "name": "My echo:v2"}`)
	tools = mcpTools(t, sess)
	mine := tools["My_echo_v2"]
	if mine == nil || mine.Description != "Repeats you." || mine.Title != "My echo/v2" {
		t.Fatalf("the new assistant as a tool = %+v, in %v", mine, keys(tools))
	}
	var twin *mcp.Tool
	for name, tool := range tools {
		if strings.HasPrefix(name, "My_echo_v2_") {
			twin = tool
		}
	}
	if twin == nil || twin.Title != "My echo:v2" {
		t.Fatalf("the assistant of the same sanitised name is not told apart: %v", keys(tools))
	}
	again := mcpTools(t, sess)
	if again[twin.Name] == nil {
		t.Errorf("the name %q of assistant %v is not stable across lists", twin.Name, field(second, "assistant_id"))
	}
}

// TestMCPCallRunsTheAssistant: a tool call runs its assistant statelessly and answers its
// output as structured content and JSON text; a failing graph is a tool error, not a protocol
// error; an unknown tool is a protocol error.
func TestMCPCallRunsTheAssistant(t *testing.T) {
	s := startRunStack(t, nil)
	sess := mcpSession(t, s)
	ctx := context.Background()

	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "echo",
		Arguments: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hello mcp"}}}})
	if err != nil {
		t.Fatalf("tools/call echo: %v", err)
	}
	if res.IsError {
		t.Fatalf("echo failed: %+v", res.Content)
	}
	if got := contents(jsonOf(t, res.StructuredContent)); len(got) < 2 || got[0] != "hello mcp" {
		t.Errorf("echo's output messages = %v, want the input echoed", got)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content = %T, want text", res.Content[0])
	}
	var fromText any
	if err := json.Unmarshal([]byte(text.Text), &fromText); err != nil || !reflect.DeepEqual(fromText, jsonOf(t, res.StructuredContent)) {
		t.Errorf("text content %q is not the structured content as JSON (%v)", text.Text, err)
	}
	_, threads := s.must(t, 200, "POST", "/threads/search", `{}`)
	if n := len(threads.([]any)); n != 0 {
		t.Errorf("%d threads left after a stateless tool call, want 0", n)
	}

	res, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "error", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("tools/call error: a failing graph must be a tool error, got a protocol error: %v", err)
	}
	if !res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "Boo!") {
		t.Errorf("the failing graph's result = %+v, want isError with its message", res)
	}

	if _, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}}); err == nil ||
		!strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("an unknown tool: err = %v, want a protocol error naming it", err)
	}
}

// TestMCPCallOfAnInterruptedRun: a tool call whose run stops at an interrupt is a tool error
// that says so, naming what the graph asks (a dynamic interrupt) or that it paused (a static
// breakpoint), with the run's output after.
func TestMCPCallOfAnInterruptedRun(t *testing.T) {
	s := startRunStack(t, nil)
	sess := mcpSession(t, s)
	ctx := context.Background()
	cases := []struct {
		tool string
		args map[string]any
		says []string
	}{
		{"agent", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}, "interrupt": true},
			[]string{"interrupted", "i want to interrupt"}},
		{"weather", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "weather in SF?"}}},
			[]string{"breakpoint"}},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("tools/call: %v", err)
			}
			if !res.IsError || len(res.Content) != 2 {
				t.Fatalf("an interrupted run's result = %+v, want a tool error with two texts", res)
			}
			said := res.Content[0].(*mcp.TextContent).Text
			for _, w := range tc.says {
				if !strings.Contains(said, w) {
					t.Errorf("the result says %q, not %q", said, w)
				}
			}
			if !strings.Contains(res.Content[1].(*mcp.TextContent).Text, "messages") {
				t.Errorf("the output is missing: %+v", res.Content[1])
			}
		})
	}
}

// keys lists the names of tools, for messages.
func keys(m map[string]*mcp.Tool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// BenchmarkMCPCallEcho measures an MCP tools/call of echo through the official Go SDK's client
// over real HTTP on loopback: the tool's lookup, the stateless run on the embedded log, its
// temporary thread's deletion and the answer.
func BenchmarkMCPCallEcho(b *testing.B) {
	s := startStack(b)
	sess := mcpSession(b, s)
	ctx := context.Background()
	args := map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("tools/call echo: %v %+v", err, res)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
