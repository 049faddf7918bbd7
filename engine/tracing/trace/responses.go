package trace

import "strings"

// responsesItems reads the OpenAI Responses API shapes: a request {input, instructions, model}
// and a response {output: [items]}. Items: messages ({role, content} with or without type
// "message"), reasoning, function_call, function_call_output and built-in tool calls
// (web_search_call...). Consecutive assistant items become one assistant message.
func responsesItems(x map[string]any) ([]Message, bool) {
	if out, ok := x["output"].([]any); ok && allItems(out) && (x["object"] == "response" || len(out) > 0) {
		msgs, ok := fromItems(out)
		if ok {
			attachUsage(msgs, firstMap(x["usage"]))
		}
		return msgs, ok
	}
	in, ok := x["input"]
	if !ok {
		return nil, false
	}
	_, hasModel := x["model"]
	_, hasInstr := x["instructions"]
	list, isList := in.([]any)
	if !(hasModel || hasInstr || isList && len(list) > 0 && allItems(list)) {
		return nil, false
	}
	var msgs []Message
	switch v := in.(type) {
	case string:
		msgs = []Message{{Role: RoleUser, Content: textBlocks(v)}}
	case []any:
		if !allItems(v) {
			return nil, false
		}
		var ok bool
		if msgs, ok = fromItems(v); !ok {
			return nil, false
		}
	default:
		return nil, false
	}
	if sys := systemMessage(x["instructions"]); sys != nil {
		msgs = append([]Message{*sys}, msgs...)
	}
	return msgs, true
}

// allItems reports whether every element is an object with a type or a role.
func allItems(list []any) bool {
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok || m["type"] == nil && m["role"] == nil {
			return false
		}
	}
	return true
}

func fromItems(items []any) ([]Message, bool) {
	out := []Message{}
	// assistant appends blocks to the last message when it is an assistant message.
	assistant := func(blocks ...Block) {
		if len(out) > 0 && out[len(out)-1].Role == RoleAssistant {
			out[len(out)-1].Content = append(out[len(out)-1].Content, blocks...)
			return
		}
		out = append(out, Message{Role: RoleAssistant, Content: blocks})
	}
	for _, e := range items {
		it := e.(map[string]any)
		typ, _ := it["type"].(string)
		switch {
		case typ == "" || typ == "message":
			msgs, ok := toMessages(it)
			if !ok {
				return nil, false
			}
			if len(msgs) == 1 && msgs[0].Role == RoleAssistant {
				assistant(msgs[0].Content...)
				continue
			}
			out = append(out, msgs...)
		case typ == "reasoning":
			var blocks []Block
			for _, s := range append(listOf(it["summary"]), listOf(it["content"])...) {
				if t := pathStr(s, "text"); t != "" {
					blocks = append(blocks, Block{"type": "reasoning", "text": t})
				}
			}
			if len(blocks) == 0 {
				blocks = []Block{{"type": "reasoning", "text": ""}}
			}
			assistant(blocks...)
		case typ == "function_call" || typ == "custom_tool_call":
			b := Block{"type": "tool_call", "id": firstStr(it["call_id"], it["id"]), "name": it["name"]}
			b["args"] = parseArgs(firstNonNil(it["arguments"], it["input"]), b)
			assistant(b)
		case typ == "function_call_output" || typ == "custom_tool_call_output":
			id, _ := it["call_id"].(string)
			out = append(out, Message{Role: RoleTool, ToolCallID: id, Content: contentBlocks(it["output"])})
		case strings.HasSuffix(typ, "_call"): // built-in tools: web_search_call, file_search_call...
			call := Block{"type": "server_tool_call", "id": it["id"], "name": strings.TrimSuffix(typ, "_call"),
				"args": orEmpty(firstMap(it["action"], it["arguments"]))}
			blocks := []Block{call}
			if st, _ := it["status"].(string); st == "completed" || st == "failed" {
				res := Block{"type": "server_tool_result", "tool_call_id": it["id"], "status": "success"}
				if st == "failed" {
					res["status"] = "error"
				}
				if o := firstNonNil(it["output"], it["results"], it["result"]); o != nil {
					res["output"] = o
				}
				blocks = append(blocks, res)
			}
			assistant(blocks...)
		default:
			assistant(copyBlock(it))
		}
	}
	return out, true
}

func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}

func firstNonNil(vs ...any) any {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}
