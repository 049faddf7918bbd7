package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestMCPErrorsAreJSONRPC: whatever /mcp refuses in a POST is answered with a JSON-RPC error
// object (JSON, with the request's id when it could be read): a body that is not JSON, one that
// is no JSON-RPC message, an unknown method, and the transport's own refusals; a notification
// of an unknown method is accepted without an answer.
func TestMCPErrorsAreJSONRPC(t *testing.T) {
	s := startStack(t)
	cases := []struct {
		name, body, ctype string
		status            int
		code              int
		id                string
	}{
		{"not JSON", `{"jsonrpc":`, "application/json", 400, -32700, "null"},
		{"empty body", ``, "application/json", 400, -32700, "null"},
		{"an empty batch", `[]`, "application/json", 400, -32600, "null"},
		{"a batch of numbers", `[1]`, "application/json", 400, -32600, "null"},
		{"a string", `"ping"`, "application/json", 400, -32600, "null"},
		{"no jsonrpc", `{"id":1,"method":"ping"}`, "application/json", 400, -32600, "1"},
		{"an object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, "application/json", 400, -32600, "null"},
		{"no method", `{"jsonrpc":"2.0","id":"a"}`, "application/json", 400, -32600, `"a"`},
		{"unknown method", `{"jsonrpc":"2.0","id":7,"method":"tools/frobnicate"}`, "application/json", 200, -32601, "7"},
		{"wrong content type", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "text/plain", 415, -32600, "null"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", s.URL+"/mcp", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.ctype)
			req.Header.Set("Accept", "application/json, text/event-stream")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			var answer struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if res.StatusCode != tc.status || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") ||
				json.Unmarshal(raw, &answer) != nil {
				t.Fatalf("status %d (%s): %s, want %d with a JSON-RPC error", res.StatusCode, res.Header.Get("Content-Type"), raw, tc.status)
			}
			if answer.JSONRPC != "2.0" || answer.Error == nil || answer.Error.Code != tc.code || answer.Error.Message == "" || string(answer.ID) != tc.id {
				t.Errorf("answer %s, want error %d with id %s", raw, tc.code, tc.id)
			}
		})
	}
	res, err := http.Post(s.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/frobnicated"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		t.Errorf("a notification of an unknown method: %d, want 202", res.StatusCode)
	}
}
