package engine

import (
	"encoding/json"
	"fmt"
)

// Message types, as LangChain names them on the wire.
const (
	MessageHuman  = "human"
	MessageAI     = "ai"
	MessageTool   = "tool"
	MessageSystem = "system"
)

// Message is a chat message in the LangChain dict format the LangGraph API speaks. Content is a
// string or a list of typed blocks. Fields that belong to one type only are omitted elsewhere.
type Message struct {
	Content          any            `json:"content"`
	AdditionalKwargs map[string]any `json:"additional_kwargs"`
	ResponseMetadata map[string]any `json:"response_metadata"`
	Type             string         `json:"type"`
	Name             *string        `json:"name"`
	ID               string         `json:"id"`
	// Example is LangChain's former flag for example messages: the reference server's messages
	// (langchain-core 1.x) no longer carry it, so it is sent only when a client set it.
	Example bool `json:"example,omitzero"`

	// AI messages: both lists are always there, empty when none (NewMessage and CoerceMessage
	// make them; omitzero leaves out only the nil lists of other types).
	ToolCalls        []ToolCall     `json:"tool_calls,omitzero"`
	InvalidToolCalls []any          `json:"invalid_tool_calls,omitzero"`
	UsageMetadata    *UsageMetadata `json:"usage_metadata,omitempty"`

	// Tool messages.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Status     string `json:"status,omitempty"`
	Artifact   any    `json:"artifact,omitempty"`
}

// ToolCall is a model's request to call a tool.
type ToolCall struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
	ID   string         `json:"id"`
	Type string         `json:"type"` // "tool_call"
}

// ToolCallChunk is a piece of a tool call as a model streams it: Args is a fragment of JSON text.
type ToolCallChunk struct {
	Name  string `json:"name,omitempty"`
	Args  string `json:"args"`
	ID    string `json:"id,omitempty"`
	Index int    `json:"index"`
	Type  string `json:"type"` // "tool_call_chunk"
}

// UsageMetadata counts the tokens of one model call.
type UsageMetadata struct {
	InputTokens        int            `json:"input_tokens"`
	OutputTokens       int            `json:"output_tokens"`
	TotalTokens        int            `json:"total_tokens"`
	InputTokenDetails  map[string]int `json:"input_token_details,omitempty"`
	OutputTokenDetails map[string]int `json:"output_token_details,omitempty"`
}

// MessageChunk is one streamed piece of an AI message: what the messages stream modes carry.
// Chunks of one message share its ID.
type MessageChunk struct {
	Content          string          `json:"content"`
	AdditionalKwargs map[string]any  `json:"additional_kwargs"`
	ResponseMetadata map[string]any  `json:"response_metadata"`
	Type             string          `json:"type"` // "AIMessageChunk"
	Name             *string         `json:"name"`
	ID               string          `json:"id"`
	Example          bool            `json:"example,omitzero"` // as Message.Example
	ToolCalls        []ToolCall      `json:"tool_calls"`
	InvalidToolCalls []any           `json:"invalid_tool_calls"`
	ToolCallChunks   []ToolCallChunk `json:"tool_call_chunks"`
	UsageMetadata    *UsageMetadata  `json:"usage_metadata,omitempty"`
}

// Text returns the message's content as plain text: the string itself, or its text blocks joined.
func (m Message) Text() string {
	switch c := m.Content.(type) {
	case string:
		return c
	case []any:
		var s string
		for _, b := range c {
			if blk, ok := b.(map[string]any); ok && blk["type"] == "text" {
				if t, ok := blk["text"].(string); ok {
					s += t
				}
			}
		}
		return s
	}
	return ""
}

// NewMessage returns a message of type typ with text content and empty maps (and, for an AI
// message, empty tool call lists), as clients expect.
func NewMessage(typ, content string) Message {
	m := Message{Type: typ, Content: content, AdditionalKwargs: map[string]any{}, ResponseMetadata: map[string]any{}}
	m.withToolCallLists()
	return m
}

// withToolCallLists gives an AI message the tool call lists it lacks, empty: clients read them
// without checking.
func (m *Message) withToolCallLists() {
	if m.Type != MessageAI {
		return
	}
	if m.ToolCalls == nil {
		m.ToolCalls = []ToolCall{}
	}
	if m.InvalidToolCalls == nil {
		m.InvalidToolCalls = []any{}
	}
}

// CoerceMessage turns what a client may send as a message into a Message: a message dict with
// "type", a {role, content} dict (user -> human, assistant -> ai), or a plain string (a human
// message). It does not assign an id.
func CoerceMessage(v any) (Message, error) {
	switch x := v.(type) {
	case Message:
		x.withToolCallLists()
		return x, nil
	case *Message:
		m := *x
		m.withToolCallLists()
		return m, nil
	case string:
		return NewMessage(MessageHuman, x), nil
	case map[string]any:
		raw, err := json.Marshal(x)
		if err != nil {
			return Message{}, err
		}
		var m Message
		if err := json.Unmarshal(raw, &m); err != nil {
			return Message{}, fmt.Errorf("message: %w", err)
		}
		if m.Type == "" {
			role, _ := x["role"].(string)
			switch role {
			case "user", "human":
				m.Type = MessageHuman
			case "assistant", "ai":
				m.Type = MessageAI
			case "system", "developer":
				m.Type = MessageSystem
			case "tool":
				m.Type = MessageTool
			default:
				return Message{}, fmt.Errorf("message: unknown role %q", role)
			}
		}
		if m.Content == nil {
			m.Content = ""
		}
		if m.AdditionalKwargs == nil {
			m.AdditionalKwargs = map[string]any{}
		}
		if m.ResponseMetadata == nil {
			m.ResponseMetadata = map[string]any{}
		}
		m.withToolCallLists()
		return m, nil
	}
	return Message{}, fmt.Errorf("message: cannot read %T as a message", v)
}
