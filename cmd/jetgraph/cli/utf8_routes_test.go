package cli

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestInvalidUTF8IsRefusedOnEveryRoute sends text with a byte that is not UTF-8 to a route of
// each part of the server (runtime, control plane, A2A, MCP, tracing: plain, gzip, multipart):
// each answers the one 422, none stores U+FFFD instead. A multipart attachment is bytes, not
// text: it is taken as it is.
func TestInvalidUTF8IsRefusedOnEveryRoute(t *testing.T) {
	if testing.Short() {
		t.Skip("serves the whole platform")
	}
	const admin = "invalid-utf8-admin-key-0123456789"
	t.Setenv(AdminKeyEnv, admin)
	s := startServe(t, Program{}, t.TempDir())
	_, th := send(t, "POST", s.url+"/threads", "", `{}`)
	thread := field(th, "thread_id").(string)
	_, as := send(t, "POST", s.url+"/assistants", "", `{"graph_id": "echo"}`)
	assistant := field(as, "assistant_id").(string)
	const bad = "caf\xe9 \xff" // Latin-1, and a byte no encoding has
	const runID, traceID = "0190a8c2-7f00-7000-8000-000000000001", "0190a8c2-7f00-7000-8000-000000000001"
	traceRun := `{"id": "` + runID + `", "trace_id": "` + traceID + `", "dotted_order": "20240101T000000000000Z` + runID +
		`", "name": "` + bad + `", "run_type": "chain", "start_time": "2024-01-01T00:00:00Z", "inputs": {}}`
	multipart := func(part, ctype, data string) (string, string) {
		const boundary = "jetgraph-utf8-boundary"
		body := "--" + boundary + "\r\nContent-Disposition: form-data; name=\"post." + runID + "\"\r\nContent-Type: application/json\r\n\r\n" +
			strings.Replace(traceRun, bad, "ok", 1) + "\r\n--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + part +
			"\"\r\nContent-Type: " + ctype + "\r\n\r\n" + data + "\r\n--" + boundary + "--\r\n"
		return body, "multipart/form-data; boundary=" + boundary
	}
	badPart, badPartType := multipart("post."+runID+".outputs", "application/json", `{"text": "`+bad+`"}`)
	binPart, binPartType := multipart("attachment."+runID+".blob", "application/octet-stream", bad)
	for _, c := range []struct {
		name, path, key, ctype, encoding, body string
		want                                   int
	}{
		{"runtime", "/threads", "", "application/json", "", `{"metadata": {"note": "` + bad + `"}}`, 422},
		{"runtime, text/plain", "/assistants", "", "text/plain", "", `{"graph_id": "echo", "name": "` + bad + `"}`, 422},
		{"thread commands", "/threads/" + thread + "/commands", "", "application/json", "", `{"id": 1, "method": "state.get", "params": {"x": "` + bad + `"}}`, 422},
		{"control plane", "/v2/deployments", admin, "application/json", "", `{"name": "` + bad + `", "source": "git_host"}`, 422},
		{"A2A", "/a2a/" + assistant, "", "application/json", "", `{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {"role": "user", "messageId": "m1", "kind": "message", "parts": [{"kind": "text", "text": "` + bad + `"}]}}}`, 422},
		{"MCP", "/mcp", "", "application/json", "", `{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"messages": "` + bad + `"}}}`, 422},
		{"tracing, one run", "/tracing/runs", "", "application/json", "", traceRun, 422},
		{"tracing, batch", "/tracing/runs/batch", "", "application/json", "", `{"post": [` + traceRun + `]}`, 422},
		{"tracing, batch gzipped", "/tracing/runs/batch", "", "application/json", "gzip", `{"post": [` + traceRun + `]}`, 422},
		{"tracing, project", "/tracing/sessions", "", "application/json", "", `{"name": "` + bad + `"}`, 422},
		{"tracing, a multipart JSON part", "/tracing/runs/multipart", "", badPartType, "", badPart, 422},
		{"tracing, a multipart attachment is bytes", "/tracing/runs/multipart", "", binPartType, "", binPart, 202},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := []byte(c.body)
			if c.encoding == "gzip" {
				var buf bytes.Buffer
				zw := gzip.NewWriter(&buf)
				_, _ = zw.Write(body)
				_ = zw.Close()
				body = buf.Bytes()
			}
			req, err := http.NewRequest("POST", s.url+c.path, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", c.ctype)
			req.Header.Set("Accept", "application/json, text/event-stream")
			if c.encoding != "" {
				req.Header.Set("Content-Encoding", c.encoding)
			}
			if c.key != "" {
				req.Header.Set("X-Api-Key", c.key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.want {
				t.Fatalf("%d, want %d: %.400s", resp.StatusCode, c.want, raw)
			}
			if c.want == 422 && !strings.Contains(string(raw), "Request body is not valid UTF-8") {
				t.Errorf("the 422 does not say why: %.400s", raw)
			}
		})
	}
}
