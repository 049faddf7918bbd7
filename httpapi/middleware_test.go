package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/httpapi"
)

// TestAccessLogAndRouteMetrics: each request is one access-log line (method, path, route,
// status, request id as answered, the user) when the logger takes info, none when it does not;
// the request counters count each (method, route, status) apart, the second request of one as
// the first.
func TestAccessLogAndRouteMetrics(t *testing.T) {
	p := platformtest.Start(t, platform.Config{Graphs: servedGraphs(t)}, nil)
	for _, c := range []struct {
		level slog.Level
		lines bool
	}{{slog.LevelInfo, true}, {slog.LevelWarn, false}} {
		t.Run(c.level.String(), func(t *testing.T) {
			var logged eventlogtest.Buffer
			metrics := httpapi.NewMetrics()
			srv := httpapi.New(httpapi.Deps{Threads: p.Threads, Assistants: p.Assistants, Health: p.Health,
				Runner: p.Runner, Graphs: p.Graphs, Runs: p.Runs, Metrics: metrics,
				Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: c.level}))})
			ts := serve(t, srv.Handler())
			var ids []string
			for _, req := range []struct{ method, path string }{{"POST", "/threads"}, {"POST", "/threads"}, {"GET", "/threads/nope"}} {
				r, _ := http.NewRequest(req.method, ts.URL+req.path, strings.NewReader(`{}`))
				resp, err := http.DefaultClient.Do(r)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				ids = append(ids, resp.Header.Get("X-Request-Id"))
			}
			out := logged.String()
			if !c.lines {
				if out != "" {
					t.Fatalf("logged at %s:\n%s", c.level, out)
				}
			} else {
				lines := strings.Split(strings.TrimSpace(out), "\n")
				if len(lines) != 3 {
					t.Fatalf("%d lines:\n%s", len(lines), out)
				}
				for i, want := range []string{"method=POST path=/threads route=/threads status=200", "method=POST path=/threads route=/threads status=200",
					"method=GET path=/threads/nope route=/threads/:thread_id status=422"} {
					if !strings.Contains(lines[i], "msg=http "+want+" bytes=") || !strings.Contains(lines[i], "request_id="+ids[i]) || ids[i] == "" {
						t.Errorf("line %d: %s, want %q and request id %q", i, lines[i], want, ids[i])
					}
				}
			}
			resp, err := http.Get(ts.URL + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, want := range []string{`jetgraph_http_requests_total{method="POST",route="/threads",status="200"} 2`,
				`jetgraph_http_requests_total{method="GET",route="/threads/:thread_id",status="422"} 1`,
				`jetgraph_http_request_duration_seconds_count{method="POST",route="/threads"} 2`} {
				if !strings.Contains(string(raw), want) {
					t.Errorf("metrics lack %s", want)
				}
			}
		})
	}
}

// TestFrontRecoversAndAnswersHeaders: a handler that panics is answered 500 (the server goes
// on), logged with its stack, and still counted and access-logged; every answer has a request
// id (the client's when it sends one, else 32 letters and digits, new each time) and Vary:
// Origin; a browser's request from a loopback origin gets the CORS headers, and a body that is
// not UTF-8 is refused 422 before the handler.
func TestFrontRecoversAndAnswersHeaders(t *testing.T) {
	var logged eventlogtest.Buffer
	metrics := httpapi.NewMetrics()
	h := httpapi.New(httpapi.Deps{Metrics: metrics, Logger: slog.New(slog.NewTextHandler(&logged, nil)),
		Threads: fakeThreads{get: func(context.Context, string) (engine.Thread, error) { panic("boom") },
			create: func(context.Context, threads.Create) (engine.Thread, error) {
				return engine.Thread{ThreadID: threadID}, nil
			}}}).Handler()
	do := func(method, path, body string, header map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := do("GET", "/threads/"+threadID, "", nil)
	if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), "Internal Server Error") {
		t.Fatalf("panic answered %d %s", w.Code, w.Body)
	}
	out := logged.String()
	for _, want := range []string{"http: handler panicked", "boom", "stack=", "msg=http method=GET path=/threads/" + threadID + " route=/threads/:thread_id status=500"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	id := w.Header().Get("X-Request-Id")
	if len(id) != 32 || strings.Trim(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") != "" {
		t.Errorf("request id %q", id)
	}
	if w.Header().Get("Vary") != "Origin" {
		t.Errorf("Vary %q", w.Header().Values("Vary"))
	}
	if again := do("GET", "/threads/"+threadID, "", nil).Header().Get("X-Request-Id"); again == id {
		t.Errorf("request id %q twice", id)
	}
	if got := do("GET", "/ok", "", map[string]string{"X-Request-Id": "mine"}).Header().Get("X-Request-Id"); got != "mine" {
		t.Errorf("request id %q, want the client's", got)
	}
	w = do("GET", "/ok", "", map[string]string{"Origin": "http://localhost:3000"})
	if w.Header().Get("Access-Control-Allow-Origin") != "http://localhost:3000" || w.Header().Get("Vary") != "Origin" ||
		!strings.Contains(w.Header().Get("Access-Control-Expose-Headers"), "X-Request-Id") {
		t.Errorf("CORS headers %v", w.Header())
	}
	w = do("POST", "/threads", "{\"metadata\":{\"a\":\"\xff\"}}", map[string]string{"Content-Type": "application/json"})
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), "not valid UTF-8") {
		t.Errorf("invalid UTF-8 answered %d %s", w.Code, w.Body)
	}
	for query, want := range map[string]string{"": `{"thread_id":"` + threadID + `",`, "?pretty": "{\n  \"thread_id\": \"" + threadID + "\",\n"} {
		w = do("POST", "/threads"+query, "{}", nil)
		if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/json" || !strings.HasPrefix(w.Body.String(), want) {
			t.Errorf("POST /threads%s answered %d %v %s, want it to start with %q", query, w.Code, w.Header(), w.Body, want)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := `jetgraph_http_requests_total{method="GET",route="/threads/:thread_id",status="500"} 2`; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("metrics lack %s", want)
	}
}
