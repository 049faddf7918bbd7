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
// engine's self-tracing (engine/tracing/selftrace) and, for tool calls, shown by the events
// stream mode and the thread protocol's tools channel. Each kind has its payload type; ID is a
// UUIDv7 naming the call, which the start and the end of one call share.
const (
	TraceLLMStart  graph.Kind = graph.TraceModePrefix + "llm_start"  // LLMStart
	TraceLLMEnd    graph.Kind = graph.TraceModePrefix + "llm_end"    // LLMEnd
	TraceToolStart graph.Kind = graph.TraceModePrefix + "tool_start" // ToolStart
	TraceToolEnd   graph.Kind = graph.TraceModePrefix + "tool_end"   // ToolEnd
	// TraceDelegate is emitted by a graph whose steps and model calls another tracer traces
	// (a graph host's langsmith client, posting to jetgraph's tracing API): the run's tracer
	// keeps only the run's root span, so that no step is traced twice, and says in the event's
	// *TraceParent where the other tracer's spans go.
	TraceDelegate graph.Kind = graph.TraceModePrefix + "delegate" // *TraceParent
)

// TraceParent is a TraceDelegate event's data, filled in by the run's tracer while the sink
// handles the event (sinks are called synchronously); left empty when the run is not traced.
type TraceParent struct {
	// DottedOrder is the dotted_order of the run's root span: the langsmith-trace header of the
	// langsmith clients' distributed tracing (the trace id is its first segment's id, the
	// root's id its last).
	DottedOrder string
	// Project is the tracing project of the run's trace.
	Project string
}

// LLMStart is a TraceLLMStart event's data: a model call with what it was sent.
type LLMStart struct {
	ID       string           `json:"id"`
	Provider string           `json:"provider"`
	Model    string           `json:"model"`
	Messages []engine.Message `json:"messages"`
	Tools    []ToolSpec       `json:"tools"`
	Time     time.Time        `json:"time"`
}

// ToolSpec is a tool as a model call offers it.
type ToolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Parameters  any    `json:"parameters"`
}

// LLMEnd is a TraceLLMEnd event's data: the model's answer (with its usage) or its error.
type LLMEnd struct {
	ID             string         `json:"id"`
	Message        engine.Message `json:"message"`
	FirstTokenTime *time.Time     `json:"first_token_time"`
	Error          *string        `json:"error"`
	Time           time.Time      `json:"time"`
}

// ToolStart is a TraceToolStart event's data: a tool call and its arguments.
type ToolStart struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	ToolCallID string         `json:"tool_call_id"`
	Input      map[string]any `json:"input"`
	Time       time.Time      `json:"time"`
}

// ToolEnd is a TraceToolEnd event's data: what the tool answered, or its error.
type ToolEnd struct {
	ID     string    `json:"id"`
	Output string    `json:"output"`
	Error  *string   `json:"error"`
	Time   time.Time `json:"time"`
}

// callModel calls m with req, streaming its chunks to the run's messages stream, between a
// trace/llm_start and a trace/llm_end event; the answer carries the digest of what m was sent
// (InputDigestKey). A playback in ctx answers instead of m.
func callModel(ctx context.Context, rt *graph.Runtime, m model.ChatModel, req model.Request) (engine.Message, error) {
	id := uuid.Must(uuid.NewV7()).String()
	info := m.Info()
	tools := make([]ToolSpec, len(req.Tools))
	for i, t := range req.Tools {
		tools[i] = ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
	}
	rt.Emit(TraceLLMStart, LLMStart{ID: id, Provider: info.Provider, Model: info.Model,
		Messages: req.Messages, Tools: tools, Time: time.Now()})
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
	rt.Emit(TraceLLMEnd, LLMEnd{ID: id, Message: msg, FirstTokenTime: first, Error: errText(err), Time: time.Now()})
	return msg, err
}

// callTool runs one tool call between a trace/tool_start and a trace/tool_end event; a playback
// in ctx answers instead of run.
func callTool(ctx context.Context, rt *graph.Runtime, call engine.ToolCall, run func() (string, error)) (string, error) {
	id := uuid.Must(uuid.NewV7()).String()
	rt.Emit(TraceToolStart, ToolStart{ID: id, Name: call.Name, ToolCallID: call.ID, Input: call.Args, Time: time.Now()})
	if p := playbackOf(ctx); p != nil {
		run = func() (string, error) { return p.Tool(ctx, taskKey(rt), call) }
	}
	out, err := run()
	rt.Emit(TraceToolEnd, ToolEnd{ID: id, Output: out, Error: errText(err), Time: time.Now()})
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
