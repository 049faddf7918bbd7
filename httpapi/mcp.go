package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/runs"
)

// MCP at /mcp: every assistant of the caller's tenant is a tool of a Model Context Protocol
// server, over the official Go SDK's streamable-HTTP transport. The transport is stateless (no
// Mcp-Session-Id): any jetgraph process sharing the log answers any request, as for the rest of
// the API. The tools are not registered on the SDK's server but answered from the assistants as
// they are at each request (a receiving middleware serves tools/list and tools/call), so an
// assistant created, renamed or deleted through any process is a tool, renamed or gone at the
// next request, without a restart or a notification to keep in step.

const (
	// mcpPath is where the MCP endpoint is served (the reference servers' path).
	mcpPath = "/mcp"
	// mcpToolNameMax is the longest tool name produced: the MCP specification's 64 characters,
	// which clients hold to more strictly than the Go SDK's 128.
	mcpToolNameMax = 64
	// mcpIDSuffix is how many hex digits of a hash of the assistant id tell apart assistants
	// whose names sanitise to the same tool name.
	mcpIDSuffix   = 8
	mcpServerName = "jetgraph"
)

// mcpRoutes mounts the MCP endpoint (POST for requests; GET and DELETE answer 405, as a
// stateless server's).
func (s *Server) mcpRoutes() {
	// The SDK logs every request's session at info: only its warnings and errors are kept.
	sdkLog := slog.New(minLevel{s.log.Handler(), slog.LevelWarn})
	srv := mcp.NewServer(&mcp.Implementation{Name: mcpServerName, Version: mcpVersion(s.deps.Info)},
		&mcp.ServerOptions{Logger: sdkLog, Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	srv.AddReceivingMiddleware(s.mcpTools)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: sdkLog})
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		s.echo.Add(method, mcpPath, s.needRuns(echo.WrapHandler(mcpGuard(h))))
	}
}

// minLevel is a slog handler that drops the records below a level.
type minLevel struct {
	slog.Handler
	min slog.Level
}

// Enabled is the wrapped handler's, from the level up.
func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

// WithAttrs keeps the level filter on the derived handler.
func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(attrs), h.min}
}

// WithGroup keeps the level filter on the derived handler.
func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.min}
}

// mcpVersion is the server version MCP's initialize answers: the one GET /info serves.
func mcpVersion(info map[string]any) string {
	if v, ok := info["version"].(string); ok && v != "" {
		return v
	}
	return "dev"
}

// mcpTools answers tools/list and tools/call from the current assistants; every other method
// goes to the SDK's server.
func (s *Server) mcpTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.ListToolsRequest:
			tools, err := s.mcpToolList(ctx)
			if err != nil {
				return nil, err
			}
			list := make([]*mcp.Tool, len(tools))
			for i, t := range tools {
				list[i] = t.tool
			}
			return &mcp.ListToolsResult{Tools: list}, nil
		case *mcp.CallToolRequest:
			return s.mcpCall(ctx, r.Params)
		}
		return next(ctx, method, req)
	}
}

// mcpTool is an assistant as a tool.
type mcpTool struct {
	tool        *mcp.Tool
	assistantID string
}

// mcpToolList lists the assistants as tools, oldest first, so that of the assistants whose
// names sanitise alike the oldest keeps the plain name. A graph that fails to build still lists
// its assistant, with an open input schema: its call then fails as a tool error, telling why.
func (s *Server) mcpToolList(ctx context.Context) ([]mcpTool, error) {
	as, _, err := s.deps.Assistants.Search(ctx, engine.AssistantQuery{SortBy: "created_at", SortOrder: "asc"})
	if err != nil {
		return nil, err
	}
	taken := make(map[string]bool, len(as))
	out := make([]mcpTool, 0, len(as))
	for _, a := range as {
		name := mcpToolName(a.Name, a.AssistantID, taken)
		taken[name] = true
		schema := s.mcpInputSchema(ctx, a)
		description := ""
		if a.Description != nil {
			description = *a.Description
		}
		if description == "" && s.deps.Graphs != nil {
			if e, ok := s.deps.Graphs.Get(a.GraphID); ok {
				description = e.Description
			}
		}
		if description == "" {
			description = fmt.Sprintf("Runs the assistant %q (graph %q) and returns its output.", a.Name, a.GraphID)
		}
		out = append(out, mcpTool{assistantID: a.AssistantID, tool: &mcp.Tool{
			Name: name, Title: a.Name, Description: description, InputSchema: schema,
		}})
	}
	return out, nil
}

// mcpInputSchema is the input schema of the assistant's graph, as /schemas answers it (a hosted
// graph's from its library), when it is an object schema; else an open object.
func (s *Server) mcpInputSchema(ctx context.Context, a engine.Assistant) map[string]any {
	const op = "mcp.tools"
	var in map[string]any
	if d, hosted, err := s.hostedGraph(ctx, op, a.AssistantID); hosted && err == nil {
		if sch, err := d.Schemas(ctx); err == nil {
			_ = json.Unmarshal(sch["input_schema"], &in)
		}
	} else if !hosted {
		if g, err := s.buildGraph(op, a); err == nil {
			in = g.Schemas().Input
		}
	}
	if in == nil || in["type"] != "object" {
		return map[string]any{"type": "object"}
	}
	return in
}

// mcpToolName is an assistant's name made a valid MCP tool name (^[A-Za-z0-9_.-]{1,64}$: every
// other character becomes "_"), unique among taken: a name already taken gets "_" and a hash of
// the assistant id appended, so the same assistants always get the same names.
func mcpToolName(name, assistantID string, taken map[string]bool) string {
	var b strings.Builder
	for _, r := range name {
		if r < 128 && (r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	base := b.String()
	if base == "" {
		base = "assistant"
	}
	if len(base) > mcpToolNameMax {
		base = base[:mcpToolNameMax]
	}
	if !taken[base] {
		return base
	}
	sum := sha256.Sum256([]byte(assistantID))
	suffix := "_" + hex.EncodeToString(sum[:])[:mcpIDSuffix]
	if len(base)+len(suffix) > mcpToolNameMax {
		base = base[:mcpToolNameMax-len(suffix)]
	}
	return base + suffix
}

// mcpCall runs the assistant a tool stands for, statelessly as /runs/wait does, with the call's
// arguments as its input. Its output is the structured content and, as JSON, the text; a run
// that fails is a tool error (isError) carrying the run's error. An unknown tool or arguments
// that are not an object are protocol errors (invalid params), as the SDK answers them.
func (s *Server) mcpCall(ctx context.Context, p *mcp.CallToolParamsRaw) (*mcp.CallToolResult, error) {
	tools, err := s.mcpToolList(ctx)
	if err != nil {
		return nil, err
	}
	id := ""
	for _, t := range tools {
		if t.tool.Name == p.Name {
			id = t.assistantID
			break
		}
	}
	if id == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
	}
	input := map[string]any{}
	if len(p.Arguments) > 0 && string(p.Arguments) != "null" {
		if err := json.Unmarshal(p.Arguments, &input); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tool arguments must be a JSON object"}
		}
	}
	rec, out, err := s.waitStateless(ctx, runs.Create{AssistantID: id, Input: input}, true, true, nil)
	switch {
	case err != nil && (engine.Is(engine.Other, err) || engine.Is(engine.Unavailable, err)):
		return nil, err
	case err != nil: // the run was refused (its input, a limit): the caller can correct it
		return mcpError(err.Error()), nil
	case rec.Error != nil:
		return mcpError(rec.Error.Error()), nil
	}
	text, err := json.Marshal(out)
	if err != nil {
		return nil, engine.E(engine.Op("mcp.call"), err)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: out}
	if rec.Status == engine.RunInterrupted {
		// The run stopped where the graph asks for input (or was cancelled): no answer, and a
		// stateless call has no thread left to resume, so the result is an error saying so
		// first, its output (with the interrupts) after.
		res.IsError = true
		res.Content = append([]mcp.Content{&mcp.TextContent{Text: mcpStopped(rec, out)}}, res.Content...)
	}
	return res, nil
}

// mcpStopped says why a tool call's run stopped without an answer: cancelled, or interrupted
// with what the graph asks (its interrupts' values), or paused at a static breakpoint.
func mcpStopped(rec engine.RunRecord, out map[string]any) string {
	if rec.Cancel != "" {
		return "The run was cancelled before it ended; it has no answer."
	}
	if values, ok := out["__interrupt__"].([]graph.InterruptValue); ok && len(values) > 0 {
		asked := make([]any, len(values))
		for i, v := range values {
			asked[i] = v.Value
		}
		b, _ := json.Marshal(asked)
		return "The run was interrupted: the graph asks for input (" + string(b) + "), which a tool call cannot give; " +
			"run the assistant on a thread to answer it. Its output so far follows."
	}
	return "The run stopped at a breakpoint (interrupt_before / interrupt_after) without an answer; " +
		"run the assistant on a thread to continue it. Its output so far follows."
}

// mcpError is a tool error: the model reading it can correct its call.
func mcpError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}
