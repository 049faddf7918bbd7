package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/httpapi"
)

// BenchmarkHTTPRunCycle measures what the HTTP layer alone costs on the two requests of an echo
// run cycle (`POST /threads`, then `POST /threads/{id}/runs/wait`, as `jetgraph bench runs`
// sends them): the middleware chain as serve has it (request id, access log at info, request
// metrics, CORS with no origin given, recover, the UTF-8 check), parsing and checking the
// bodies, and encoding the answers. The services behind are fakes that answer at once, and the
// requests are served in process (no loopback, no client), so that allocs/op is the layer's
// own. BenchmarkEchoRunCounts measures the whole stack.
//
//	go test ./httpapi -run '^$' -bench HTTPRunCycle -benchtime 20000x
func BenchmarkHTTPRunCycle(b *testing.B) {
	now := engine.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	thread := engine.Thread{ThreadID: threadID, CreatedAt: now, UpdatedAt: now, StateUpdatedAt: now,
		Metadata: map[string]any{}, Status: engine.ThreadIdle, Config: map[string]any{}, Interrupts: map[string]any{}}
	run := engine.RunRecord{Run: engine.Run{RunID: "1f0c1d52-6c2e-6a8e-8000-000000000001", ThreadID: threadID,
		AssistantID: "fe096781-5601-53d2-b2f6-0d3403f7e9ca", CreatedAt: now, UpdatedAt: now, Status: engine.RunPending,
		Metadata: map[string]any{}, MultitaskStrategy: engine.MultitaskEnqueue}}
	ended := run
	ended.Status = engine.RunSuccess
	values := graph.State{"messages": []any{
		map[string]any{"type": "human", "content": "hi", "id": "m1"},
		map[string]any{"type": "ai", "content": "hi", "id": "m2"},
	}}
	srv := httpapi.New(httpapi.Deps{Logger: quiet(),
		Threads: fakeThreads{create: func(context.Context, threads.Create) (engine.Thread, error) { return thread, nil }},
		Assistants: fakeAssistants{resolve: func(context.Context, string) (engine.Assistant, error) {
			return engine.Assistant{AssistantID: run.AssistantID, GraphID: "echo"}, nil
		}},
		Runs: fakeRuns{
			create: func(context.Context, runs.Create) (engine.RunRecord, error) { return run, nil },
			waitEnd: func(context.Context, engine.RunRecord) (engine.RunRecord, graph.State, error) {
				return ended, values, nil
			},
		}})
	h := srv.Handler()
	create := newBenchRequest(b, "/threads", `{}`)
	wait := newBenchRequest(b, "/threads/"+threadID+"/runs/wait",
		`{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"hi"}]}}`)
	w := &discardWriter{header: http.Header{}}
	serve := func(r *benchRequest) {
		r.reset()
		clear(w.header)
		w.code = 0
		h.ServeHTTP(w, r.req)
		if w.code != http.StatusOK {
			b.Fatalf("%s: %d", r.req.URL.Path, w.code)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		serve(create)
		serve(wait)
	}
}

// benchRequest is a request served again and again, its body rewound each time, so that the
// benchmark allocates nothing of its own per request.
type benchRequest struct {
	req  *http.Request
	body []byte
	r    *rewoundBody
}

func newBenchRequest(b *testing.B, path, body string) *benchRequest {
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1"+path, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "jetgraph-bench")
	req.RemoteAddr = "127.0.0.1:50000"
	return &benchRequest{req: req, body: []byte(body), r: &rewoundBody{}}
}

func (r *benchRequest) reset() {
	r.r.Reset(r.body)
	r.req.Body = r.r
	r.req.ContentLength = int64(len(r.body))
}

// rewoundBody is a request body that can be read again.
type rewoundBody struct{ bytes.Reader }

func (*rewoundBody) Close() error { return nil }

// discardWriter is an http.ResponseWriter that keeps the status and drops the body.
type discardWriter struct {
	header http.Header
	code   int
}

func (w *discardWriter) Header() http.Header { return w.header }

func (w *discardWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return len(p), nil
}

func (w *discardWriter) WriteHeader(code int) { w.code = code }
