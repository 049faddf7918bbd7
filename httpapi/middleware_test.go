package httpapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
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
