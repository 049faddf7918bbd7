package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// What /mcp answers a POST that is no request the server handles: a JSON-RPC error object, as
// an MCP client reads errors, never the SDK transport's plain text. A body that is not JSON is
// a parse error (-32700, HTTP 400), one that is no JSON-RPC message an invalid request
// (-32600, HTTP 400), a request for a method the server does not answer method not found
// (-32601, in a 200 answer like every JSON-RPC response; a notification of one is accepted and
// dropped, as JSON-RPC says). Whatever else the transport refuses (its content type, Accept,
// size checks) keeps its HTTP status and gets a JSON-RPC error body too.

// mcpMaxBody bounds the body of an MCP request: the runs' input limit and room for the rest.
const mcpMaxBody = 8 << 20

// mcpMethods are the methods /mcp answers: MCP's client-to-server requests and notifications
// that the SDK's server serves.
var mcpMethods = map[string]bool{
	"initialize": true, "ping": true,
	"tools/list": true, "tools/call": true,
	"prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
	"logging/setLevel": true, "completion/complete": true,
	"notifications/initialized": true, "notifications/cancelled": true,
	"notifications/progress": true, "notifications/roots/list_changed": true,
}

// mcpRPCError is a JSON-RPC error response.
type mcpRPCError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   jsonrpc.Error   `json:"error"`
}

// writeMCPError writes a JSON-RPC error response with HTTP status; id is null when unknown.
func writeMCPError(w http.ResponseWriter, status int, id json.RawMessage, code int64, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(mcpRPCError{JSONRPC: "2.0", ID: id, Error: jsonrpc.Error{Code: code, Message: msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("X-Content-Type-Options")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// mcpGuard answers, before the SDK's transport, the POSTs it would refuse in plain text, and
// turns the plain-text refusals it still makes into JSON-RPC errors.
func mcpGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, mcpMaxBody+1))
		if err != nil {
			writeMCPError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, "Parse error: the request body could not be read")
			return
		}
		if len(body) > mcpMaxBody {
			writeMCPError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("Invalid Request: the body is over the limit of %d MiB", mcpMaxBody>>20))
			return
		}
		if status, id, code, msg := checkMCPMessage(body); code != 0 {
			writeMCPError(w, status, id, code, msg)
			return
		} else if status == http.StatusAccepted {
			w.WriteHeader(status)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		jw := &jsonErrorWriter{ResponseWriter: w}
		next.ServeHTTP(jw, r)
		jw.finish()
	})
}

// checkMCPMessage checks a POST body: a JSON-RPC message (or a batch of them) for a method the
// server answers. It returns the error to answer (code 0: none), or status 202 for a
// notification of an unknown method, which is dropped.
func checkMCPMessage(body []byte) (status int, id json.RawMessage, code int64, msg string) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || !json.Valid(body) {
		return http.StatusBadRequest, nil, jsonrpc.CodeParseError, "Parse error: the body is not valid JSON"
	}
	if body[0] == '[' {
		var batch []json.RawMessage
		_ = json.Unmarshal(body, &batch)
		if len(batch) == 0 {
			return http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: an empty batch"
		}
		for _, m := range batch {
			if m = bytes.TrimSpace(m); len(m) == 0 || m[0] != '{' {
				return http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: a batch holds JSON-RPC message objects"
			}
		}
		return 0, nil, 0, ""
	}
	var m struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if body[0] != '{' || json.Unmarshal(body, &m) != nil {
		return http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: the body must be a JSON-RPC message object"
	}
	if raw := strings.TrimSpace(string(m.ID)); raw != "" && raw != "null" && raw[0] != '"' && !isJSONNumber(raw) {
		return http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: id must be a string or a number"
	}
	if string(m.JSONRPC) != `"2.0"` {
		return http.StatusBadRequest, m.ID, jsonrpc.CodeInvalidRequest, `Invalid Request: jsonrpc must be "2.0"`
	}
	if len(m.Method) == 0 {
		if len(m.ID) > 0 && (len(m.Result) > 0 || len(m.Error) > 0) {
			return 0, nil, 0, "" // a response to the server: the SDK's
		}
		return http.StatusBadRequest, m.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: method must be a string"
	}
	var method string
	if json.Unmarshal(m.Method, &method) != nil || method == "" {
		return http.StatusBadRequest, m.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: method must be a string"
	}
	if mcpMethods[method] {
		return 0, nil, 0, ""
	}
	if len(m.ID) == 0 {
		return http.StatusAccepted, nil, 0, ""
	}
	return http.StatusOK, m.ID, jsonrpc.CodeMethodNotFound, fmt.Sprintf("Method not found: %q", method)
}

// isJSONNumber reports whether raw is a JSON number.
func isJSONNumber(raw string) bool {
	var n json.Number
	return json.Unmarshal([]byte(raw), &n) == nil
}

// jsonErrorWriter passes a response through, except a plain-text error (http.Error's), which
// it holds back and writes as a JSON-RPC error with the same status.
type jsonErrorWriter struct {
	http.ResponseWriter
	status int // the held-back error's status, 0 when passing through
	text   bytes.Buffer
}

// WriteHeader holds back a plain-text error status.
func (w *jsonErrorWriter) WriteHeader(status int) {
	if status >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write holds back the text of a held-back error.
func (w *jsonErrorWriter) Write(b []byte) (int, error) {
	if w.status != 0 {
		return w.text.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the wrapped writer (to flush).
func (w *jsonErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the held-back error, if any.
func (w *jsonErrorWriter) finish() {
	if w.status == 0 {
		return
	}
	code := int64(jsonrpc.CodeInvalidRequest)
	if w.status >= 500 {
		code = jsonrpc.CodeInternalError
	}
	writeMCPError(w.ResponseWriter, w.status, nil, code, strings.TrimSpace(w.text.String()))
}
