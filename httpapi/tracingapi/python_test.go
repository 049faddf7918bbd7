package tracingapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/platform"
)

// The Python langsmith client (0.11.1) as its users run it, recorded on the wire against a
// jetgraph server (testdata/langsmith-python/README.md says how): the tests below replay its
// requests byte for byte against a fresh server and check that every answer still carries what
// the recorded one did, and what the client's models require.

// pyExchange is one recorded request and its recorded answer.
type pyExchange struct {
	name           string // file prefix, "01"
	method, target string
	raw            []byte // the request as it was on the wire
	status         int
	body           any // the recorded answer, decoded
}

func loadPyExchanges(t *testing.T, dir string) []pyExchange {
	t.Helper()
	reqs, err := filepath.Glob(filepath.Join("testdata", "langsmith-python", dir, "*.request.http"))
	if err != nil || len(reqs) == 0 {
		t.Fatalf("no fixtures in %s: %v", dir, err)
	}
	slices.Sort(reqs)
	var out []pyExchange
	for _, path := range reqs {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		respRaw, err := os.ReadFile(strings.Replace(path, ".request.", ".response.", 1))
		if err != nil {
			t.Fatal(err)
		}
		status, body := readPyResponse(t, respRaw)
		out = append(out, pyExchange{name: strings.TrimSuffix(filepath.Base(path), ".request.http"),
			method: req.Method, target: req.RequestURI, raw: raw, status: status, body: body})
	}
	return out
}

// readPyResponse parses a raw HTTP answer: its status and its JSON body (nil when empty).
func readPyResponse(t *testing.T, raw []byte) (int, any) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("answer is not JSON: %q", data)
		}
	}
	return resp.StatusCode, v
}

// sendRaw writes a recorded request, unchanged, on a new connection to the server and reads the
// answer.
func (s *traceStack) sendRaw(t *testing.T, raw []byte) (int, any) {
	t.Helper()
	addr := strings.TrimSuffix(strings.TrimPrefix(s.URL, "http://"), "/tracing")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(raw); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	resp, err := http.ReadResponse(bufio.NewReader(io.TeeReader(conn, &buf)), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return readPyResponse(t, buf.Bytes())
}

// pyVaries are the answer fields that differ between the recording and a test server: the
// server's version, and when a project was created (on first use, by the server's clock).
func pyVaries(e pyExchange) map[string]bool {
	if strings.HasPrefix(e.target, "/tracing/sessions") {
		return map[string]bool{"start_time": true}
	}
	return map[string]bool{"jetgraph_version": true}
}

// pyCovers reports where live lacks something of recorded: every key recorded is there with an
// equal value, lists as long ("" when it covers).
func pyCovers(recorded, live any, at string, varies map[string]bool) string {
	switch r := recorded.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return at + ": not an object"
		}
		for k, rv := range r {
			if varies[k] {
				continue
			}
			lv, ok := l[k]
			if !ok {
				return at + "." + k + ": missing"
			}
			if d := pyCovers(rv, lv, at+"."+k, varies); d != "" {
				return d
			}
		}
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(r) {
			return fmt.Sprintf("%s: %d items, recorded %d", at, len(l), len(r))
		}
		for i := range r {
			if d := pyCovers(r[i], l[i], fmt.Sprintf("%s[%d]", at, i), varies); d != "" {
				return d
			}
		}
	default:
		if fmt.Sprint(recorded) != fmt.Sprint(live) {
			return fmt.Sprintf("%s: %v, recorded %v", at, live, recorded)
		}
	}
	return ""
}

// pyIsRead reports whether a request only reads (it may be sent again until the projection has
// caught up with what was ingested before it).
func pyIsRead(e pyExchange) bool {
	return e.method == http.MethodGet || strings.HasSuffix(strings.SplitN(e.target, "?", 2)[0], "/query")
}

// replayPy sends each exchange, reads again until the answer covers the recorded one, and checks
// it with the client's requirements.
func replayPy(t *testing.T, s *traceStack, exchanges []pyExchange) {
	t.Helper()
	for _, e := range exchanges {
		deadline := time.Now().Add(15 * time.Second)
		for {
			status, live := s.sendRaw(t, e.raw)
			diff := ""
			if status != e.status {
				diff = fmt.Sprintf("status %d, recorded %d", status, e.status)
			} else {
				diff = pyCovers(e.body, live, "answer", pyVaries(e))
			}
			if diff == "" {
				checkPyAnswer(t, e, live)
				break
			}
			if !pyIsRead(e) || time.Now().After(deadline) {
				t.Fatalf("%s %s %s: %s\nanswer: %v", e.name, e.method, e.target, diff, live)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// pyRunRequired are the fields the Python client's pydantic Run needs (no default), and
// pyRunNotNull those with a default that null would fail.
var (
	pyRunRequired = []string{"id", "name", "run_type", "start_time", "trace_id"}
	pyRunNotNull  = []string{"dotted_order", "inputs"}
	pyIngestKeys  = []string{"use_multipart_endpoint", "size_limit", "size_limit_bytes", "scale_up_qsize_trigger",
		"scale_up_nthreads_limit", "scale_down_nempty_trigger"}
)

// checkPyAnswer checks what the client requires of an answer, whatever was recorded.
func checkPyAnswer(t *testing.T, e pyExchange, live any) {
	t.Helper()
	path := strings.SplitN(e.target, "?", 2)[0]
	where := e.name + " " + e.method + " " + path
	var sent map[string]any
	if i := bytes.Index(e.raw, []byte("\r\n\r\n")); i >= 0 {
		_ = json.Unmarshal(e.raw[i+4:], &sent)
	}
	switch {
	case path == "/tracing/info":
		bic, _ := tfield(live, "batch_ingest_config").(map[string]any)
		for _, k := range pyIngestKeys {
			if _, ok := bic[k]; !ok {
				t.Errorf("%s: batch_ingest_config.%s missing: the client's sender dies without it", where, k)
			}
		}
		v, _ := tfield(live, "version").(string)
		if !versionAtLeast(v, 0, 16, 0) || tfield(live, "instance_flags", "zstd_compression_enabled") != true {
			t.Errorf("%s: version %q, instance_flags %v", where, v, tfield(live, "instance_flags"))
		}
	case path == "/tracing/runs/query":
		for _, r := range tfield(live, "runs").([]any) {
			checkPyRun(t, where, r)
			for _, f := range sent["select"].([]any) {
				if _, ok := r.(map[string]any)[f.(string)]; !ok && (f == "inputs" || f == "outputs") {
					t.Errorf("%s: selected %s missing from %v", where, f, r)
				}
			}
		}
	case strings.HasPrefix(path, "/tracing/runs/") && e.method == http.MethodGet:
		checkPyRun(t, where, live)
	case path == "/tracing/api/v2/runs/query":
		for _, r := range tfield(live, "items").([]any) {
			checkPySelects(t, where, r, sent["selects"].([]any))
		}
	case path == "/tracing/api/v2/traces/query":
		for _, tr := range tfield(live, "items").([]any) {
			checkPySelects(t, where, tfield(tr, "root_run"), sent["selects"].([]any))
			if tfield(tr, "trace_aggregates", "total_tokens") == nil {
				t.Errorf("%s: no trace_aggregates.total_tokens in %v", where, tr)
			}
		}
	case strings.HasPrefix(path, "/tracing/api/v2/") && e.method == http.MethodGet:
		// The selects of a v2 GET are repeated query parameters.
		var selects []any
		if _, query, ok := strings.Cut(e.target, "?"); ok {
			params, err := url.ParseQuery(query)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			for _, v := range params["selects"] {
				selects = append(selects, v)
			}
		}
		items, isList := tfield(live, "items").([]any)
		if !isList {
			items = []any{live}
		}
		for _, r := range items {
			checkPySelects(t, where, r, selects)
		}
	}
}

// versionAtLeast compares a "major.minor.patch" version as the clients do.
func versionAtLeast(v string, want ...int) bool {
	parts := strings.Split(v, ".")
	for i, w := range want {
		if i >= len(parts) {
			return false
		}
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return false
		}
		if n != w {
			return n > w
		}
	}
	return true
}

// checkPySelects checks that a v2 item has every field selected (all those the recording
// selects are kept by jetgraph).
func checkPySelects(t *testing.T, where string, item any, selects []any) {
	t.Helper()
	for _, f := range selects {
		if _, ok := item.(map[string]any)[strings.ToLower(f.(string))]; !ok {
			t.Errorf("%s: selected %s missing from %v", where, f, item)
		}
	}
}

func checkPyRun(t *testing.T, where string, r any) {
	t.Helper()
	m, _ := r.(map[string]any)
	for _, k := range pyRunRequired {
		if m[k] == nil {
			t.Errorf("%s: %s missing or null: the client's Run model requires it (%v)", where, k, m)
		}
	}
	for _, k := range pyRunNotNull {
		if v, ok := m[k]; ok && v == nil {
			t.Errorf("%s: %s is null: the client's Run model refuses it", where, k)
		}
	}
}

// pyNeedsFeedback reports whether an exchange is the client's POST /feedback (create_feedback
// without a trace_id), which TestPythonClientFeedbackReplay covers.
func pyNeedsFeedback(e pyExchange) bool { return e.target == "/tracing/feedback" }

// TestPythonClientReplay replays what the Python client sends and reads with the README's
// recipe: /info, a traceable trace through /runs/multipart (zstd, the client's default when
// zstandard is installed, as it is with the package; and uncompressed with a Content-Length per
// part), list_runs with select and with its default select, read_run, create_feedback with a
// trace_id (a feedback part through multipart), and the v2 reads: client.runs.query() with
// selects over two cursor pages, runs.retrieve(), traces.query(), traces.list_runs(),
// threads.query() and threads.list_traces().
func TestPythonClientReplay(t *testing.T) {
	for _, dir := range []string{"zstd", "plain"} {
		t.Run(dir, func(t *testing.T) {
			s := startTracing(t, platform.TracingConfig{})
			var exchanges []pyExchange
			for _, e := range loadPyExchanges(t, dir) {
				if !pyNeedsFeedback(e) {
					exchanges = append(exchanges, e)
				}
			}
			replayPy(t, s, exchanges)
		})
	}
}

// TestPythonClientFeedbackReplay replays the client's create_feedback without a trace_id, a
// POST /feedback, and reads the feedback back. Its fixture's recorded answer is the 404 of the
// server it was recorded against, before feedback was served, so it is checked here rather
// than compared by replayPy.
func TestPythonClientFeedbackReplay(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	exchanges := loadPyExchanges(t, "zstd")
	i := slices.IndexFunc(exchanges, pyNeedsFeedback)
	if i < 0 {
		t.Fatal("no POST /feedback in the fixtures")
	}
	replayPy(t, s, exchanges[:i])
	if status, v := s.sendRaw(t, exchanges[i].raw); status/100 != 2 {
		t.Fatalf("POST /feedback = %d %v: the client raises on anything but 2xx", status, v)
	}
	sent := exchanges[i].raw
	var body struct {
		ID    string `json:"id"`
		RunID string `json:"run_id"`
		Key   string `json:"key"`
	}
	if err := json.Unmarshal(sent[bytes.Index(sent, []byte("\r\n\r\n"))+4:], &body); err != nil {
		t.Fatalf("fixture body: %v", err)
	}
	status, v := s.json(t, http.MethodGet, "/feedback/"+body.ID, nil)
	fb, _ := v.(map[string]any)
	if status != http.StatusOK || fb["run_id"] != body.RunID || fb["key"] != body.Key {
		t.Errorf("GET /feedback/%s = %d %v: want the posted feedback", body.ID, status, v)
	}
}
