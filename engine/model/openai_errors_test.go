package model

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
)

func TestOpenAIHTTPErrors(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   engine.Kind
	}{
		{401, `{"error":{"message":"Incorrect API key provided: ` + testKey + `.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, engine.Invalid},
		{400, `{"error":{"message":"Invalid value for 'model'.","type":"invalid_request_error","param":"model","code":null}}`, engine.Invalid},
		{404, `{"error":{"message":"The model does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, engine.Invalid},
		{429, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, engine.Unavailable},
		{500, `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`, engine.Unavailable},
		{503, `upstream unavailable`, engine.Unavailable},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv, rec := chatServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			})
			_, err := newTestOpenAI(t, srv.URL, testKey).Stream(context.Background(), historyRequest(), nil)
			if err == nil {
				t.Fatal("no error")
			}
			if got := engine.KindOf(err); got != tt.want {
				t.Errorf("kind = %v, want %v (%v)", got, tt.want, err)
			}
			text := err.Error()
			if strings.Contains(text, testKey) {
				t.Errorf("the error shows the API key: %s", text)
			}
			if !strings.HasPrefix(text, "model.openai: ") || !strings.Contains(text, http.StatusText(tt.status)) || !strings.Contains(text, srv.URL) {
				t.Errorf("error text %q lacks the operation, the status or the server's URL", text)
			}
			rec.mu.Lock()
			n := len(rec.reqs)
			rec.mu.Unlock()
			if n != 1 {
				t.Errorf("%d requests, want 1 (no retries)", n)
			}
		})
	}
}

func TestOpenAIBrokenStreams(t *testing.T) {
	closed, _ := chatServer(t, sse(""))
	closedURL := closed.URL
	closed.Close()
	tests := []struct {
		name    string
		respond func(w http.ResponseWriter, r *http.Request) // nil: no server listens
	}{
		{name: "connection refused"},
		{name: "error event", respond: sse(event(`[{"index":0,"delta":{"content":"a"}}]`, "null") +
			`data: {"error":{"message":"overloaded, key ` + testKey + `"}}` + "\n\n")},
		{name: "malformed event", respond: sse("data: {not json\n\n")},
		{name: "empty stream", respond: sse("data: [DONE]\n\n")},
		{name: "hang-up mid-stream", respond: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, event(`[{"index":0,"delta":{"content":"a"}}]`, "null"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := closedURL
			if tt.respond != nil {
				srv, _ := chatServer(t, tt.respond)
				url = srv.URL
			}
			_, err := newTestOpenAI(t, url, testKey).Stream(context.Background(), Request{}, nil)
			if engine.KindOf(err) != engine.Unavailable {
				t.Fatalf("err = %v (kind %v), want Unavailable", err, engine.KindOf(err))
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("the error shows the API key: %v", err)
			}
		})
	}
}

func TestOpenAICancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv, _ := chatServer(t, func(w http.ResponseWriter, r *http.Request) {
		sse(event(`[{"index":0,"delta":{"content":"a"}}]`, "null"))(w, r)
		select { // hold the stream open until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	_, err := newTestOpenAI(t, srv.URL, testKey).Stream(ctx, Request{}, func(engine.MessageChunk) error {
		n++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Errorf("err = %v after %d chunks, want context.Canceled after 1", err, n)
	}
}

func TestOpenAIOnChunkError(t *testing.T) {
	srv, _ := chatServer(t, sse(event(`[{"index":0,"delta":{"content":"a"}}]`, "null")+
		event(`[{"index":0,"delta":{"content":"b"}}]`, "null")+"data: [DONE]\n\n"))
	stop := errors.New("stop")
	_, err := newTestOpenAI(t, srv.URL, testKey).Stream(context.Background(), Request{}, func(engine.MessageChunk) error { return stop })
	if err != stop {
		t.Errorf("err = %v, want the callback's error", err)
	}
}

func TestOpenAIRejectsUnsendableMessages(t *testing.T) {
	srv, rec := chatServer(t, sse("data: [DONE]\n\n"))
	o := newTestOpenAI(t, srv.URL, testKey)
	bad := engine.NewMessage(engine.MessageHuman, "")
	bad.Content = []any{map[string]any{"type": "audio", "data": "..."}}
	for _, m := range []engine.Message{engine.NewMessage("remove", ""), bad} {
		_, err := o.Stream(context.Background(), Request{Messages: []engine.Message{m}}, nil)
		if engine.KindOf(err) != engine.Invalid {
			t.Errorf("message %+v: err = %v, want Invalid", m, err)
		}
	}
	if len(rec.reqs) != 0 {
		t.Error("an unsendable conversation reached the server")
	}
}

func TestNewOpenAIValidates(t *testing.T) {
	negative := -1
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"local server without key", Config{BaseURL: "http://localhost:11434/v1", Model: "llama3"}, true},
		{"openai with key", Config{APIKey: testKey, Model: "gpt-4o-mini"}, true},
		{"openai without key", Config{Model: "gpt-4o-mini"}, false},
		{"no model", Config{BaseURL: "http://localhost:8000/v1", APIKey: testKey}, false},
		{"bad base URL", Config{BaseURL: "localhost:8000", APIKey: testKey, Model: "m"}, false},
		{"negative retries", Config{APIKey: testKey, Model: "m", MaxRetries: &negative}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewOpenAI(tt.cfg)
			if tt.ok != (err == nil) {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && (engine.KindOf(err) != engine.Invalid || strings.Contains(err.Error(), testKey)) {
				t.Errorf("err = %v, want Invalid without the key", err)
			}
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want Config
	}{
		{map[string]string{}, Config{Model: "gpt-4o-mini"}},
		{map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://h/v1", "OPENAI_MODEL": "o"},
			Config{APIKey: "k", BaseURL: "http://h/v1", Model: "o"}},
		{map[string]string{"OPENAI_MODEL": "o", "JETGRAPH_MODEL": "j"}, Config{Model: "j"}},
	}
	for _, tt := range tests {
		got := ConfigFromEnv(func(k string) string { return tt.env[k] })
		if got.APIKey != tt.want.APIKey || got.BaseURL != tt.want.BaseURL || got.Model != tt.want.Model {
			t.Errorf("ConfigFromEnv(%v) = %+v, want %+v", tt.env, got, tt.want)
		}
	}
}

// TestOpenAIUnreachableNamesItsURL checks that a model server nothing listens on is named in the
// error a client sees (its detail), without the credentials its URL may carry.
func TestOpenAIUnreachableNamesItsURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	want := "http://" + host + "/v1"
	for _, base := range []string{
		"http://" + host + "/v1",
		"http://someone:hunter2-pw@" + host + "/v1",
		"http://" + host + "/v1?api_key=query-secret-42",
	} {
		t.Run(base, func(t *testing.T) {
			_, err := newTestOpenAI(t, base, testKey).Stream(context.Background(), Request{}, nil)
			var e *engine.Error
			if !errors.As(err, &e) || e.Kind != engine.Unavailable {
				t.Fatalf("err = %v, want an Unavailable engine error", err)
			}
			if !strings.Contains(e.Detail, "the model server at "+want+" could not be reached") {
				t.Errorf("detail %q does not name %s", e.Detail, want)
			}
			for _, secret := range []string{testKey, "hunter2-pw", "query-secret-42"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows a credential %q: %v", secret, err)
				}
			}
		})
	}
}
