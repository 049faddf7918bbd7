// Package model is jetgraph's client side of chat models: the ChatModel interface a graph node
// calls to get the next AI message, a deterministic scripted Fake for tests, demos and offline
// use, and OpenAI, which speaks the chat completions API of OpenAI and of any compatible server.
//
// Messages in and out are engine.Message values in the LangChain dict format, so what a model
// returns can be appended to a thread's "messages" as is, and the chunks it streams are what the
// "messages" stream modes carry.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jetgraph/jetgraph/engine"
)

// ChatModel generates the next AI message from a conversation, streaming it.
// Implementations are safe for concurrent use.
type ChatModel interface {
	// Stream sends req to the model; onChunk (may be nil) receives each chunk as it arrives
	// (chunks of one answer share the final message's ID); it returns the complete message.
	// An error returned by onChunk stops the call and is returned as is.
	Stream(ctx context.Context, req Request, onChunk func(engine.MessageChunk) error) (engine.Message, error)
	// Info identifies the model (provider and model name), for traces.
	Info() Info
}

// Both models implement ChatModel.
var (
	_ ChatModel = (*Fake)(nil)
	_ ChatModel = (*OpenAI)(nil)
)

// Request is one call to a chat model: the conversation so far and what the model may do.
type Request struct {
	// Messages is the conversation, oldest first: system, human, ai and tool messages.
	Messages []engine.Message
	// Tools are the tools the model may call; none means it can only answer in text.
	Tools []Tool
	// ToolChoice steers tool use: "" (the model's default), "auto", "none", "required", or the
	// name of one tool the model must call.
	ToolChoice string
	// Temperature overrides the model's configured sampling temperature when set.
	Temperature *float64
	// MaxTokens caps the tokens the model generates; 0 leaves the model's default.
	MaxTokens int
	// Stop lists sequences at which the model stops generating.
	Stop []string
}

// Tool describes a tool the model may call.
type Tool struct {
	// Name is how the model names the tool in its calls.
	Name string
	// Description tells the model what the tool does and when to use it.
	Description string
	// Parameters is the JSON Schema of the tool's arguments object; nil means no arguments.
	Parameters map[string]any
}

// Info identifies a chat model for traces and response metadata.
type Info struct {
	// Provider names who serves the model: "openai", "fake".
	Provider string
	// Model is the model's name as the provider knows it.
	Model string
}

// The finish reasons models report in response_metadata.
const (
	FinishStop      = "stop"       // the model finished its answer
	FinishToolCalls = "tool_calls" // the model stopped to call tools
)

// chunkType is the type LangChain gives streamed AI message pieces.
const chunkType = "AIMessageChunk"

// newChunk returns an empty chunk of message id, with the non-nil maps and slices clients expect.
func newChunk(id string) engine.MessageChunk {
	return engine.MessageChunk{
		Type:             chunkType,
		ID:               id,
		AdditionalKwargs: map[string]any{},
		ResponseMetadata: map[string]any{},
		ToolCalls:        []engine.ToolCall{},
		InvalidToolCalls: []any{},
		ToolCallChunks:   []engine.ToolCallChunk{},
	}
}

// newAIMessage returns an AI message with text content and every collection non-nil.
func newAIMessage(id, text string) engine.Message {
	m := engine.NewMessage(engine.MessageAI, text)
	m.ID = id
	m.ToolCalls = []engine.ToolCall{}
	m.InvalidToolCalls = []any{}
	return m
}

// parseArgs reads a tool call's arguments, which must be a JSON object; empty text is {}.
func parseArgs(raw string) (map[string]any, error) {
	args := map[string]any{}
	if raw == "" {
		return args, nil
	}
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		return nil, fmt.Errorf("arguments are not a JSON object: %w", err)
	}
	if args == nil { // the text was JSON null
		return nil, errors.New("arguments are not a JSON object: null")
	}
	return args, nil
}

// invalidToolCall is the LangChain invalid_tool_calls entry for a call whose arguments do not
// parse: the raw text is kept so that the caller can show or repair it.
func invalidToolCall(name, args, id, reason string) map[string]any {
	return map[string]any{"type": "invalid_tool_call", "name": name, "args": args, "id": id, "error": reason}
}

// copyUsage returns a copy of u that shares no map with it, or nil.
func copyUsage(u *engine.UsageMetadata) *engine.UsageMetadata {
	if u == nil {
		return nil
	}
	c := *u
	c.InputTokenDetails = copyCounts(u.InputTokenDetails)
	c.OutputTokenDetails = copyCounts(u.OutputTokenDetails)
	return &c
}

func copyCounts(m map[string]int) map[string]int {
	if m == nil {
		return nil
	}
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
