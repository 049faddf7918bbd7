package trace

import (
	"encoding/json"
	"strings"
)

// Native roles of spec/3-trace-format.md.
const (
	RoleSystem    = "system"
	RoleReasoning = "reasoning"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is a message in the native format of spec/3-trace-format.md: a role and typed content
// blocks. Problem says what about it violates the spec (it is kept all the same); Name and ID
// carry the message's name and id when the source had them.
type Message struct {
	Role          string         `json:"role"`
	Content       []Block        `json:"content"`
	ToolCallID    string         `json:"tool_call_id,omitempty"`
	UsageMetadata map[string]any `json:"usage_metadata,omitempty"`
	Name          string         `json:"name,omitempty"`
	ID            string         `json:"id,omitempty"`
	Problem       string         `json:"problem,omitempty"`
}

// Block is a typed content block: {"type": "text", "text": ...}, or reasoning, image, file, audio,
// video, tool_call, server_tool_call, server_tool_result with the fields of the spec's block
// table. Blocks of other types are kept as they came.
type Block map[string]any

// MarshalJSON writes a message with an empty content list rather than null.
func (m Message) MarshalJSON() ([]byte, error) {
	type plain Message
	if m.Content == nil {
		m.Content = []Block{}
	}
	return json.Marshal(plain(m))
}

// Normalize turns a message payload of any accepted shape into native messages, and reports
// whether v was one. The shapes: an object with "messages" (native or any message form below,
// possibly nested one level as [[...]], the LangChain batch form; a "system" field beside it is
// the first message); chat-completions {"choices": [{"message"}], "usage" or "usage_metadata"};
// LangChain's LLMResult {"generations": [[{"message"|"text"}]]}; {"message": {...}}; a bare
// {role, content}; a [role, content] pair; a list of any of these; LangChain message dicts
// {type: human|ai|tool|system, content, tool_calls...}, their {type, data} form and their
// serialized form {lc: 1, type: "constructor", id: [..., "HumanMessage"], kwargs}; and the
// messages styles of other providers: Anthropic (content blocks, tool_use/tool_result, thinking,
// "system"), OpenAI Responses ({"input"} / {"output"} items, "instructions") and Gemini
// ({"contents"} of parts, "system_instruction").
//
// Content becomes blocks (a string is one text block); OpenAI tool_calls and function_call
// become tool_call blocks with parsed args. Each message's Problem notes what violates the spec:
// an unknown role, a tool_call_id on a message that is not a tool message, a tool_call_id that
// names no tool call of an earlier assistant message, a malformed block.
func Normalize(v any) ([]Message, bool) {
	msgs, ok := normalize(v)
	if !ok {
		return nil, false
	}
	checkMessages(msgs, map[string]bool{})
	return msgs, true
}

func normalize(v any) ([]Message, bool) {
	switch x := v.(type) {
	case map[string]any:
		return normalizeObject(x)
	case []any:
		return normalizeList(x)
	}
	return nil, false
}

func normalizeObject(x map[string]any) ([]Message, bool) {
	if list, ok := x["messages"].([]any); ok {
		msgs, ok := normalizeList(list)
		if !ok {
			return nil, false
		}
		if sys := systemMessage(x["system"]); sys != nil {
			msgs = append([]Message{*sys}, msgs...)
		}
		return msgs, true
	}
	if choices, ok := x["choices"].([]any); ok {
		return fromChoices(choices, firstUsage(x["usage_metadata"], x["usage"]))
	}
	if gens, ok := x["generations"].([]any); ok {
		return fromGenerations(gens)
	}
	if m, ok := x["message"].(map[string]any); ok && !isMessage(x) {
		msgs, ok := toMessages(m)
		if ok {
			attachUsage(msgs, firstUsage(x["usage_metadata"], x["usage"]))
		}
		return msgs, ok
	}
	if _, ok := x["contents"]; ok {
		return fromGemini(x)
	}
	if items, ok := responsesItems(x); ok {
		return items, true
	}
	if isMessage(x) {
		msgs, ok := toMessages(x)
		if ok {
			attachUsage(msgs, firstUsage(nil, x["usage"]))
		}
		return msgs, ok
	}
	return nil, false
}

// normalizeList reads a list of messages, of [role, content] pairs, a single pair, or a batch of
// lists of messages.
func normalizeList(list []any) ([]Message, bool) {
	if m, ok := pairMessage(list); ok {
		return []Message{m}, true
	}
	out := []Message{}
	for _, e := range list {
		switch x := e.(type) {
		case map[string]any:
			msgs, ok := toMessages(x)
			if !ok {
				return nil, false
			}
			out = append(out, msgs...)
		case []any:
			if m, ok := pairMessage(x); ok {
				out = append(out, m)
				continue
			}
			batch, ok := normalizeList(x) // the LangChain batch form [[...]]
			if !ok {
				return nil, false
			}
			out = append(out, batch...)
		case string: // LangChain reads a bare string as a human message
			out = append(out, Message{Role: RoleUser, Content: textBlocks(x)})
		default:
			return nil, false
		}
	}
	return out, true
}

// pairMessage reads a [role, content] pair.
func pairMessage(list []any) (Message, bool) {
	if len(list) != 2 {
		return Message{}, false
	}
	role, ok1 := list[0].(string)
	content, ok2 := list[1].(string)
	if !ok1 || !ok2 {
		return Message{}, false
	}
	r, known := roleOf(role)
	if !known {
		return Message{}, false
	}
	return Message{Role: r, Content: textBlocks(content)}, true
}

// roleNames maps the roles and LangChain types of every accepted format to native roles.
var roleNames = map[string]string{
	"system": RoleSystem, "developer": RoleSystem,
	"user": RoleUser, "human": RoleUser,
	"assistant": RoleAssistant, "ai": RoleAssistant, "model": RoleAssistant,
	"tool": RoleTool, "function": RoleTool,
	"reasoning": RoleReasoning,
}

// roleOf maps a role or LangChain type to a native role; an unknown one is kept as it is.
func roleOf(s string) (string, bool) {
	if r, ok := roleNames[strings.ToLower(s)]; ok {
		return r, true
	}
	return s, false
}

// lcClasses maps LangChain message classes to their dict type.
var lcClasses = map[string]string{
	"HumanMessage": "human", "AIMessage": "ai", "SystemMessage": "system", "ToolMessage": "tool",
	"FunctionMessage": "function", "ChatMessage": "chat",
}

// lcMessage unwraps a LangChain serialized message {lc, type: constructor, id, kwargs} or a
// {type, data} dict into a message dict with "type".
func lcMessage(x map[string]any) (map[string]any, bool) {
	if ids, ok := x["id"].([]any); ok && x["lc"] != nil && x["type"] == "constructor" && len(ids) > 0 {
		class, _ := ids[len(ids)-1].(string)
		typ, ok := lcClasses[strings.TrimSuffix(class, "Chunk")]
		kwargs, _ := x["kwargs"].(map[string]any)
		if !ok || kwargs == nil {
			return nil, false
		}
		m := make(map[string]any, len(kwargs)+1)
		for k, v := range kwargs {
			m[k] = v
		}
		m["type"] = typ
		return m, true
	}
	if data, ok := x["data"].(map[string]any); ok {
		if typ, ok := x["type"].(string); ok && len(x) == 2 {
			if _, known := roleNames[typ]; known || typ == "chat" {
				m := make(map[string]any, len(data)+1)
				for k, v := range data {
					m[k] = v
				}
				m["type"] = typ
				return m, true
			}
		}
	}
	return nil, false
}

// isMessage reports whether x is a single message in one of the accepted forms.
func isMessage(x map[string]any) bool {
	if _, ok := lcMessage(x); ok {
		return true
	}
	if role, ok := x["role"].(string); ok && role != "" {
		_, c := x["content"]
		_, p := x["parts"]
		_, t := x["tool_calls"]
		return c || p || t
	}
	if typ, ok := x["type"].(string); ok {
		_, known := roleNames[typ]
		_, c := x["content"]
		return (known || typ == "chat") && c
	}
	return false
}

// toMessages converts one message dict. It yields several messages for an Anthropic user message
// carrying tool_result blocks: one tool message per result, then the rest.
func toMessages(x map[string]any) ([]Message, bool) {
	if m, ok := lcMessage(x); ok {
		x = m
	}
	var role string
	switch {
	case x["role"] != nil:
		s, _ := x["role"].(string)
		role, _ = roleOf(s)
	case x["type"] == "chat":
		s, _ := x["role"].(string)
		role, _ = roleOf(s)
	case x["type"] != nil:
		s, _ := x["type"].(string)
		var known bool
		if role, known = roleOf(s); !known {
			return nil, false
		}
	default:
		return nil, false
	}
	if role == "" {
		return nil, false
	}
	m := Message{Role: role, Content: contentBlocks(x["content"])}
	if _, ok := x["parts"]; ok && x["content"] == nil {
		m.Content = geminiParts(x["parts"])
	}
	m.ToolCallID = firstStr(x["tool_call_id"], x["tool_use_id"])
	m.Name, _ = x["name"].(string)
	m.ID, _ = x["id"].(string)
	if u, ok := x["usage_metadata"].(map[string]any); ok {
		m.UsageMetadata = u
	}
	if rc := firstStr(x["reasoning_content"], path(x, "additional_kwargs", "reasoning_content")); rc != "" {
		m.Content = append([]Block{{"type": "reasoning", "text": rc}}, m.Content...)
	}
	if refusal, ok := x["refusal"].(string); ok && refusal != "" {
		m.Content = append(m.Content, Block{"type": "text", "text": refusal, "extras": map[string]any{"refusal": true}})
	}
	addToolCalls(&m, x)
	if m.Role == RoleUser {
		return splitToolResults(m), true
	}
	return []Message{m}, true
}

// addToolCalls appends tool_call blocks for the message-level tool calls of OpenAI
// (tool_calls, function_call) and LangChain (tool_calls, additional_kwargs.tool_calls), unless a
// block already carries the same call.
func addToolCalls(m *Message, x map[string]any) {
	calls, _ := x["tool_calls"].([]any)
	if len(calls) == 0 {
		calls, _ = path(x, "additional_kwargs", "tool_calls").([]any)
	}
	if fc := firstMap(x["function_call"], path(x, "additional_kwargs", "function_call")); len(calls) == 0 && fc != nil {
		calls = []any{map[string]any{"function": fc}}
	}
	seen := map[string]bool{}
	for _, b := range m.Content {
		if id, _ := b["id"].(string); id != "" {
			seen[id] = true
		}
	}
	for _, c := range calls {
		call, ok := c.(map[string]any)
		if !ok {
			continue
		}
		b := Block{"type": "tool_call"}
		if id, _ := call["id"].(string); id != "" {
			if seen[id] {
				continue
			}
			b["id"] = id
		}
		if fn, ok := call["function"].(map[string]any); ok { // OpenAI
			b["name"], _ = fn["name"].(string)
			b["args"] = parseArgs(fn["arguments"], b)
		} else { // LangChain
			b["name"], _ = call["name"].(string)
			b["args"] = parseArgs(call["args"], b)
		}
		m.Content = append(m.Content, b)
	}
}

// parseArgs reads tool call arguments: an object, or JSON text of one. Text that is not an object
// gives {} and is kept in the block's extras.
func parseArgs(v any, b Block) map[string]any {
	switch a := v.(type) {
	case map[string]any:
		return a
	case string:
		var m map[string]any
		if strings.TrimSpace(a) == "" {
			return map[string]any{}
		}
		if err := json.Unmarshal([]byte(a), &m); err == nil && m != nil {
			return m
		}
		b["extras"] = map[string]any{"raw_args": a}
	}
	return map[string]any{}
}

func firstMap(vs ...any) map[string]any {
	for _, v := range vs {
		if m, ok := v.(map[string]any); ok {
			return m
		}
	}
	return nil
}

// splitToolResults turns the Anthropic tool_result blocks of a user message into tool messages,
// placed before what remains of the user message.
func splitToolResults(m Message) []Message {
	var out []Message
	var rest []Block
	for _, b := range m.Content {
		if b["type"] != "tool_result" {
			rest = append(rest, b)
			continue
		}
		id, _ := b["tool_use_id"].(string)
		out = append(out, Message{Role: RoleTool, ToolCallID: id, Content: contentBlocks(b["content"])})
	}
	if len(out) == 0 {
		return []Message{m}
	}
	if len(rest) > 0 {
		m.Content = rest
		out = append(out, m)
	}
	return out
}

// systemMessage reads the system prompt given beside the messages (Anthropic "system",
// Responses "instructions", Gemini "system_instruction").
func systemMessage(v any) *Message {
	switch s := v.(type) {
	case nil:
		return nil
	case string:
		if s == "" {
			return nil
		}
	case map[string]any:
		if parts, ok := s["parts"]; ok {
			return &Message{Role: RoleSystem, Content: geminiParts(parts)}
		}
	}
	return &Message{Role: RoleSystem, Content: contentBlocks(v)}
}

// fromChoices reads a chat-completions response: the message of each choice (or the text of a
// completions choice), the usage going to the first.
func fromChoices(choices []any, usage map[string]any) ([]Message, bool) {
	out := []Message{}
	for _, c := range choices {
		choice, ok := c.(map[string]any)
		if !ok {
			return nil, false
		}
		if m, ok := choice["message"].(map[string]any); ok {
			msgs, ok := toMessages(m)
			if !ok {
				return nil, false
			}
			out = append(out, msgs...)
		} else if text, ok := choice["text"].(string); ok {
			out = append(out, Message{Role: RoleAssistant, Content: textBlocks(text)})
		} else {
			return nil, false
		}
	}
	attachUsage(out, usage)
	return out, true
}

// fromGenerations reads LangChain's LLMResult: generations [[{message} or {text}]].
func fromGenerations(gens []any) ([]Message, bool) {
	out := []Message{}
	for _, g := range gens {
		list, ok := g.([]any)
		if !ok {
			list = []any{g}
		}
		for _, e := range list {
			gen, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			if m, ok := gen["message"].(map[string]any); ok {
				msgs, ok := toMessages(m)
				if !ok {
					return nil, false
				}
				out = append(out, msgs...)
			} else if text, ok := gen["text"].(string); ok {
				out = append(out, Message{Role: RoleAssistant, Content: textBlocks(text)})
			}
		}
	}
	return out, true
}

// attachUsage gives usage, in usage_metadata form, to the first message that has none.
func attachUsage(msgs []Message, usage map[string]any) {
	if usage == nil || len(msgs) == 0 || msgs[0].UsageMetadata != nil {
		return
	}
	if u, ok := parseUsage(usage); ok {
		msgs[0].UsageMetadata = u.metadata()
	}
}

func firstUsage(vs ...any) map[string]any { return firstMap(vs...) }

// textBlocks is a text as content: one text block, none for "".
func textBlocks(s string) []Block {
	if s == "" {
		return []Block{}
	}
	return []Block{{"type": "text", "text": s}}
}
