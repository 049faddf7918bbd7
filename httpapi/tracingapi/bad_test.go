package tracingapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/tracing"
)

// traceProblems returns the locations of the problems of an answer: "errors" of a 202, "detail" of
// a 422.
func traceProblems(v any) []string {
	list, _ := tfield(v, "errors").([]any)
	if d, ok := tfield(v, "detail").([]any); ok {
		list = d
	}
	var out []string
	for _, p := range list {
		raw, _ := json.Marshal(tfield(p, "loc"))
		out = append(out, string(raw))
	}
	return out
}

func hasTraceProblem(v any, loc string) bool {
	for _, p := range traceProblems(v) {
		if strings.HasPrefix(p, loc) {
			return true
		}
	}
	return false
}

func TestIngestBadRunsAreRefusedAndTheRestKept(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	start := time.Now().Add(-time.Minute)
	good := newTracedRun(nil, "good", "chain", start)
	noIDs := newTracedRun(nil, "no ids", "chain", start)
	delete(noIDs, "trace_id")
	delete(noIDs, "dotted_order")
	badField := newTracedRun(nil, "bad field", "chain", start)
	badType := newTracedRun(nil, "bad type", "nonsense", start)
	orphan := uuid.NewString() // a patch of a run nobody posted, without its trace_id
	gid, nid, bid, tid := good["id"].(string), noIDs["id"].(string), badField["id"].(string), badType["id"].(string)

	code, v := s.postMultipart(t, "",
		traceJSONPart("post."+gid, good),
		traceJSONPart("post."+nid, noIDs),
		traceJSONPart("post."+bid, badField),
		tracePart{name: "post." + bid + ".inputs", ctype: "application/json", data: []byte(`{"not json`)},
		traceJSONPart("post."+tid, badType),
		traceJSONPart("patch."+orphan, map[string]any{"id": orphan, "end_time": start.UnixMilli()}),
		tracePart{name: "post." + gid + "x", ctype: "application/json", data: []byte(`{}`)},
		tracePart{name: "mystery", ctype: "application/json", data: []byte(`{}`)},
	)
	if code != 202 || tfield(v, "accepted") != 1.0 {
		t.Fatalf("multipart with one good run = %d %v, want 202 accepting 1", code, v)
	}
	for _, loc := range []string{
		`["body","post.` + nid + `","trace_id"]`, `["body","post.` + nid + `","dotted_order"]`,
		`["body","post.` + bid + `.inputs"]`, `["body","post.` + tid + `","run_type"]`,
		`["body","patch.` + orphan + `","trace_id"]`, `["body","post.` + gid + `x"`, `["body","mystery"]`,
	} {
		if !hasTraceProblem(v, loc) {
			t.Errorf("no problem at %s in %v", loc, traceProblems(v))
		}
	}
	s.run(t, gid)
	for _, id := range []string{nid, bid, tid} {
		if code, _ := s.send(t, "GET", "/runs/"+id, nil, nil); code != 404 {
			t.Errorf("refused run %s answers %d", id, code)
		}
	}

	// Nothing valid at all: a 422 listing every problem.
	code, v = s.postMultipart(t, "", tracePart{name: "post." + nid, ctype: "application/json", data: []byte("nope")})
	if code != 422 || !hasTraceProblem(v, `["body","post.`+nid+`"]`) {
		t.Errorf("multipart with nothing valid = %d %v, want 422", code, v)
	}
	code, v = s.json(t, "POST", "/runs/batch", map[string]any{"post": []any{"not a run", map[string]any{"id": "x"}}})
	if code != 422 || !hasTraceProblem(v, `["body","post",0]`) || !hasTraceProblem(v, `["body","post",1,"id"]`) {
		t.Errorf("batch with nothing valid = %d %v", code, v)
	}
	code, v = s.json(t, "PATCH", "/runs/"+orphan, map[string]any{"end_time": start.UnixMilli()})
	if code != 422 || !hasTraceProblem(v, `["body","trace_id"]`) {
		t.Errorf("PATCH of an unknown run without its trace = %d %v", code, v)
	}
	// With its trace, a patch before its post is kept, not refused.
	code, v = s.json(t, "PATCH", "/runs/"+orphan, map[string]any{"trace_id": orphan, "end_time": start.UnixMilli()})
	if code != 202 {
		t.Errorf("PATCH of a run not yet posted, with its trace = %d %v", code, v)
	}
}

func TestIngestBadBodies(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{Service: tracing.Config{SizeLimit: 64 << 10}})
	limit := int64(64<<10 + 8<<10)
	start := time.Now().Add(-time.Minute)
	run := newTracedRun(nil, "r", "chain", start)
	id := run["id"].(string)
	body, ctype := traceMultipartBody(t, traceJSONPart("post."+id, run))
	mp := map[string]string{"Content-Type": ctype}
	big := strings.Repeat("x", int(limit))
	bigBody, bigType := traceMultipartBody(t, traceJSONPart("post."+id, run), traceJSONPart("post."+id+".inputs", map[string]any{"big": big}))
	// A bomb: 64 MiB of JSON blanks, a few KiB compressed.
	bomb, bombType := traceMultipartBody(t, tracePart{name: "post." + id + ".inputs", ctype: "application/json", data: bytes.Repeat([]byte(" "), 64<<20)})

	cases := []struct {
		name   string
		body   []byte
		header map[string]string
		code   int
		detail string
	}{
		{"over the limit", bigBody, map[string]string{"Content-Type": bigType}, 413, "Request body over"},
		{"over the limit, chunked", bigBody, map[string]string{"Content-Type": bigType, "X-Chunked": "1"}, 413, "Request body over"},
		{"gzip bomb", traceGzip(bomb), map[string]string{"Content-Type": bombType, "Content-Encoding": "gzip"}, 413, "once decompressed"},
		{"zstd bomb", traceZstd(bomb), map[string]string{"Content-Type": bombType, "Content-Encoding": "zstd"}, 413, "once decompressed"},
		{"corrupt gzip", []byte("not gzip at all"), map[string]string{"Content-Type": ctype, "Content-Encoding": "gzip"}, 400, "gzip"},
		{"truncated zstd", traceZstd(body)[:20], map[string]string{"Content-Type": ctype, "Content-Encoding": "zstd"}, 400, "multipart"},
		{"unknown encoding", body, map[string]string{"Content-Type": ctype, "Content-Encoding": "br"}, 400, "Content-Encoding"},
		{"not multipart", []byte(`{}`), map[string]string{"Content-Type": "application/json"}, 400, "multipart/form-data"},
		{"truncated multipart", body[:len(body)-10], mp, 400, "multipart"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r io.Reader = bytes.NewReader(c.body)
			if c.header["X-Chunked"] != "" {
				r = io.MultiReader(r) // no length known: sent chunked
			}
			start := time.Now()
			code, v := s.send(t, "POST", "/runs/multipart", r, c.header)
			if code != c.code || !strings.Contains(fmt.Sprint(tfield(v, "detail")), c.detail) {
				t.Errorf("%s = %d %v, want %d mentioning %q", c.name, code, v, c.code, c.detail)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%s took %s", c.name, d)
			}
		})
	}
	if code, _ := s.send(t, "GET", "/runs/"+id, nil, nil); code != 404 {
		t.Errorf("a run of a refused request was stored (%d)", code)
	}
	// The same run in a good request goes through.
	if code, v := s.postMultipart(t, "gzip", traceJSONPart("post."+id, run)); code != 202 {
		t.Fatalf("good request = %d %v", code, v)
	}
	s.run(t, id)
}

func TestTracingAPIKeys(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{Service: tracing.Config{APIKeys: map[string]string{"ka": "acme", "kb": "bravo"},
		ProcessKeys: map[string]string{"kh": engine.DefaultTenant}}})
	run := newTracedRun(nil, "secret", "chain", time.Now())
	id := run["id"].(string)
	s.Key = "ka"
	if code, v := s.postMultipart(t, "", traceJSONPart("post."+id, run)); code != 202 {
		t.Fatalf("%d %v", code, v)
	}
	s.run(t, id)
	// A graph host's key (ProcessKeys) acts for its tenant, the default one, beside APIKeys.
	for key, want := range map[string]int{"kb": 404, "": 404, "undefined": 404, "wrong": 401, "ka": 200, "kh": 404} {
		code, _ := s.send(t, "GET", "/runs/"+id, nil, map[string]string{"X-Api-Key": key})
		if code != want {
			t.Errorf("key %q: GET = %d, want %d", key, code, want)
		}
	}
}

// TestLongProjectNamesAreRefused: a project name over MaxProjectNameBytes (the trace projection
// indexes projects by name; a 40 KB one halted it) is refused wherever a client gives one — a
// session created or renamed, a traced run's session_name — and the projection goes on.
func TestLongProjectNamesAreRefused(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	long := strings.Repeat("x", engine.MaxProjectNameBytes+1)
	code, v := s.json(t, "POST", "/sessions", map[string]any{"name": long})
	if code != 422 || !hasTraceProblem(v, `["body","name"]`) {
		t.Fatalf("POST /sessions with a long name: %d %v", code, v)
	}
	code, p := s.json(t, "POST", "/sessions", map[string]any{"name": strings.Repeat("y", engine.MaxProjectNameBytes)})
	if code != 200 && code != 201 {
		t.Fatalf("POST /sessions at the limit: %d %v", code, p)
	}
	code, v = s.json(t, "PATCH", "/sessions/"+tfield(p, "id").(string), map[string]any{"name": long})
	if code != 422 || !hasTraceProblem(v, `["body","name"]`) {
		t.Fatalf("PATCH /sessions with a long name: %d %v", code, v)
	}
	run := newTracedRun(nil, "r", "chain", time.Now().Add(-time.Minute))
	run["session_name"] = strings.Repeat("z", 40000)
	code, v = s.postMultipart(t, "", traceJSONPart("post."+run["id"].(string), run))
	if !strings.Contains(fmt.Sprint(v), "MaxProjectNameBytes") {
		t.Fatalf("traced run with a long session_name: %d %.300v", code, v)
	}
	s.postTrace(t, "after")
	if code, v := s.json(t, "POST", "/sessions", map[string]any{"name": "still-served"}); code != 200 && code != 201 {
		t.Fatalf("the trace projection stopped: %d %v", code, v)
	}
	if err := s.P.TraceProjector.Halted(); err != nil {
		t.Fatal(err)
	}
}

// issuedKeys is a tracing.KeyResolver of the keys another part of jetgraph issued (the control
// plane's, in serve): tenants' keys, a revoked one, and the form of its keys ("jgk_").
type issuedKeys map[string]string

func (k issuedKeys) ResolveKey(_ context.Context, key, tenantHeader string) (string, bool, error) {
	t, ok := k[key]
	switch {
	case t == "revoked":
		return "", false, engine.E(engine.Unauthorized, "Invalid API key.")
	case ok && tenantHeader != "" && tenantHeader != t:
		return "", false, engine.E(engine.Unauthorized, "This API key may not act for that tenant.")
	case ok:
		return t, true, nil
	case strings.HasPrefix(key, "jgk_"):
		return "", false, engine.E(engine.Unauthorized, "Invalid API key.")
	}
	return "", false, nil
}

// TestTracingIssuedKeys checks the keys of a tracing.KeyResolver: a tenant's key writes and
// reads its tenant's traces and no other's, the single-user default tenant stays open to a
// missing or foreign key, and a revoked or unknown issued key is a 401.
func TestTracingIssuedKeys(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	s.P.Tracing.UseKeys(issuedKeys{"jgk_acme": "acme", "jgk_bravo": "bravo", "jgk_old": "revoked"})
	posted := map[string]string{} // tenant -> run id
	for _, key := range []string{"jgk_acme", "jgk_bravo", ""} {
		run := newTracedRun(nil, "r", "chain", time.Now())
		s.Key = key
		if code, v := s.postMultipart(t, "", traceJSONPart("post."+run["id"].(string), run)); code != 202 {
			t.Fatalf("post with %q: %d %v", key, code, v)
		}
		posted[key] = run["id"].(string)
		s.run(t, run["id"].(string))
	}
	s.Key = ""
	for _, c := range []struct {
		key, header, run string
		want             int
	}{
		{"jgk_acme", "", "jgk_acme", 200},
		{"jgk_acme", "", "jgk_bravo", 404},
		{"jgk_acme", "", "", 404},
		{"jgk_bravo", "", "jgk_acme", 404},
		{"jgk_bravo", "", "jgk_bravo", 200},
		{"jgk_acme", "bravo", "jgk_bravo", 401},
		{"", "", "jgk_acme", 404},
		{"", "", "", 200},
		{"anything", "", "", 200},
		{"anything", "", "jgk_acme", 404},
		{"jgk_wrong", "", "jgk_acme", 401},
		{"jgk_old", "", "jgk_acme", 401},
	} {
		code, _ := s.send(t, "GET", "/runs/"+posted[c.run], nil, map[string]string{"X-Api-Key": c.key, "X-Tenant-Id": c.header})
		if code != c.want {
			t.Errorf("key %q (X-Tenant-Id %q) reading the run posted with %q: %d, want %d", c.key, c.header, c.run, code, c.want)
		}
	}
	code, v := s.send(t, "GET", "/sessions", nil, map[string]string{"X-Api-Key": "jgk_acme"})
	if code != 200 || len(v.([]any)) != 1 {
		t.Errorf("acme's projects: %d %v", code, v)
	}
}
