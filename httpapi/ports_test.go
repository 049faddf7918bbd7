package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/httpapi"
)

// The tests of this file are about HTTP alone: what a request becomes before the services see
// it, what a service's answer or error becomes on the wire. They serve small fakes of the ports
// (ports.go) instead of booting JetStream and bbolt. A fake method the test gives no function
// for panics, which the server answers with a 500: a request that should not reach the service
// then fails its test.

// fakeThreads is a ThreadService answering from its functions.
type fakeThreads struct {
	httpapi.ThreadService
	create func(ctx context.Context, c threads.Create) (engine.Thread, error)
	get    func(ctx context.Context, id string) (engine.Thread, error)
	search func(ctx context.Context, q engine.ThreadQuery) ([]engine.Thread, int, error)
}

func (f fakeThreads) Create(ctx context.Context, c threads.Create) (engine.Thread, error) {
	return f.create(ctx, c)
}

func (f fakeThreads) Get(ctx context.Context, id string) (engine.Thread, error) {
	return f.get(ctx, id)
}

func (f fakeThreads) Search(ctx context.Context, q engine.ThreadQuery) ([]engine.Thread, int, error) {
	return f.search(ctx, q)
}

// fakeAssistants is an AssistantService answering from its functions; every UUID is an id.
type fakeAssistants struct {
	httpapi.AssistantService
	resolve func(ctx context.Context, idOrGraph string) (engine.Assistant, error)
	search  func(ctx context.Context, q engine.AssistantQuery) ([]engine.Assistant, int, error)
}

func (fakeAssistants) ID(idOrGraph string) (string, bool) { return idOrGraph, true }

func (f fakeAssistants) Resolve(ctx context.Context, idOrGraph string) (engine.Assistant, error) {
	return f.resolve(ctx, idOrGraph)
}

func (f fakeAssistants) Search(ctx context.Context, q engine.AssistantQuery) ([]engine.Assistant, int, error) {
	return f.search(ctx, q)
}

// fakeStore is a StoreService answering from its functions.
type fakeStore struct {
	httpapi.StoreService
	search     func(ctx context.Context, q engine.StoreQuery, refresh bool) ([]engine.Item, error)
	namespaces func(ctx context.Context, q engine.NamespaceQuery) ([][]string, error)
}

func (f fakeStore) Search(ctx context.Context, q engine.StoreQuery, refresh bool) ([]engine.Item, error) {
	return f.search(ctx, q, refresh)
}

func (f fakeStore) ListNamespaces(ctx context.Context, q engine.NamespaceQuery) ([][]string, error) {
	return f.namespaces(ctx, q)
}

// fakeRuns is a RunService answering from its functions.
type fakeRuns struct {
	httpapi.RunService
	create  func(ctx context.Context, c runs.Create) (engine.RunRecord, error)
	waitEnd func(ctx context.Context, rec engine.RunRecord) (engine.RunRecord, graph.State, error)
	cancel  func(ctx context.Context, thread, run, action string, wait bool) error
}

func (f fakeRuns) Create(ctx context.Context, c runs.Create) (engine.RunRecord, error) {
	return f.create(ctx, c)
}

func (f fakeRuns) WaitEnd(ctx context.Context, rec engine.RunRecord) (engine.RunRecord, graph.State, error) {
	return f.waitEnd(ctx, rec)
}

func (f fakeRuns) Cancel(ctx context.Context, thread, run, action string, wait bool) error {
	return f.cancel(ctx, thread, run, action, wait)
}

// serveFakes serves d over real HTTP, without a platform.
func serveFakes(t *testing.T, d httpapi.Deps) (*stack, *httptest.Server) {
	t.Helper()
	d.Logger = slog.New(slog.DiscardHandler)
	ts := serve(t, httpapi.New(d).Handler())
	return &stack{URL: ts.URL}, ts
}

// sameJSON fails the test unless got is the JSON want.
func sameJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want: %v", what, err)
	}
	if !reflect.DeepEqual(got, w) {
		raw, _ := json.Marshal(got)
		t.Fatalf("%s\n got %s\nwant %s", what, raw, want)
	}
}

const threadID = "6f1c3f2e-6a55-4a43-9c0e-3a2b8d1f0c11"

// TestServiceErrorsReachTheClient checks that what a service refuses with reaches the client as
// the status of its kind and its detail, through wrapping, and that the text of an unclassified
// failure never does.
func TestServiceErrorsReachTheClient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		code int
		body string
	}{
		{"not found", engine.E(engine.Op("threads.get"), engine.NotFound, "Thread with ID x not found"),
			404, `{"detail": "Thread with ID x not found"}`},
		{"wrapped by a caller", fmt.Errorf("read: %w", engine.E(engine.Op("threads.get"), engine.Conflict, "Thread is busy")),
			409, `{"detail": "Thread is busy"}`},
		{"kind of the cause", engine.E(engine.Op("threads.get"), engine.E(engine.Unavailable, "The log is not ready")),
			503, `{"detail": "The log is not ready"}`},
		{"no detail: the status text", engine.E(engine.Op("threads.get"), engine.TooLarge),
			413, `{"detail": "Request Entity Too Large"}`},
		{"violations: every one", engine.Violations{{Loc: []any{"body", "a"}, Msg: "m1", Type: "t1"}, {Loc: []any{"body", "b", 0}, Msg: "m2", Type: "t2"}}.Err("threads.get"),
			422, `{"detail": [{"loc": ["body", "a"], "msg": "m1", "type": "t1"}, {"loc": ["body", "b", 0], "msg": "m2", "type": "t2"}]}`},
		{"unclassified: nothing leaks", errors.New("bbolt: page 7 corrupt at /var/secret"),
			500, `{"detail": "Internal Server Error"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A recorder, not a served exchange: these kinds cannot come from GET /threads/{id}
			// in the product, so the OpenAPI contract check (serve) would rightly refuse them.
			h := httpapi.New(httpapi.Deps{Logger: slog.New(slog.DiscardHandler), Threads: fakeThreads{
				get: func(context.Context, string) (engine.Thread, error) { return engine.Thread{}, tc.err },
			}}).Handler()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/threads/"+threadID, nil))
			var body any
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if rec.Code != tc.code {
				t.Fatalf("status %d, want %d: %v", rec.Code, tc.code, body)
			}
			sameJSON(t, "body", body, tc.body)
		})
	}
}

// TestRequestsBecomeDomainQueries checks what a search or count request asks of its service:
// the defaults filled in, the filters passed on; and that the answer's page headers come from
// the service's total.
func TestRequestsBecomeDomainQueries(t *testing.T) {
	var mu sync.Mutex
	var got any
	record := func(q any) {
		mu.Lock()
		defer mu.Unlock()
		got = q
	}
	s, _ := serveFakes(t, httpapi.Deps{
		Threads: fakeThreads{search: func(_ context.Context, q engine.ThreadQuery) ([]engine.Thread, int, error) {
			record(q)
			now := engine.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
			return []engine.Thread{{ThreadID: threadID, CreatedAt: now, UpdatedAt: now, StateUpdatedAt: now,
				Metadata: map[string]any{}, Status: engine.ThreadIdle, Config: map[string]any{}, Interrupts: map[string]any{}}}, 7, nil
		}},
		Assistants: fakeAssistants{search: func(_ context.Context, q engine.AssistantQuery) ([]engine.Assistant, int, error) {
			record(q)
			return nil, 7, nil
		}},
		Store: fakeStore{
			search: func(_ context.Context, q engine.StoreQuery, refresh bool) ([]engine.Item, error) {
				record(struct {
					Q       engine.StoreQuery
					Refresh bool
				}{q, refresh})
				return nil, nil
			},
			namespaces: func(_ context.Context, q engine.NamespaceQuery) ([][]string, error) {
				record(q)
				return nil, nil
			},
		},
	})
	tests := []struct {
		name, path, body string
		want             any
		total            string // X-Pagination-Total, "" for none
	}{
		{"thread search defaults", "/threads/search", `{}`,
			engine.ThreadQuery{SortBy: "updated_at", SortOrder: "desc", Limit: 10}, "7"},
		{"thread search", "/threads/search",
			`{"ids":["` + strings.ToUpper(threadID) + `"],"metadata":{"a":1},"values":{"v":"x"},"status":"busy","sort_by":"created_at","sort_order":"asc","limit":3,"offset":6}`,
			engine.ThreadQuery{IDs: []string{threadID}, Metadata: map[string]any{"a": 1.0}, Values: map[string]any{"v": "x"},
				Status: "busy", SortBy: "created_at", SortOrder: "asc", Limit: 3, Offset: 6}, "7"},
		{"thread count: no page", "/threads/count", `{"status":"idle","limit":3}`,
			engine.ThreadQuery{Status: "idle"}, ""},
		{"assistant search defaults", "/assistants/search", `{}`,
			engine.AssistantQuery{SortBy: "created_at", SortOrder: "desc", Limit: 10}, "7"},
		{"assistant search", "/assistants/search", `{"graph_id":"agent","name":"Bot","metadata":{"t":"x"},"sort_by":"name","sort_order":"asc","limit":2,"offset":1}`,
			engine.AssistantQuery{GraphID: "agent", Name: "Bot", Metadata: map[string]any{"t": "x"}, SortBy: "name", SortOrder: "asc", Limit: 2, Offset: 1}, "7"},
		{"store search: a limit of 0 is the default", "/store/items/search", `{"limit":0,"refresh_ttl":false}`,
			struct {
				Q       engine.StoreQuery
				Refresh bool
			}{engine.StoreQuery{Limit: 10}, false}, ""},
		{"store search", "/store/items/search", `{"namespace_prefix":["a","b"],"filter":{"n":{"$gt":1}},"query":"cherry","limit":5,"offset":2}`,
			struct {
				Q       engine.StoreQuery
				Refresh bool
			}{engine.StoreQuery{Prefix: []string{"a", "b"}, Filter: map[string]any{"n": map[string]any{"$gt": 1.0}}, Query: "cherry", Limit: 5, Offset: 2}, true}, ""},
		{"namespaces", "/store/namespaces", `{"prefix":["a","*"],"suffix":["z"],"max_depth":2,"limit":4,"offset":1}`,
			engine.NamespaceQuery{Prefix: []string{"a", "*"}, Suffix: []string{"z"}, MaxDepth: 2, Limit: 4, Offset: 1}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, h, body := s.call(t, "POST", tc.path, tc.body)
			if code != 200 {
				t.Fatalf("status %d: %v", code, body)
			}
			mu.Lock()
			q := got
			mu.Unlock()
			if !reflect.DeepEqual(q, tc.want) {
				t.Fatalf("the service was asked\n%#v\nwant\n%#v", q, tc.want)
			}
			if total := h.Get("X-Pagination-Total"); total != tc.total {
				t.Fatalf("X-Pagination-Total %q, want %q", total, tc.total)
			}
		})
	}
}

// TestInvalidRequestsNeverReachTheService checks that a request with problems is answered 422
// with every problem listed, and that nothing of it reaches a service that would record it: the
// fakes here have no function for a search or a run creation, so a call would be a 500.
func TestInvalidRequestsNeverReachTheService(t *testing.T) {
	unknown := func(_ context.Context, id string) (engine.Assistant, error) {
		return engine.Assistant{}, engine.E(engine.Op("assistants.get"), engine.NotFound, "Assistant "+id+" not found")
	}
	s, _ := serveFakes(t, httpapi.Deps{Threads: fakeThreads{}, Assistants: fakeAssistants{resolve: unknown},
		Store: fakeStore{}, Runs: fakeRuns{}})
	tests := []struct {
		name, path, body string
		code             int
		detail           string
	}{
		{"thread search", "/threads/search", `{"status":"asleep","limit":0,"select":["secret"]}`, 422, `[
			{"loc": ["body", "status"], "msg": "Input should be 'idle', 'busy', 'interrupted' or 'error'", "type": "literal_error"},
			{"loc": ["body", "limit"], "msg": "Input should be greater than or equal to 1", "type": "greater_than_equal"},
			{"loc": ["body", "select", 0], "msg": "Input should be one of 'thread_id', 'created_at', 'updated_at', 'state_updated_at', 'metadata', 'status', 'config', 'values' or 'interrupts'", "type": "literal_error"}]`},
		{"store search", "/store/items/search", `{"namespace_prefix":["a",1],"filter":{"n":{"$near":1}},"offset":-1}`, 422, `[
			{"loc": ["body", "namespace_prefix"], "msg": "Input should be a valid list of strings", "type": "list_type"},
			{"loc": ["body", "offset"], "msg": "Input should be greater than or equal to 0", "type": "greater_than_equal"},
			{"loc": ["body", "filter", "n", "$near"], "msg": "Unknown filter operator \"$near\": use one of $eq, $ne, $gt, $gte, $lt, $lte", "type": "value_error"}]`},
		// The body's problems win over the unknown assistant: still nothing is created.
		{"run with problems and an unknown assistant", "/threads/" + threadID + "/runs", `{"assistant_id":"ghost","durability":"never"}`, 422, `[
			{"loc": ["body", "durability"], "msg": "Input should be 'sync', 'async' or 'exit'", "type": "literal_error"}]`},
		{"well-formed run, unknown assistant", "/threads/" + threadID + "/runs", `{"assistant_id":"ghost"}`, 404,
			`"No assistant found for \"ghost\". Make sure the assistant ID is for a valid assistant or a valid graph ID."`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := s.call(t, "POST", tc.path, tc.body)
			if code != tc.code {
				t.Fatalf("status %d, want %d: %v", code, tc.code, body)
			}
			sameJSON(t, "detail", field(body, "detail"), tc.detail)
		})
	}
}

// TestWaitCancelsTheRunOfADepartedClient checks what /runs/wait does when its client leaves
// before the run ends: with on_disconnect "cancel" it interrupts the run, with a context that
// outlives the request; with "continue" (the default on a thread) it leaves the run alone.
func TestWaitCancelsTheRunOfADepartedClient(t *testing.T) {
	for _, onDisconnect := range []string{"cancel", "continue"} {
		t.Run(onDisconnect, func(t *testing.T) {
			waiting := make(chan struct{})
			var mu sync.Mutex
			var cancels []string
			s, ts := serveFakes(t, httpapi.Deps{
				Assistants: fakeAssistants{resolve: func(context.Context, string) (engine.Assistant, error) { return engine.Assistant{}, nil }},
				Runs: fakeRuns{
					create: func(_ context.Context, c runs.Create) (engine.RunRecord, error) {
						return engine.RunRecord{Run: engine.Run{ThreadID: c.ThreadID, RunID: "run-1", Status: engine.RunPending}}, nil
					},
					waitEnd: func(ctx context.Context, rec engine.RunRecord) (engine.RunRecord, graph.State, error) {
						close(waiting)
						<-ctx.Done()
						return rec, nil, ctx.Err()
					},
					cancel: func(ctx context.Context, thread, run, action string, wait bool) error {
						mu.Lock()
						defer mu.Unlock()
						cancels = append(cancels, fmt.Sprintf("%s/%s %s wait=%v ctx=%v", thread, run, action, wait, ctx.Err()))
						return nil
					},
				},
			})
			ctx, leave := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/threads/"+threadID+"/runs/wait",
				strings.NewReader(`{"assistant_id":"a","on_disconnect":"`+onDisconnect+`"}`))
			done := make(chan struct{})
			go func() {
				defer close(done)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			<-waiting
			leave()
			<-done
			ts.Close() // waits for the handler to return
			want := []string{threadID + "/run-1 interrupt wait=false ctx=<nil>"}
			if onDisconnect == "continue" {
				want = nil
			}
			mu.Lock()
			defer mu.Unlock()
			if !reflect.DeepEqual(cancels, want) {
				t.Fatalf("cancels %q, want %q", cancels, want)
			}
		})
	}
}
