package model

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/jetgraph/jetgraph/engine"
)

// toOpenAIMessages converts a LangChain conversation into the chat completions API's messages:
// human -> user, ai -> assistant (with its tool_calls), tool -> tool (with tool_call_id),
// system -> system. A message of another type, or a human content block the API cannot take,
// is an Invalid error.
func toOpenAIMessages(msgs []engine.Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(msgs))
	for i, m := range msgs {
		var p openai.ChatCompletionMessageParamUnion
		switch m.Type {
		case engine.MessageSystem:
			p = openai.SystemMessage(textOf(m))
			if m.Name != nil && *m.Name != "" {
				p.OfSystem.Name = param.NewOpt(*m.Name)
			}
		case engine.MessageHuman:
			parts, plain, err := userContent(m.Content)
			if err != nil {
				return nil, engine.E(openAIOp, engine.Invalid, fmt.Sprintf("message %d: %v", i, err))
			}
			if parts != nil {
				p = openai.UserMessage(parts)
			} else {
				p = openai.UserMessage(plain)
			}
			if m.Name != nil && *m.Name != "" {
				p.OfUser.Name = param.NewOpt(*m.Name)
			}
		case engine.MessageAI:
			p = assistantMessage(m)
		case engine.MessageTool:
			p = openai.ToolMessage(textOf(m), m.ToolCallID)
		default:
			return nil, engine.E(openAIOp, engine.Invalid, fmt.Sprintf("message %d: type %q cannot be sent to a chat model", i, m.Type))
		}
		out = append(out, p)
	}
	return out, nil
}

// assistantMessage converts an AI message, its tool calls included. Content is left out when
// the message only calls tools, as the API expects.
func assistantMessage(m engine.Message) openai.ChatCompletionMessageParamUnion {
	a := openai.ChatCompletionAssistantMessageParam{}
	text := textOf(m)
	if text != "" || len(m.ToolCalls) == 0 {
		a.Content.OfString = param.NewOpt(text)
	}
	if m.Name != nil && *m.Name != "" {
		a.Name = param.NewOpt(*m.Name)
	}
	for _, tc := range m.ToolCalls {
		args := "{}"
		if tc.Args != nil {
			if raw, err := json.Marshal(tc.Args); err == nil {
				args = string(raw)
			}
		}
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       tc.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
			},
		})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// textOf is a message's content as text: the string, its text blocks joined, or, for other
// content (a tool's structured result), its JSON.
func textOf(m engine.Message) string {
	switch c := m.Content.(type) {
	case nil:
		return ""
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, blk := range c {
			switch x := blk.(type) {
			case string:
				b.WriteString(x)
			case map[string]any:
				if x["type"] == "text" {
					t, _ := x["text"].(string)
					b.WriteString(t)
				}
			}
		}
		return b.String()
	}
	raw, err := json.Marshal(m.Content)
	if err != nil {
		return fmt.Sprint(m.Content)
	}
	return string(raw)
}

// userContent converts a human message's content: a string stays plain, a list of blocks
// becomes content parts (text, and images given as image_url blocks or LangChain's standard
// image blocks with a url or base64 data).
func userContent(content any) ([]openai.ChatCompletionContentPartUnionParam, string, error) {
	blocks, ok := content.([]any)
	if !ok {
		return nil, textOf(engine.Message{Content: content}), nil
	}
	parts := make([]openai.ChatCompletionContentPartUnionParam, 0, len(blocks))
	for j, blk := range blocks {
		switch x := blk.(type) {
		case string:
			parts = append(parts, openai.TextContentPart(x))
		case map[string]any:
			part, err := userPart(x)
			if err != nil {
				return nil, "", fmt.Errorf("content block %d: %w", j, err)
			}
			parts = append(parts, part)
		default:
			return nil, "", fmt.Errorf("content block %d is a %T, not an object", j, blk)
		}
	}
	return parts, "", nil
}

// userPart converts one content block of a human message.
func userPart(b map[string]any) (openai.ChatCompletionContentPartUnionParam, error) {
	typ, _ := b["type"].(string)
	switch typ {
	case "text":
		t, _ := b["text"].(string)
		return openai.TextContentPart(t), nil
	case "image_url":
		img := openai.ChatCompletionContentPartImageImageURLParam{}
		switch u := b["image_url"].(type) {
		case string:
			img.URL = u
		case map[string]any:
			img.URL, _ = u["url"].(string)
			img.Detail, _ = u["detail"].(string)
		}
		if img.URL == "" {
			return openai.ChatCompletionContentPartUnionParam{}, fmt.Errorf("image_url block has no url")
		}
		return openai.ImageContentPart(img), nil
	case "image":
		img := openai.ChatCompletionContentPartImageImageURLParam{}
		if u, _ := b["url"].(string); u != "" {
			img.URL = u
		} else if data, _ := b["base64"].(string); data != "" {
			mime, _ := b["mime_type"].(string)
			if mime == "" {
				mime = "image/png"
			}
			img.URL = "data:" + mime + ";base64," + data
		} else {
			return openai.ChatCompletionContentPartUnionParam{}, fmt.Errorf("image block has neither url nor base64 data")
		}
		return openai.ImageContentPart(img), nil
	}
	return openai.ChatCompletionContentPartUnionParam{}, fmt.Errorf("blocks of type %q cannot be sent to a chat model", typ)
}

// toOpenAITools declares tools as function tools with their JSON Schema parameters.
func toOpenAITools(tools []Tool) []openai.ChatCompletionToolUnionParam {
	if len(tools) == 0 {
		return nil
	}
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(tools))
	for _, t := range tools {
		def := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			def.Description = param.NewOpt(t.Description)
		}
		if t.Parameters != nil {
			def.Parameters = shared.FunctionParameters(t.Parameters)
		}
		out = append(out, openai.ChatCompletionFunctionTool(def))
	}
	return out
}
