package trace

import (
	"encoding/json"
	"strings"
)

// contentBlocks converts message content to native blocks: a string is one text block (none when
// empty), a list converts element by element, a lone object is one block.
func contentBlocks(c any) []Block {
	switch x := c.(type) {
	case nil:
		return []Block{}
	case string:
		return textBlocks(x)
	case []any:
		out := make([]Block, 0, len(x))
		for _, e := range x {
			if b := toBlock(e); b != nil {
				out = append(out, b)
			}
		}
		return out
	case map[string]any:
		if b := toBlock(x); b != nil {
			return []Block{b}
		}
		return []Block{}
	}
	b, _ := json.Marshal(c)
	return textBlocks(string(b))
}

// toBlock converts one content element of any accepted format to a native block. Blocks already
// native, and blocks of unknown types, are kept as they are (copied).
func toBlock(e any) Block {
	x, ok := e.(map[string]any)
	if !ok {
		if s, ok := e.(string); ok {
			return Block{"type": "text", "text": s}
		}
		return nil
	}
	typ, _ := x["type"].(string)
	switch typ {
	case "text", "input_text", "output_text":
		b := pick(x, "text", "annotations", "extras", "id")
		b["type"] = "text"
		return b
	case "reasoning":
		b := copyBlock(x)
		if _, ok := b["text"]; !ok { // LangChain v1 names the text "reasoning"
			if r, ok := b["reasoning"].(string); ok {
				b["text"] = r
				delete(b, "reasoning")
			}
		}
		return b
	case "thinking": // Anthropic
		b := Block{"type": "reasoning", "text": x["thinking"]}
		if sig, ok := x["signature"]; ok {
			b["extras"] = map[string]any{"signature": sig}
		}
		return b
	case "redacted_thinking":
		return Block{"type": "reasoning", "text": "", "extras": map[string]any{"redacted": x["data"]}}
	case "refusal":
		return Block{"type": "text", "text": x["refusal"], "extras": map[string]any{"refusal": true}}
	case "image_url": // OpenAI chat completions
		url := x["image_url"]
		if m, ok := url.(map[string]any); ok {
			url = m["url"]
		}
		s, _ := url.(string)
		return media("image", s, "", "", "")
	case "input_image": // OpenAI Responses
		s, _ := x["image_url"].(string)
		id, _ := x["file_id"].(string)
		return media("image", s, "", id, "")
	case "input_audio":
		data := pathStr(x, "input_audio", "data")
		format := pathStr(x, "input_audio", "format")
		return media("audio", "", data, "", audioMime(format))
	case "input_file":
		return media("file", firstStr(x["file_url"], x["file_data"]), "", pathStr(x, "file_id"), "")
	case "image", "file", "audio", "video", "document":
		return mediaBlock(typ, x)
	case "tool_use": // Anthropic
		return Block{"type": "tool_call", "id": x["id"], "name": x["name"], "args": orEmpty(asMap(x["input"]))}
	case "server_tool_use":
		return Block{"type": "server_tool_call", "id": x["id"], "name": x["name"], "args": orEmpty(asMap(x["input"]))}
	case "tool_call":
		b := copyBlock(x)
		if _, ok := b["args"].(string); ok {
			b["args"] = parseArgs(b["args"], b)
		}
		return b
	case "":
		if t, ok := x["text"].(string); ok {
			return Block{"type": "text", "text": t}
		}
		return copyBlock(x)
	}
	if strings.HasSuffix(typ, "_tool_result") && typ != "server_tool_result" { // Anthropic server tools: web_search_tool_result...
		status := "success"
		if c, ok := x["content"].(map[string]any); ok {
			if t, _ := c["type"].(string); strings.HasSuffix(t, "_error") {
				status = "error"
			}
		}
		return Block{"type": "server_tool_result", "tool_call_id": x["tool_use_id"], "status": status, "output": x["content"]}
	}
	return copyBlock(x)
}

// mediaBlock reads an image, file, audio or video block in the native form ({url | base64 | id,
// mime_type}), LangChain's older form ({source_type, url | data | id, mime_type}) or Anthropic's
// ({source: {type, media_type, data | url | file_id}}); an Anthropic document is a file.
func mediaBlock(typ string, x map[string]any) Block {
	if typ == "document" {
		typ = "file"
	}
	if f, ok := x["file"].(map[string]any); ok { // OpenAI chat completions
		data, _ := f["file_data"].(string)
		id, _ := f["file_id"].(string)
		b := media("file", "", "", id, "")
		if strings.HasPrefix(data, "data:") {
			b = media("file", data, "", id, "")
		} else if data != "" {
			b["base64"] = data
		}
		if name, ok := f["filename"].(string); ok {
			b["extras"] = map[string]any{"filename": name}
		}
		return b
	}
	if src, ok := x["source"].(map[string]any); ok { // Anthropic
		mime, _ := src["media_type"].(string)
		switch src["type"] {
		case "base64":
			s, _ := src["data"].(string)
			return media(typ, "", s, "", mime)
		case "url":
			s, _ := src["url"].(string)
			return media(typ, s, "", "", mime)
		case "file":
			s, _ := src["file_id"].(string)
			return media(typ, "", "", s, mime)
		case "text":
			return Block{"type": "text", "text": src["data"]}
		}
	}
	b := copyBlock(x)
	b["type"] = typ
	if st, ok := b["source_type"].(string); ok { // LangChain v0 multimodal
		delete(b, "source_type")
		if st == "base64" {
			if d, ok := b["data"]; ok {
				b["base64"] = d
				delete(b, "data")
			}
		}
	}
	if u, ok := b["url"].(string); ok && strings.HasPrefix(u, "data:") {
		if m := media(typ, u, "", "", ""); m["base64"] != nil {
			delete(b, "url")
			b["base64"] = m["base64"]
			if b["mime_type"] == nil && m["mime_type"] != nil {
				b["mime_type"] = m["mime_type"]
			}
		}
	}
	return b
}

// media builds a media block. A data: URL becomes base64 and mime_type.
func media(typ, url, base64, id, mime string) Block {
	b := Block{"type": typ}
	if strings.HasPrefix(url, "data:") {
		if head, data, ok := strings.Cut(url[len("data:"):], ","); ok {
			m, enc, _ := strings.Cut(head, ";")
			if enc == "base64" || strings.HasSuffix(head, ";base64") {
				base64, url = data, ""
				if mime == "" {
					mime = m
				}
			}
		}
	}
	for k, v := range map[string]string{"url": url, "base64": base64, "id": id, "mime_type": mime} {
		if v != "" {
			b[k] = v
		}
	}
	return b
}

func audioMime(format string) string {
	switch format {
	case "":
		return ""
	case "mp3":
		return "audio/mpeg"
	}
	return "audio/" + format
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func copyBlock(x map[string]any) Block {
	b := make(Block, len(x))
	for k, v := range x {
		b[k] = v
	}
	return b
}

// pick copies the given keys of x that are present.
func pick(x map[string]any, keys ...string) Block {
	b := Block{}
	for _, k := range keys {
		if v, ok := x[k]; ok {
			b[k] = v
		}
	}
	return b
}

// geminiParts converts Gemini parts: text (thought: true is reasoning), inline_data,
// file_data and function_call.
func geminiParts(v any) []Block {
	parts, _ := v.([]any)
	out := []Block{}
	for _, p := range parts {
		x, ok := p.(map[string]any)
		if !ok {
			if s, ok := p.(string); ok {
				out = append(out, textBlocks(s)...)
			}
			continue
		}
		switch {
		case x["text"] != nil:
			typ := "text"
			if x["thought"] == true {
				typ = "reasoning"
			}
			out = append(out, Block{"type": typ, "text": x["text"]})
		case firstMap(x["inline_data"], x["inlineData"]) != nil:
			d := firstMap(x["inline_data"], x["inlineData"])
			mime := firstStr(d["mime_type"], d["mimeType"])
			data, _ := d["data"].(string)
			out = append(out, media(mediaType(mime), "", data, "", mime))
		case firstMap(x["file_data"], x["fileData"]) != nil:
			d := firstMap(x["file_data"], x["fileData"])
			mime := firstStr(d["mime_type"], d["mimeType"])
			out = append(out, media(mediaType(mime), firstStr(d["file_uri"], d["fileUri"]), "", "", mime))
		case firstMap(x["function_call"], x["functionCall"]) != nil:
			fc := firstMap(x["function_call"], x["functionCall"])
			out = append(out, Block{"type": "tool_call", "id": firstStr(fc["id"], fc["name"]), "name": fc["name"], "args": orEmpty(asMap(fc["args"]))})
		default:
			out = append(out, copyBlock(x))
		}
	}
	return out
}

// mediaType is the block type of a MIME type.
func mediaType(mime string) string {
	for _, t := range []string{"image", "audio", "video"} {
		if strings.HasPrefix(mime, t+"/") {
			return t
		}
	}
	return "file"
}

// fromGemini reads a Gemini request {contents, system_instruction}: contents are messages with
// parts (role model is the assistant); a function_response part is a tool message.
func fromGemini(x map[string]any) ([]Message, bool) {
	out := []Message{}
	if sys := systemMessage(firstMap(x["system_instruction"], x["systemInstruction"])); sys != nil {
		out = append(out, *sys)
	}
	switch c := x["contents"].(type) {
	case string:
		return append(out, Message{Role: RoleUser, Content: textBlocks(c)}), true
	case []any:
		for _, e := range c {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			role, _ := m["role"].(string)
			if role == "" {
				role = "user"
			}
			role, _ = roleOf(role)
			msg := Message{Role: role, Content: []Block{}}
			parts, _ := m["parts"].([]any)
			for _, p := range parts {
				fr := firstMap(path(p, "function_response"), path(p, "functionResponse"))
				if fr == nil {
					msg.Content = append(msg.Content, geminiParts([]any{p})...)
					continue
				}
				out = append(out, Message{Role: RoleTool, ToolCallID: firstStr(fr["id"], fr["name"]), Name: firstStr(fr["name"]),
					Content: []Block{{"type": "text", "text": jsonText(fr["response"])}}})
			}
			if len(msg.Content) > 0 || len(parts) == 0 {
				out = append(out, msg)
			}
		}
		return out, true
	}
	return nil, false
}

// jsonText is v as text: a string itself, anything else as JSON.
func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
