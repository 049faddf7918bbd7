package graphs

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/model"
)

// Internal trace events of the graphs' model and tool calls (graph.Runtime.Emit), read by the
// engine's self-tracing (engine/tracing/selftrace). Their payloads are maps, like the "tasks" events:
//
//	trace/llm_start  {id, provider, model, messages []engine.Message, tools [{name, description, parameters}], time}
//	trace/llm_end    {id, message engine.Message (with usage_metadata), first_token_time *time.Time, error *string, time}
//	trace/tool_start {id, name, tool_call_id, input map, time}
//	trace/tool_end   {id, output string, error *string, time}
//
// id is a UUIDv7 naming the call: the start and end of one call share it.
const (
	TraceLLMStart  = graph.TraceModePrefix + "llm_start"
	TraceLLMEnd    = graph.TraceModePrefix + "llm_end"
	TraceToolStart = graph.TraceModePrefix + "tool_start"
	TraceToolEnd   = graph.TraceModePrefix + "tool_end"
)

// callModel calls m with req, streaming its chunks to the run's messages stream, between a
// trace/llm_start and a trace/llm_end event; the answer carries the digest of what m was sent
// (InputDigestKey). A playback in ctx answers instead of m.
func callModel(ctx context.Context, rt *graph.Runtime, m model.ChatModel, req model.Request) (engine.Message, error) {
	id := uuid.Must(uuid.NewV7()).String()
	info := m.Info()
	tools := make([]map[string]any, len(req.Tools))
	for i, t := range req.Tools {
		tools[i] = map[string]any{"name": t.Name, "description": t.Description, "parameters": t.Parameters}
	}
	rt.Emit(TraceLLMStart, map[string]any{"id": id, "provider": info.Provider, "model": info.Model,
		"messages": req.Messages, "tools": tools, "time": time.Now()})
	var (
		once  sync.Once
		first *time.Time
	)
	var (
		msg engine.Message
		err error
	)
	if p := playbackOf(ctx); p != nil {
		msg, err = p.Model(ctx, taskKey(rt), req)
	} else {
		msg, err = m.Stream(ctx, req, func(c engine.MessageChunk) error {
			once.Do(func() { t := time.Now(); first = &t })
			rt.MessageChunk(c)
			return nil
		})
		if err == nil {
			msg.ResponseMetadata = maps.Clone(msg.ResponseMetadata)
			if msg.ResponseMetadata == nil {
				msg.ResponseMetadata = map[string]any{}
			}
			msg.ResponseMetadata[InputDigestKey] = InputDigest(req)
		}
	}
	rt.Emit(TraceLLMEnd, map[string]any{"id": id, "message": msg, "first_token_time": first,
		"error": errText(err), "time": time.Now()})
	return msg, err
}

// callTool runs one tool call between a trace/tool_start and a trace/tool_end event; a playback
// in ctx answers instead of run.
func callTool(ctx context.Context, rt *graph.Runtime, call engine.ToolCall, run func() (string, error)) (string, error) {
	id := uuid.Must(uuid.NewV7()).String()
	rt.Emit(TraceToolStart, map[string]any{"id": id, "name": call.Name, "tool_call_id": call.ID,
		"input": call.Args, "time": time.Now()})
	if p := playbackOf(ctx); p != nil {
		run = func() (string, error) { return p.Tool(ctx, taskKey(rt), call) }
	}
	out, err := run()
	rt.Emit(TraceToolEnd, map[string]any{"id": id, "output": out, "error": errText(err), "time": time.Now()})
	return out, err
}

// errText is err's text, nil for no error.
func errText(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}
