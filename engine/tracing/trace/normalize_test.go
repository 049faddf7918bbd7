package trace

import (
	"strings"
	"testing"
)

// TestNormalize converts one payload of every accepted message shape; the messages are compared
// with testdata/messages/<name>.json.
func TestNormalize(t *testing.T) {
	tests := []struct{ name, in string }{
		// Native format (spec/3-trace-format.md), one row per typical sequence and block type.
		{"native_text_reasoning", `{"messages": [{"role": "assistant", "content": [
			{"type": "text", "text": "42", "annotations": [{"type": "citation"}], "extras": {"k": 1}},
			{"type": "reasoning", "text": "6 times 7", "extras": {"signature": "s"}}]}]}`},
		{"native_tool_calls", `{"messages": [
			{"role": "system", "content": [{"type": "text", "text": "be brief"}]},
			{"role": "user", "content": [{"type": "text", "text": "weather in Paris?"}]},
			{"role": "assistant", "content": [{"type": "tool_call", "id": "call_1", "name": "weather", "args": {"city": "Paris"}}]},
			{"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "sunny"}]},
			{"role": "assistant", "content": [{"type": "text", "text": "It is sunny."}]}]}`},
		{"native_multimodal", `{"messages": [{"role": "user", "content": [
			{"type": "text", "text": "what is in these?"},
			{"type": "image", "url": "https://example.com/cat.png"},
			{"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"},
			{"type": "image", "id": "img_1"},
			{"type": "file", "base64": "JVBERi0=", "mime_type": "application/pdf"},
			{"type": "audio", "url": "https://example.com/a.mp3", "mime_type": "audio/mpeg"},
			{"type": "video", "id": "vid_1", "mime_type": "video/mp4"}]}]}`},
		{"native_server_tool", `{"messages": [{"role": "assistant", "content": [
			{"type": "server_tool_call", "id": "srv_1", "name": "web_search", "args": {"query": "go 1.26"}},
			{"type": "server_tool_result", "tool_call_id": "srv_1", "id": "res_1", "status": "success", "output": [{"url": "https://go.dev"}]},
			{"type": "text", "text": "Go 1.26 is out."}]}]}`},
		{"native_reasoning_role_usage", `{"messages": [
			{"role": "reasoning", "content": [{"type": "reasoning", "text": "thinking"}]},
			{"role": "assistant", "content": [{"type": "text", "text": "hi"}], "usage_metadata": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}}]}`},
		// The other accepted output shapes.
		{"chat_completions", `{"choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello!"}, "finish_reason": "stop"}],
			"usage_metadata": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}}`},
		{"chat_completions_openai_tools", `{"id": "chatcmpl-1", "model": "gpt-4o-2024-08-06", "choices": [{"index": 0, "message": {
			"role": "assistant", "content": null, "refusal": null, "tool_calls": [
			{"id": "call_a", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 1, \"b\": 2}"}},
			{"id": "call_b", "type": "function", "function": {"name": "broken", "arguments": "{not json"}}]}}],
			"usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30, "prompt_tokens_details": {"cached_tokens": 8}}}`},
		{"completions_text", `{"choices": [{"text": "once upon a time", "index": 0}]}`},
		{"single_message", `{"message": {"role": "assistant", "content": "from a message field"}}`},
		{"bare_message", `{"role": "assistant", "content": "bare"}`},
		{"pair", `["user", "a pair"]`},
		{"list_of_pairs", `[["system", "be kind"], ["human", "hi"], ["ai", "hello"]]`},
		{"list_of_role_content", `[{"role": "developer", "content": "rules"}, {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]`},
		// LangChain.
		{"langchain_dicts", `{"messages": [
			{"type": "system", "content": "sys"},
			{"type": "human", "content": [{"type": "text", "text": "add 1 and 2"}], "id": "m1"},
			{"type": "ai", "content": "", "tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}, "id": "tc1", "type": "tool_call"}],
			 "usage_metadata": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}},
			{"type": "tool", "content": "3", "tool_call_id": "tc1", "name": "add"},
			{"type": "ai", "content": "3", "additional_kwargs": {"reasoning_content": "easy"}}]}`},
		{"langchain_serialized_batch", `{"messages": [[
			{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "SystemMessage"], "kwargs": {"content": "sys", "type": "system"}},
			{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"], "kwargs": {"content": "hi", "type": "human"}},
			{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"], "kwargs": {"content": "", "type": "ai",
			 "additional_kwargs": {"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}},
			{"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "ToolMessage"], "kwargs": {"content": "done", "tool_call_id": "c1"}}]]}`},
		{"langchain_type_data", `[{"type": "human", "data": {"content": "hello", "example": false}}, {"type": "ai", "data": {"content": "hi there"}}]`},
		{"langchain_llm_result", `{"generations": [[{"text": "hi", "type": "ChatGeneration", "message": {"lc": 1, "type": "constructor",
			"id": ["langchain", "schema", "messages", "AIMessageChunk"], "kwargs": {"content": "hi", "type": "AIMessageChunk",
			"usage_metadata": {"input_tokens": 4, "output_tokens": 1, "total_tokens": 5}}}}]], "llm_output": null, "run": null, "type": "LLMResult"}`},
		{"langchain_v0_multimodal", `[{"role": "user", "content": [
			{"type": "image", "source_type": "url", "url": "https://example.com/x.jpg"},
			{"type": "image", "source_type": "base64", "data": "AAAA", "mime_type": "image/jpeg"},
			{"type": "file", "source_type": "id", "id": "file-1"},
			{"type": "reasoning", "reasoning": "v1 reasoning"}]}]`},
		// Messages styles of other providers.
		{"anthropic_request", `{"model": "claude-sonnet-4-5", "system": "you are terse", "messages": [
			{"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}},
			 {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}}]},
			{"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm", "signature": "sig"}, {"type": "tool_use", "id": "toolu_1", "name": "zoom", "input": {"x": 1}}]},
			{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "zoomed"}, {"type": "text", "text": "and now?"}]}]}`},
		{"anthropic_response", `{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-3-5-haiku-20241022",
			"content": [{"type": "text", "text": "Hi"}, {"type": "redacted_thinking", "data": "xx"}],
			"usage": {"input_tokens": 10, "output_tokens": 3, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20}}`},
		{"anthropic_server_tool", `{"role": "assistant", "content": [
			{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
			{"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [{"type": "web_search_result", "url": "https://a"}]},
			{"type": "text", "text": "found"}]}`},
		{"openai_multimodal", `{"model": "gpt-4o", "messages": [{"role": "user", "content": [
			{"type": "text", "text": "describe"},
			{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K", "detail": "low"}},
			{"type": "image_url", "image_url": "https://example.com/y.png"},
			{"type": "input_audio", "input_audio": {"data": "UklGR", "format": "wav"}},
			{"type": "file", "file": {"file_id": "file-9", "filename": "a.pdf"}}]},
			{"role": "assistant", "content": null, "function_call": {"name": "legacy", "arguments": "{\"q\": 1}"}},
			{"role": "function", "name": "legacy", "content": "ok"},
			{"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]}]}`},
		{"responses_request", `{"model": "gpt-5", "instructions": "be brief", "input": [
			{"role": "user", "content": [{"type": "input_text", "text": "hi"}, {"type": "input_image", "image_url": "https://example.com/i.png"}]},
			{"type": "function_call", "call_id": "call_9", "name": "lookup", "arguments": "{\"k\": \"v\"}"},
			{"type": "function_call_output", "call_id": "call_9", "output": "found"}]}`},
		{"responses_request_string", `{"model": "gpt-4.1", "input": "just a string"}`},
		{"responses_response", `{"object": "response", "model": "o4-mini", "output": [
			{"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "plan"}]},
			{"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}},
			{"type": "function_call", "call_id": "call_2", "name": "f", "arguments": "{}"},
			{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done", "annotations": []}]}],
			"usage": {"input_tokens": 9, "output_tokens": 4, "total_tokens": 13}}`},
		{"gemini_contents", `{"model": "gemini-2.5-flash", "system_instruction": {"parts": [{"text": "sys"}]}, "contents": [
			{"role": "user", "parts": [{"text": "hi"}, {"inline_data": {"mime_type": "image/jpeg", "data": "/9j/"}}]},
			{"role": "model", "parts": [{"text": "pondering", "thought": true}, {"function_call": {"name": "get", "args": {"a": 1}}}]},
			{"role": "user", "parts": [{"function_response": {"name": "get", "response": {"v": 2}}}]}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msgs, ok := Normalize(decode(t, tc.in))
			if !ok {
				t.Fatalf("not recognised as messages")
			}
			for i, m := range msgs {
				if m.Problem != "" {
					t.Errorf("message %d has a problem: %s", i, m.Problem)
				}
			}
			golden(t, "messages/"+tc.name, msgs)
		})
	}
}

func TestNormalizeNotMessages(t *testing.T) {
	for _, in := range []string{`{"prompts": ["hi"]}`, `"text"`, `{"foo": 1}`, `[1, 2]`, `null`, `{"messages": "x"}`,
		`{"messages": [{"foo": "bar"}]}`, `{"input": "chain input"}`} {
		if msgs, ok := Normalize(decode(t, in)); ok {
			t.Errorf("Normalize(%s) = %v, want not messages", in, msgs)
		}
	}
}

func TestNormalizeProblems(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"tool_call_id naming no earlier call", `[
			{"role": "assistant", "content": [{"type": "tool_call", "id": "a", "name": "f", "args": {}}]},
			{"role": "tool", "tool_call_id": "a", "content": "ok"},
			{"role": "tool", "tool_call_id": "x", "content": "orphan"}]`,
			[]string{"tool message 2: tool_call_id x names no earlier tool call"}},
		{"tool call of a later message", `[
			{"role": "tool", "tool_call_id": "b", "content": "too early"},
			{"role": "assistant", "content": [{"type": "tool_call", "id": "b", "name": "f", "args": {}}]}]`,
			[]string{"tool message 0: tool_call_id b names no earlier tool call"}},
		{"tool_call_id on a user message", `[{"role": "user", "tool_call_id": "a", "content": "hi"}]`,
			[]string{"user message 0: tool_call_id a on a user message"}},
		{"unknown role", `[{"role": "critic", "content": "meh"}]`, []string{`critic message 0: unknown role "critic"`}},
		{"bad blocks", `[{"role": "assistant", "content": [{"text": 1}, {"type": "text"}, {"type": "image"},
			{"type": "tool_call", "name": "f", "args": 3}, {"type": "server_tool_call", "id": "s"},
			{"type": "server_tool_result", "tool_call_id": "s", "status": "done"}, {"type": "server_tool_result", "tool_call_id": "zz", "status": "error"}]}]`,
			[]string{"assistant message 0: block 0: no type; block 1: text block without text; block 2: image block without url, base64 or id; " +
				"block 3: tool_call without args; block 4: server_tool_call needs id, name and args; " +
				"block 5: server_tool_result status done is neither success nor error; block 6: server_tool_result names no server tool call zz"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msgs, ok := Normalize(decode(t, tc.in))
			if !ok {
				t.Fatal("not recognised as messages")
			}
			got := Problems(msgs)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	// The data of a flagged message is kept.
	msgs, _ := Normalize(decode(t, `[{"role": "tool", "tool_call_id": "x", "content": "orphan"}]`))
	if msgs[0].ToolCallID != "x" || msgs[0].Content[0]["text"] != "orphan" || msgs[0].Problem == "" {
		t.Errorf("flagged message = %+v", msgs[0])
	}
}
