package trace

import (
	"fmt"
	"strings"
)

// checkMessages sets the Problem of each message that violates the spec. known holds the ids of
// the tool calls of earlier assistant messages (those of the run's inputs when checking its
// outputs); it gains those of msgs.
func checkMessages(msgs []Message, known map[string]bool) {
	servers := map[string]bool{}
	for i := range msgs {
		m := &msgs[i]
		var probs []string
		switch m.Role {
		case RoleSystem, RoleReasoning, RoleUser, RoleAssistant, RoleTool:
		default:
			probs = append(probs, fmt.Sprintf("unknown role %q", m.Role))
		}
		if m.ToolCallID != "" {
			switch {
			case m.Role != RoleTool:
				probs = append(probs, fmt.Sprintf("tool_call_id %s on a %s message", m.ToolCallID, m.Role))
			case !known[m.ToolCallID]:
				probs = append(probs, fmt.Sprintf("tool_call_id %s names no earlier tool call", m.ToolCallID))
			}
		}
		for j, b := range m.Content {
			if p := checkBlock(b, servers); p != "" {
				probs = append(probs, fmt.Sprintf("block %d: %s", j, p))
			}
			if b["type"] == "tool_call" {
				if id, _ := b["id"].(string); id != "" && m.Role == RoleAssistant {
					known[id] = true
				}
			}
		}
		m.Problem = strings.Join(probs, "; ")
	}
}

// checkBlock returns what is wrong with a block, or "". servers collects the ids of server tool
// calls, which a server_tool_result must name.
func checkBlock(b Block, servers map[string]bool) string {
	typ, ok := b["type"].(string)
	if !ok || typ == "" {
		return "no type"
	}
	str := func(k string) bool { s, ok := b[k].(string); return ok && s != "" }
	obj := func(k string) bool { _, ok := b[k].(map[string]any); return ok }
	switch typ {
	case "text", "reasoning":
		if _, ok := b["text"].(string); !ok {
			return typ + " block without text"
		}
	case "image", "file", "audio", "video":
		if !str("url") && !str("base64") && !str("id") {
			return typ + " block without url, base64 or id"
		}
	case "tool_call":
		if !obj("args") {
			return "tool_call without args"
		}
	case "server_tool_call":
		if !str("id") || !str("name") || !obj("args") {
			return "server_tool_call needs id, name and args"
		}
		servers[b["id"].(string)] = true
	case "server_tool_result":
		id, _ := b["tool_call_id"].(string)
		switch {
		case id == "":
			return "server_tool_result without tool_call_id"
		case b["status"] != "success" && b["status"] != "error":
			return fmt.Sprintf("server_tool_result status %v is neither success nor error", b["status"])
		case !servers[id]:
			return fmt.Sprintf("server_tool_result names no server tool call %s", id)
		}
	}
	return ""
}

// Problems lists the problems of msgs, one line each: "<role> message <index>: <problem>".
func Problems(msgs []Message) []string {
	var out []string
	for i, m := range msgs {
		if m.Problem == "" {
			continue
		}
		if m.Role == "" {
			out = append(out, fmt.Sprintf("message %d: %s", i, m.Problem))
			continue
		}
		out = append(out, fmt.Sprintf("%s message %d: %s", m.Role, i, m.Problem))
	}
	return out
}
