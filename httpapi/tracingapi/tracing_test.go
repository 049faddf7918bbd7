package tracingapi_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/klauspost/compress/zstd"

	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/httpapitest"
	"github.com/jetgraph/jetgraph/httpapi/tracingapi"
)

// traceStack is a jetgraph process serving the tracing API over real HTTP.
type traceStack struct {
	URL string
	P   *platform.Platform
	Key string // x-api-key sent with every request
}

func startTracing(t testing.TB, tc platform.TracingConfig) *traceStack {
	t.Helper()
	return startTracingOn(t, tc, nil)
}

// startTracingOn is startTracing on the log l (nil: an embedded one of its own).
func startTracingOn(t testing.TB, tc platform.TracingConfig, l *eventlog.Log) *traceStack {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	p := platformtest.Start(t, platform.Config{Tracing: tc, Logger: quiet}, l)
	srv := httpapi.New(httpapi.Deps{Threads: p.Threads, Assistants: p.Assistants, Store: p.Store, Tracing: tracingapi.New(p.Tracing), Logger: quiet})
	ts := httpapitest.NewServer(t, httpapi.OpenAPI(), srv.Handler())
	return &traceStack{URL: ts.URL + "/tracing", P: p}
}

// send sends body with headers and returns the status and the decoded JSON answer.
func (s *traceStack) send(t testing.TB, method, path string, body io.Reader, header map[string]string) (int, any) {
	t.Helper()
	resp, raw := s.do(t, method, path, body, header)
	var v any
	if len(raw) > 0 && json.Unmarshal(raw, &v) != nil {
		t.Fatalf("%s %s: answer is not JSON: %q", method, path, raw)
	}
	return resp.StatusCode, v
}

// do sends a request to the tracing API with the stack's API key (unless header names one) and
// returns the answer with its body read.
func (s *traceStack) do(t testing.TB, method, path string, body io.Reader, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if _, given := header["X-Api-Key"]; s.Key != "" && !given {
		req.Header.Set("X-Api-Key", s.Key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, raw
}

// download GETs a path relative to the tracing base URL (as the clients join a presigned_url to
// it) and returns the content type and the body of a 200.
func (s *traceStack) download(t testing.TB, rel string) (string, []byte) {
	t.Helper()
	resp, raw := s.do(t, http.MethodGet, "/"+rel, nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %s", rel, resp.StatusCode, raw)
	}
	return resp.Header.Get("Content-Type"), raw
}

func (s *traceStack) json(t testing.TB, method, path string, body any) (int, any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	return s.send(t, method, path, r, map[string]string{"Content-Type": "application/json"})
}

// runWhen polls GET /runs/{id} until the run exists and ok accepts it.
func (s *traceStack) runWhen(t testing.TB, id string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var last any
	for time.Now().Before(deadline) {
		code, v := s.send(t, "GET", "/runs/"+id, nil, nil)
		last = v
		if m, _ := v.(map[string]any); code == 200 && (ok == nil || ok(m)) {
			return m
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("run %s never became as expected; last answer %v", id, last)
	return nil
}

func (s *traceStack) run(t testing.TB, id string) map[string]any {
	t.Helper()
	return s.runWhen(t, id, nil)
}

// tracePart is one multipart part.
type tracePart struct {
	name, ctype string
	data        []byte
	python      bool // announce the length with a Content-Length header, not length=N
}

func traceJSONPart(name string, v any) tracePart {
	raw, _ := json.Marshal(v)
	return tracePart{name: name, ctype: "application/json", data: raw}
}

// traceMultipartBody builds a body the way the clients do, and its Content-Type.
func traceMultipartBody(t testing.TB, parts ...tracePart) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"`, p.name))
		if p.python {
			h.Set("Content-Type", p.ctype)
			h.Set("Content-Length", fmt.Sprint(len(p.data)))
		} else {
			h.Set("Content-Type", fmt.Sprintf("%s; length=%d", p.ctype, len(p.data)))
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write(p.data)
	}
	w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

func traceGzip(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func traceZstd(b []byte) []byte {
	enc, _ := zstd.NewWriter(nil)
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// postMultipart sends parts, encoded as enc ("", "gzip" or "zstd").
func (s *traceStack) postMultipart(t testing.TB, enc string, parts ...tracePart) (int, any) {
	t.Helper()
	body, ctype := traceMultipartBody(t, parts...)
	h := map[string]string{"Content-Type": ctype}
	switch enc {
	case "gzip":
		body = traceGzip(body)
		h["Content-Encoding"] = "gzip"
	case "zstd":
		body = traceZstd(body)
		h["Content-Encoding"] = "zstd"
	}
	return s.send(t, "POST", "/runs/multipart", bytes.NewReader(body), h)
}

// newTracedRun returns the fields of a run under parent (nil: a root), as the clients post them.
func newTracedRun(parent map[string]any, name, runType string, start time.Time) map[string]any {
	id, _ := uuid.NewV7()
	r := map[string]any{"id": id.String(), "name": name, "run_type": runType,
		"start_time": start.UTC().Format("2006-01-02T15:04:05.000000Z")}
	seg := trace.FormatSegment(start, id.String())
	if parent == nil {
		r["trace_id"], r["dotted_order"] = id.String(), seg
	} else {
		r["trace_id"], r["parent_run_id"] = parent["trace_id"], parent["id"]
		r["dotted_order"] = parent["dotted_order"].(string) + "." + seg
	}
	return r
}

func tfield(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

func TestTracingInfo(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	s.Key = "" // no auth
	code, v := s.send(t, "GET", "/info", nil, nil)
	if code != 200 {
		t.Fatalf("GET /info = %d %v", code, v)
	}
	// Every batch_ingest_config key is read by the Python client's sender without a default.
	want := `{"batch_ingest_config":{"scale_down_nempty_trigger":4,"scale_up_nthreads_limit":32,"scale_up_qsize_trigger":200,` +
		`"size_limit":100,"size_limit_bytes":25165824,"use_multipart_endpoint":true},` +
		`"instance_flags":{"gzip_body_enabled":true,"zstd_compression_enabled":true},"jetgraph_version":"","version":"0.16.0"}`
	if got, _ := json.Marshal(v); string(got) != want {
		t.Errorf("GET /info = %s\nwant %s", got, want)
	}
}

func TestMultipartEveryPartKind(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	for _, enc := range []string{"", "gzip", "zstd"} {
		for _, python := range []bool{false, true} {
			t.Run(fmt.Sprintf("enc=%q,python=%v", enc, python), func(t *testing.T) {
				start := time.Now().Add(-time.Second)
				root := newTracedRun(nil, "chain", "chain", start)
				llm := newTracedRun(root, "model", "llm", start.Add(10*time.Millisecond))
				llm["session_name"], root["session_name"] = "parts", "parts"
				rid, lid := root["id"].(string), llm["id"].(string)
				fid := uuid.NewString()
				att := []byte("\x89PNG raw bytes")
				parts := []tracePart{
					traceJSONPart("post."+rid, root),
					traceJSONPart("post."+rid+".inputs", map[string]any{"question": "hi"}),
					traceJSONPart("post."+lid, llm),
					traceJSONPart("post."+lid+".inputs", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}}),
					traceJSONPart("post."+lid+".extra", map[string]any{"metadata": map[string]any{"ls_model_name": "gpt-4o-mini", "ls_provider": "openai"}}),
					traceJSONPart("post."+lid+".events", []any{map[string]any{"name": "new_token", "time": start.Add(200 * time.Millisecond).UTC().Format(time.RFC3339Nano)}}),
					traceJSONPart("post."+lid+".serialized", map[string]any{"name": "ChatOpenAI"}),
					traceJSONPart("patch."+lid, map[string]any{"id": lid, "trace_id": root["trace_id"], "dotted_order": llm["dotted_order"],
						"end_time": start.Add(time.Second).UTC().Format(time.RFC3339Nano)}),
					traceJSONPart("patch."+lid+".outputs", map[string]any{"content": "hello", "usage_metadata": map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}),
					traceJSONPart("patch."+rid, map[string]any{"id": rid, "trace_id": rid, "end_time": start.Add(2 * time.Second).UnixMilli()}),
					traceJSONPart("patch."+rid+".error", "boom"),
					{name: "attachment." + lid + ".picture", ctype: "image/png", data: att},
					traceJSONPart("feedback."+fid, map[string]any{"id": fid, "run_id": lid, "trace_id": rid, "key": "correct", "score": 1}),
				}
				for i := range parts {
					parts[i].python = python
				}
				code, v := s.postMultipart(t, enc, parts...)
				if code != 202 || tfield(v, "errors") != nil {
					t.Fatalf("multipart = %d %v", code, v)
				}
				got := s.runWhen(t, lid, func(r map[string]any) bool { return r["end_time"] != nil && r["s3_urls"] != nil })
				sum := sha256.Sum256(att)
				checks := map[string][2]any{
					"llm name":        {got["name"], "model"},
					"llm inputs":      {tfield(got, "inputs", "messages") != nil, true},
					"llm outputs":     {tfield(got, "outputs", "content"), "hello"},
					"llm tokens":      {got["total_tokens"], 15.0},
					"llm status":      {got["status"], "success"},
					"llm first tok":   {got["first_token_time"] != nil, true},
					"llm model":       {tfield(got, "extra", "metadata", "ls_model_name"), "gpt-4o-mini"},
					"attachment":      {tfield(got, "s3_urls", "attachment.picture", "digest"), "sha256:" + hex.EncodeToString(sum[:])},
					"attachment mime": {tfield(got, "s3_urls", "attachment.picture", "mime_type"), "image/png"},
					"attachment url":  {tfield(got, "s3_urls", "attachment.picture", "presigned_url"), "runs/" + lid + "/attachments/picture"},
					"no attachments":  {got["attachments"], nil}, // the Python client's read_run fails on one
				}
				r := s.runWhen(t, rid, func(r map[string]any) bool { return r["error"] != nil && r["total_tokens"] == 15.0 })
				checks["root error"] = [2]any{r["error"], "boom"}
				checks["root status"] = [2]any{r["status"], "error"}
				checks["root inputs"] = [2]any{tfield(r, "inputs", "question"), "hi"}
				for what, c := range checks {
					if c[0] != c[1] {
						t.Errorf("%s = %v, want %v", what, c[0], c[1])
					}
				}
				blob, err := s.P.Tracing.Blob(context.Background(), "sha256:"+hex.EncodeToString(sum[:]))
				if err != nil || !bytes.Equal(blob, att) {
					t.Errorf("attachment bytes in the object store = %q, %v", blob, err)
				}
				if ctype, body := s.download(t, "runs/"+lid+"/attachments/picture"); ctype != "image/png" || !bytes.Equal(body, att) {
					t.Errorf("attachment downloaded from its presigned_url = %s %q", ctype, body)
				}
				if code, v := s.send(t, "GET", "/runs/"+lid+"/attachments/nope", nil, nil); code != 404 {
					t.Errorf("an attachment the run does not have = %d %v, want 404", code, v)
				}
				if code, fb := s.send(t, "GET", "/feedback/"+fid, nil, nil); code != 200 || tfield(fb, "key") != "correct" ||
					tfield(fb, "run_id") != lid || tfield(fb, "trace_id") != rid || tfield(fb, "score") != 1.0 {
					t.Errorf("feedback kept = %d %v", code, fb)
				}
				if n := tfield(s.run(t, lid), "feedback_stats", "correct", "n"); n != 1.0 {
					t.Errorf("the llm run's feedback_stats.correct.n = %v", n)
				}
			})
		}
	}
}

func TestPostAndPatchInAnyOrder(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	start := time.Now().Add(-time.Minute)
	end := start.Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	outputs := map[string]any{"answer": 42.0}
	complete := func(r map[string]any) bool {
		return r["end_time"] != nil && tfield(r, "outputs", "answer") == 42.0 && tfield(r, "inputs", "q") == "x"
	}
	cases := map[string]func(run map[string]any){
		"merged post": func(run map[string]any) {
			run["end_time"], run["outputs"], run["inputs"] = end, outputs, map[string]any{"q": "x"}
			code, v := s.postMultipart(t, "", traceJSONPart("post."+run["id"].(string), run))
			if code != 202 {
				t.Fatalf("%d %v", code, v)
			}
		},
		"post then patch, two requests": func(run map[string]any) {
			id := run["id"].(string)
			s.postMultipart(t, "", traceJSONPart("post."+id, run), traceJSONPart("post."+id+".inputs", map[string]any{"q": "x"}))
			s.postMultipart(t, "gzip", traceJSONPart("patch."+id, map[string]any{"id": id, "trace_id": run["trace_id"], "end_time": end}),
				traceJSONPart("patch."+id+".outputs", outputs))
		},
		"patch first, then post": func(run map[string]any) {
			id := run["id"].(string)
			s.postMultipart(t, "zstd", traceJSONPart("patch."+id, map[string]any{"id": id, "trace_id": run["trace_id"], "end_time": end}),
				traceJSONPart("patch."+id+".outputs", outputs))
			if code, _ := s.send(t, "GET", "/runs/"+id, nil, nil); code != 404 {
				t.Errorf("a run known only from its patch answers %d, want 404 until its post", code)
			}
			run["end_time"] = nil // a post never overwrites what a patch set
			s.postMultipart(t, "", traceJSONPart("post."+id, run), traceJSONPart("post."+id+".inputs", map[string]any{"q": "x"}))
		},
		"patch then post in one request": func(run map[string]any) {
			id := run["id"].(string)
			s.postMultipart(t, "", traceJSONPart("patch."+id, map[string]any{"id": id, "trace_id": run["trace_id"], "end_time": end, "outputs": outputs}),
				traceJSONPart("post."+id, run), traceJSONPart("post."+id+".inputs", map[string]any{"q": "x"}))
		},
		"batch": func(run map[string]any) {
			run["inputs"] = map[string]any{"q": "x"}
			patch := map[string]any{"id": run["id"], "trace_id": run["trace_id"], "end_time": end, "outputs": outputs}
			code, v := s.json(t, "POST", "/runs/batch", map[string]any{"patch": []any{patch}, "post": []any{run}})
			if code != 202 {
				t.Fatalf("%d %v", code, v)
			}
		},
		"single post and patch": func(run map[string]any) {
			delete(run, "trace_id")
			delete(run, "dotted_order")
			run["inputs"] = map[string]any{"q": "x"}
			if code, v := s.json(t, "POST", "/runs", run); code != 202 {
				t.Fatalf("POST /runs = %d %v", code, v)
			}
			// No trace_id: the run must be known, which the patch waits for.
			if code, v := s.json(t, "PATCH", "/runs/"+run["id"].(string), map[string]any{"end_time": end, "outputs": outputs}); code != 202 {
				t.Fatalf("PATCH /runs = %d %v", code, v)
			}
		},
	}
	for name, send := range cases {
		t.Run(name, func(t *testing.T) {
			run := newTracedRun(nil, name, "chain", start)
			send(run)
			got := s.runWhen(t, run["id"].(string), complete)
			if got["status"] != "success" || got["name"] != name {
				t.Errorf("run = %v", got)
			}
			if lat, _ := got["latency"].(float64); lat < 1.49 || lat > 1.51 {
				t.Errorf("latency = %v, want 1.5", got["latency"])
			}
		})
	}
}

// Runs too large for one log message are kept in the object store, and a trace too large for
// one message is appended in several: both read back whole.
func TestLargeRunsAndTraces(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	start := time.Now().Add(-time.Minute)
	root := newTracedRun(nil, "big", "chain", start)
	parts := []tracePart{traceJSONPart("post."+root["id"].(string), root),
		traceJSONPart("post."+root["id"].(string)+".inputs", map[string]any{"blob": strings.Repeat("a", 700<<10)})}
	var children []string
	for i := range 10 {
		c := newTracedRun(root, fmt.Sprint("child-", i), "tool", start.Add(time.Duration(i+1)*time.Millisecond))
		children = append(children, c["id"].(string))
		parts = append(parts, traceJSONPart("post."+c["id"].(string), c),
			traceJSONPart("post."+c["id"].(string)+".outputs", map[string]any{"text": strings.Repeat("b", 300<<10)}))
	}
	if code, v := s.postMultipart(t, "gzip", parts...); code != 202 || tfield(v, "accepted") != 11.0 {
		t.Fatalf("multipart = %d %v", code, v)
	}
	if got := s.run(t, root["id"].(string)); len(tfield(got, "inputs", "blob").(string)) != 700<<10 {
		t.Errorf("offloaded inputs read back with %d bytes", len(tfield(got, "inputs", "blob").(string)))
	}
	for _, id := range children {
		if got := s.run(t, id); len(tfield(got, "outputs", "text").(string)) != 300<<10 {
			t.Errorf("child %s outputs cut", id)
		}
	}
	events, err := s.P.Log.Load(context.Background(), eventlog.Aggregate{Kind: "trace", Tenant: "default", ID: root["id"].(string)})
	if err != nil {
		t.Fatal(err)
	}
	seqs := map[uint64]bool{}
	blobs := 0
	for _, e := range events {
		seqs[e.Seq] = true
		if strings.HasPrefix(string(e.Data), `{"blob":`) {
			blobs++
		}
	}
	if len(events) != 11 || blobs != 1 || len(seqs) < 3 {
		t.Errorf("%d events in %d messages, %d in blobs; want 11 in several messages, the root's in a blob", len(events), len(seqs), blobs)
	}
}
