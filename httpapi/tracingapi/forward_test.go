package tracingapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/tracing/forward"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/httpapitest"
)

// flakyTarget is a reverse proxy in front of a real tracing API that can be down (503), can
// send every request twice (an acknowledgement lost: the forwarder sends the batch again), and
// records the bodies that went through.
type flakyTarget struct {
	URL    string
	down   atomic.Bool
	twice  atomic.Bool
	failed atomic.Int64

	mu     sync.Mutex
	bodies [][]byte
}

func newFlakyTarget(t *testing.T, target string) *flakyTarget {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	f := &flakyTarget{}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	// Checked against the OpenAPI document like every test server: what the forwarder sends
	// must be what the tracing API documents.
	srv := httpapitest.NewServer(t, httpapi.OpenAPI(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.down.Load() {
			f.failed.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"detail": "down for the test"}`)
			return
		}
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.mu.Unlock()
		if f.twice.Load() {
			again := r.Clone(r.Context())
			again.Body = io.NopCloser(bytes.NewReader(body))
			proxy.ServeHTTP(httptest.NewRecorder(), again)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	f.URL = srv.URL + u.Path
	return f
}

// sent reports whether a request that went through named part.
func (f *flakyTarget) sent(part string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range f.bodies {
		if bytes.Contains(b, []byte(`name="`+part+`"`)) {
			return true
		}
	}
	return false
}

// runForwarder runs a forwarder of src's traces to url until the returned stop is called.
func runForwarder(t *testing.T, src *traceStack, cfg forward.Config) (stop func()) {
	t.Helper()
	f, err := forward.New(src.P.Log, src.P.TraceObjects, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return runForwarderOf(t, f)
}

// runForwarderOf runs f until the returned stop is called.
func runForwarderOf(t *testing.T, f *forward.Forwarder) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("forwarder: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// projectRuns returns the runs of the project called name at s (none while it does not exist),
// and the project's run count (its traces: root runs).
func projectRuns(t *testing.T, s *traceStack, name string) (map[string]map[string]any, int) {
	t.Helper()
	code, v := s.send(t, "GET", "/sessions?name="+url.QueryEscape(name), nil, nil)
	list, _ := v.([]any)
	if code != 200 || len(list) == 0 {
		return nil, 0
	}
	id := tfield(list[0], "id").(string)
	code, v = s.json(t, "POST", "/runs/query", map[string]any{"session": []string{id}, "limit": 100})
	if code != 200 {
		t.Fatalf("runs/query: %d %v", code, v)
	}
	runs := map[string]map[string]any{}
	for _, r := range tfield(v, "runs").([]any) {
		runs[tfield(r, "id").(string)] = r.(map[string]any)
	}
	_, p := s.send(t, "GET", "/sessions/"+id+"?include_stats=true", nil, nil)
	n, _ := tfield(p, "run_count").(float64)
	return runs, int(n)
}

// waitRuns waits until the project holds exactly the runs of ids, and counts each root once.
func waitRuns(t *testing.T, s *traceStack, project string, ids ...string) map[string]map[string]any {
	t.Helper()
	var runs map[string]map[string]any
	waitFor(t, fmt.Sprintf("%d runs in project %s", len(ids), project), func() (bool, any) {
		var n int
		runs, n = projectRuns(t, s, project)
		for _, id := range ids {
			if runs[id] == nil {
				return false, fmt.Sprintf("%d runs, count %d", len(runs), n)
			}
		}
		roots := 0
		for _, r := range runs {
			if r["parent_run_id"] == nil {
				roots++
			}
		}
		return len(runs) == len(ids) && n == roots, fmt.Sprintf("%d runs, %d roots, count %d", len(runs), roots, n)
	})
	return runs
}

// TestForwarder sends a jetgraph's traces to another one's real tracing API through a
// forwarder: runs (posts, a patch, an attachment, a root without a dotted_order) and feedback arrive in the target project;
// batches the target receives twice are stored once; while the target is down nothing is
// acknowledged and everything arrives once it is back, once; a new forwarder (a restart)
// resumes where the first one stopped, sending nothing it had sent.
func TestForwarder(t *testing.T) {
	src := startTracing(t, platform.TracingConfig{})
	dst := startTracing(t, platform.TracingConfig{})
	proxy := newFlakyTarget(t, dst.URL)
	cfg := forward.Config{URL: proxy.URL, APIKey: "target-key", Project: "forwarded",
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, AckWait: 5 * time.Second}
	stop := runForwarder(t, src, cfg)

	// 1. Posts, a patch, an attachment and a feedback, each batch sent to the target twice.
	proxy.twice.Store(true)
	root, child := src.postTrace(t, "source-project")
	rootID, childID := root["id"].(string), child["id"].(string)
	if code, v := src.postMultipart(t, "",
		traceJSONPart("patch."+childID, map[string]any{"id": childID, "trace_id": root["trace_id"], "dotted_order": child["dotted_order"],
			"outputs": map[string]any{"answer": "forty-two"}, "end_time": time.Now().UTC().Format(time.RFC3339Nano)}),
		tracePart{name: "attachment." + rootID + ".notes", ctype: "text/plain", data: []byte("attached bytes")},
		traceJSONPart("feedback."+uuid.NewString(), map[string]any{"run_id": rootID, "key": "correct", "score": 1}),
	); code != 202 {
		t.Fatalf("patch, attachment and feedback: %d %v", code, v)
	}
	// A root posted through /runs/batch, without the dotted_order multipart ingestion requires.
	bare := map[string]any{"id": uuid.NewString(), "name": "bare", "run_type": "chain",
		"start_time": time.Now().UTC().Format(time.RFC3339Nano), "session_name": "source-project"}
	if code, v := src.json(t, "POST", "/runs/batch", map[string]any{"post": []any{bare}}); code != 202 {
		t.Fatalf("batch: %d %v", code, v)
	}
	bareID := bare["id"].(string)
	runs := waitRuns(t, dst, "forwarded", rootID, childID, bareID)
	waitFor(t, "the patch, the attachment and the feedback at the target", func() (bool, any) {
		_, c := dst.send(t, "GET", "/runs/"+childID, nil, nil)
		_, r := dst.send(t, "GET", "/runs/"+rootID, nil, nil)
		fb := dst.feedbackIDs(t, "run="+rootID)
		return tfield(c, "outputs", "answer") == "forty-two" && tfield(r, "s3_urls", "attachment.notes") != nil && len(fb) == 1,
			[]any{tfield(c, "outputs"), tfield(r, "s3_urls"), fb}
	})
	if name := tfield(runs[rootID], "name"); name != "root" {
		t.Errorf("the forwarded root's name: %v", name)
	}
	proxy.twice.Store(false)

	// 2. The target is down: nothing arrives, nothing is lost; then it is back.
	proxy.down.Store(true)
	root2, child2 := src.postTrace(t, "source-project")
	waitFor(t, "failed attempts while the target is down", func() (bool, any) {
		return proxy.failed.Load() >= 3, proxy.failed.Load()
	})
	if code, _ := dst.send(t, "GET", "/runs/"+root2["id"].(string), nil, nil); code != 404 {
		t.Errorf("a run reached the target while it was down: %d", code)
	}
	proxy.down.Store(false)
	waitRuns(t, dst, "forwarded", rootID, childID, bareID, root2["id"].(string), child2["id"].(string))

	// 3. A restart: the new forwarder (same target) sends only what came after.
	stop()
	root3, child3 := src.postTrace(t, "source-project")
	runForwarder(t, src, cfg)
	waitRuns(t, dst, "forwarded", rootID, childID, bareID, root2["id"].(string), child2["id"].(string), root3["id"].(string), child3["id"].(string))
	proxy.mu.Lock()
	sent := len(proxy.bodies)
	proxy.mu.Unlock()
	posts := 0
	for _, id := range []string{rootID, root2["id"].(string), root3["id"].(string)} {
		proxy.mu.Lock()
		for _, b := range proxy.bodies {
			posts += strings.Count(string(b), `name="post.`+id+`"`)
		}
		proxy.mu.Unlock()
	}
	if posts != 3 {
		t.Errorf("the roots were posted %d times in %d requests, want once each", posts, sent)
	}
	if !proxy.sent("post." + root3["id"].(string)) {
		t.Error("the run traced while no forwarder ran was not sent")
	}
	if code, r := dst.send(t, "GET", "/runs/"+rootID, nil, nil); code != 200 || tfield(r, "session_id") == nil {
		t.Errorf("the root at the target: %d %v", code, r)
	}
	if _, n := projectRuns(t, src, "forwarded"); n != 0 {
		t.Errorf("the source has a project 'forwarded' with %d runs: forwarded runs came back", n)
	}
}

// TestForwarderConfig checks the configuration a forwarder refuses, and that its durable
// consumer is named after its target, project and tenant alone.
func TestForwarderConfig(t *testing.T) {
	src := startTracing(t, platform.TracingConfig{})
	for _, c := range []struct {
		name string
		cfg  forward.Config
		ok   bool
	}{
		{"http", forward.Config{URL: "http://localhost:8123/tracing"}, true},
		{"https with a trailing slash", forward.Config{URL: "https://api.smith.langchain.com/"}, true},
		{"no scheme", forward.Config{URL: "localhost:8123"}, false},
		{"another scheme", forward.Config{URL: "ftp://host/tracing"}, false},
		{"empty", forward.Config{}, false},
		{"a tenant that is no subject token", forward.Config{URL: "http://h", Tenant: "a.b"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := forward.New(src.P.Log, src.P.TraceObjects, c.cfg)
			if (err == nil) != c.ok {
				t.Errorf("New(%+v) = %v, want ok %v", c.cfg, err, c.ok)
			}
		})
	}
	a := forward.ConsumerName(forward.Config{URL: "http://h/tracing", Project: "p", APIKey: "k1"})
	for _, c := range []struct {
		cfg  forward.Config
		same bool
	}{
		{forward.Config{URL: "http://h/tracing/", Project: "p", APIKey: "k2"}, true},
		{forward.Config{URL: "http://h/tracing", Project: "p", Tenant: "default"}, true},
		{forward.Config{URL: "http://h/tracing", Project: "q"}, false},
		{forward.Config{URL: "http://other/tracing", Project: "p"}, false},
		{forward.Config{URL: "http://h/tracing", Project: "p", Tenant: "acme"}, false},
	} {
		if b := forward.ConsumerName(c.cfg); (a == b) != c.same {
			t.Errorf("ConsumerName(%+v) = %s, first %s: want same %v", c.cfg, b, a, c.same)
		}
	}
	raw, _ := json.Marshal(a)
	if !strings.HasPrefix(a, "JG_TRACE_FORWARD_") || strings.ContainsAny(a, ".*> ") {
		t.Errorf("consumer name %s", raw)
	}
}
