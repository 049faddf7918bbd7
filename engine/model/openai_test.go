package model

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
)

const testKey = "sk-test-secret-0123456789"

// seenRequest is what the test server received.
type seenRequest struct {
	Method, Path, Auth, ContentType string
	Body                            map[string]any
}

// recorder keeps the requests a test server received.
type recorder struct {
	mu   sync.Mutex
	reqs []seenRequest
}

func (r *recorder) last(t *testing.T) seenRequest {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		t.Fatal("the server received no request")
	}
	return r.reqs[len(r.reqs)-1]
}

// chatServer serves the chat completions API: it records each request and answers with
// respond, which writes the status and body.
func chatServer(t *testing.T, respond func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		seen := seenRequest{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), ContentType: r.Header.Get("Content-Type")}
		_ = json.Unmarshal(raw, &seen.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, seen)
		rec.mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, rec
}

// sse answers with the events of stream ("data: ...\n\n" each), flushing after each one.
func sse(stream string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, ev := range strings.SplitAfter(stream, "\n\n") {
			if strings.TrimSpace(ev) == "" {
				continue
			}
			_, _ = io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
	}
}

// event is one SSE event of a completion chunk with the given choices and usage.
func event(choices string, usage string) string {
	return `data: {"id":"chatcmpl-t","object":"chat.completion.chunk","created":1,"model":"m-1","choices":` +
		choices + `,"usage":` + usage + "}\n\n"
}

func newTestOpenAI(t *testing.T, baseURL, key string) *OpenAI {
	t.Helper()
	retries := 0
	temp := 0.2
	o, err := NewOpenAI(Config{BaseURL: baseURL, APIKey: key, Model: "gpt-4o-mini", Temperature: &temp, MaxRetries: &retries})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func strp(s string) *string { return &s }

// historyRequest is a conversation with every message type, blocks and tools.
func historyRequest() Request {
	ai := engine.NewMessage(engine.MessageAI, "")
	ai.ToolCalls = []engine.ToolCall{{Name: "get_weather", Args: map[string]any{"city": "Paris"}, ID: "call_1", Type: "tool_call"}}
	tool := engine.NewMessage(engine.MessageTool, "18C and sunny")
	tool.ToolCallID = "call_1"
	human := engine.NewMessage(engine.MessageHuman, "")
	human.Name = strp("ada")
	human.Content = []any{
		map[string]any{"type": "text", "text": "And the time? "},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://example.com/a.png", "detail": "low"}},
		map[string]any{"type": "image", "base64": "iVBORw0=", "mime_type": "image/png"},
	}
	system := engine.NewMessage(engine.MessageSystem, "")
	system.Content = []any{map[string]any{"type": "text", "text": "You are helpful."}}
	return Request{
		Messages: []engine.Message{
			system,
			engine.NewMessage(engine.MessageHuman, "What's the weather in Paris?"),
			ai,
			tool,
			engine.NewMessage(engine.MessageAI, "It is 18C."),
			human,
		},
		Tools: []Tool{
			{Name: "get_weather", Description: "Weather of a city.", Parameters: map[string]any{
				"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"},
			}},
			{Name: "get_time"},
		},
		ToolChoice: "auto",
		MaxTokens:  100,
	}
}

func TestOpenAIStream(t *testing.T) {
	stream, err := os.ReadFile("testdata/openai_stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	srv, rec := chatServer(t, sse(string(stream)))
	o := newTestOpenAI(t, srv.URL, testKey)

	var chunks []engine.MessageChunk
	m, err := o.Stream(context.Background(), historyRequest(), collect(&chunks))
	if err != nil {
		t.Fatal(err)
	}

	// The request.
	req := rec.last(t)
	if req.Method != http.MethodPost || req.Path != "/chat/completions" {
		t.Errorf("request %s %s, want POST /chat/completions", req.Method, req.Path)
	}
	if req.Auth != "Bearer "+testKey {
		t.Errorf("Authorization = %q", req.Auth)
	}
	if !strings.HasPrefix(req.ContentType, "application/json") {
		t.Errorf("Content-Type = %q", req.ContentType)
	}
	b := req.Body
	if b["model"] != "gpt-4o-mini" || b["stream"] != true || b["temperature"] != 0.2 || b["max_completion_tokens"] != float64(100) {
		t.Errorf("model, stream, temperature, max tokens = %v %v %v %v", b["model"], b["stream"], b["temperature"], b["max_completion_tokens"])
	}
	if so, _ := b["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options = %v", b["stream_options"])
	}
	var roles []string
	msgs, _ := b["messages"].([]any)
	for _, x := range msgs {
		roles = append(roles, x.(map[string]any)["role"].(string))
	}
	if want := []string{"system", "user", "assistant", "tool", "assistant", "user"}; !reflect.DeepEqual(roles, want) {
		t.Fatalf("roles = %v, want %v", roles, want)
	}
	call := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	fn := call["function"].(map[string]any)
	if call["id"] != "call_1" || call["type"] != "function" || fn["name"] != "get_weather" || fn["arguments"] != `{"city":"Paris"}` {
		t.Errorf("assistant tool call = %v", call)
	}
	if _, has := msgs[2].(map[string]any)["content"]; has {
		t.Errorf("a tool-calling assistant message has content: %v", msgs[2])
	}
	if tm := msgs[3].(map[string]any); tm["tool_call_id"] != "call_1" || tm["content"] != "18C and sunny" {
		t.Errorf("tool message = %v", tm)
	}
	tools, _ := b["tools"].([]any)
	if len(tools) != 2 || tools[0].(map[string]any)["type"] != "function" ||
		tools[0].(map[string]any)["function"].(map[string]any)["parameters"] == nil {
		t.Errorf("tools = %v", b["tools"])
	}
	golden(t, "openai_request.json", b)

	// The answer.
	checkAIMessage(t, m)
	checkChunks(t, chunks, m)
	if m.ID != "chatcmpl-123" || m.Text() != "Let me check." {
		t.Errorf("message %q says %q", m.ID, m.Text())
	}
	wantCalls := []engine.ToolCall{
		{Name: "get_weather", Args: map[string]any{"city": "Paris"}, ID: "call_abc", Type: "tool_call"},
		{Name: "get_time", Args: map[string]any{"tz": "CET"}, ID: "call_def", Type: "tool_call"},
	}
	if !reflect.DeepEqual(m.ToolCalls, wantCalls) {
		t.Errorf("tool calls = %+v", m.ToolCalls)
	}
	wantUsage := &engine.UsageMetadata{
		InputTokens: 42, OutputTokens: 17, TotalTokens: 59,
		InputTokenDetails:  map[string]int{"cache_read": 10, "audio": 0},
		OutputTokenDetails: map[string]int{"reasoning": 5, "audio": 0},
	}
	if !reflect.DeepEqual(m.UsageMetadata, wantUsage) {
		t.Errorf("usage = %+v", m.UsageMetadata)
	}
	if m.ResponseMetadata["finish_reason"] != "tool_calls" || m.ResponseMetadata["model_name"] != "gpt-4o-mini-2024-07-18" {
		t.Errorf("response_metadata = %v", m.ResponseMetadata)
	}
	// 2 content, 4 tool call pieces, 1 finish, 1 usage; the role-only first event says nothing.
	if len(chunks) != 8 {
		t.Errorf("%d chunks, want 8", len(chunks))
	}
	if last := chunks[len(chunks)-1]; !reflect.DeepEqual(last.UsageMetadata, wantUsage) {
		t.Errorf("last chunk usage = %+v", last.UsageMetadata)
	}
	golden(t, "openai_chunks.json", chunks)
	golden(t, "openai_message.json", m)
}

func TestOpenAIToolCallArguments(t *testing.T) {
	tests := []struct {
		name        string
		args        []string // the pieces of call 0's arguments
		wantArgs    map[string]any
		wantInvalid bool
	}{
		{name: "split object", args: []string{`{"a":`, `1,"b":[true]`, `}`}, wantArgs: map[string]any{"a": float64(1), "b": []any{true}}},
		{name: "no arguments", args: []string{""}, wantArgs: map[string]any{}},
		{name: "truncated", args: []string{`{"city": "Par`}, wantInvalid: true},
		{name: "not an object", args: []string{`[1,`, `2]`}, wantInvalid: true},
		{name: "null", args: []string{`null`}, wantInvalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream := event(`[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c0","type":"function","function":{"name":"f","arguments":""}}]}}]`, "null")
			for _, a := range tt.args {
				piece, _ := json.Marshal(a)
				stream += event(`[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":`+string(piece)+`}}]}}]`, "null")
			}
			stream += event(`[{"index":0,"delta":{},"finish_reason":"tool_calls"}]`, "null") + "data: [DONE]\n\n"
			srv, _ := chatServer(t, sse(stream))
			m, err := newTestOpenAI(t, srv.URL, testKey).Stream(context.Background(), Request{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkAIMessage(t, m)
			if m.UsageMetadata != nil {
				t.Errorf("usage %+v from a stream without usage", m.UsageMetadata)
			}
			if tt.wantInvalid {
				if len(m.ToolCalls) != 0 || len(m.InvalidToolCalls) != 1 {
					t.Fatalf("tool calls %v, invalid %v", m.ToolCalls, m.InvalidToolCalls)
				}
				inv := m.InvalidToolCalls[0].(map[string]any)
				if inv["type"] != "invalid_tool_call" || inv["name"] != "f" || inv["id"] != "c0" ||
					inv["args"] != strings.Join(tt.args, "") || inv["error"] == "" {
					t.Errorf("invalid tool call = %v", inv)
				}
				return
			}
			want := []engine.ToolCall{{Name: "f", Args: tt.wantArgs, ID: "c0", Type: "tool_call"}}
			if !reflect.DeepEqual(m.ToolCalls, want) || len(m.InvalidToolCalls) != 0 {
				t.Errorf("tool calls %+v, invalid %v", m.ToolCalls, m.InvalidToolCalls)
			}
		})
	}
}

func TestOpenAIWithoutKey(t *testing.T) {
	srv, rec := chatServer(t, sse(event(`[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]`, "null")+"data: [DONE]\n\n"))
	m, err := newTestOpenAI(t, srv.URL+"/v1", "").Stream(context.Background(), Request{Messages: []engine.Message{engine.NewMessage(engine.MessageHuman, "x")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if req := rec.last(t); req.Auth != "" || req.Path != "/v1/chat/completions" {
		t.Errorf("Authorization %q, path %q", req.Auth, req.Path)
	}
	if m.Text() != "hi" || m.ResponseMetadata["finish_reason"] != "stop" || m.ID != "chatcmpl-t" {
		t.Errorf("message = %+v", m)
	}
	if o := newTestOpenAI(t, srv.URL, ""); o.Info() != (Info{Provider: "openai", Model: "gpt-4o-mini"}) {
		t.Errorf("Info() = %+v", o.Info())
	}
}
