package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/httpapi"
)

// stack is a whole jetgraph process over real HTTP: embedded JetStream, a bbolt file and the
// services, in temporary folders.
type stack struct {
	URL string
	P   *platform.Platform
}

func startStack(t testing.TB) *stack {
	t.Helper()
	return startStackWith(t, servedGraphs(t))
}

// startStackWith starts a stack serving reg.
func startStackWith(t testing.TB, reg *graphs.Registry) *stack {
	t.Helper()
	p := platformtest.Start(t, platform.Config{Graphs: reg}, nil)
	srv := httpapi.New(httpapi.Deps{Threads: p.Threads, Assistants: p.Assistants, Store: p.Store, Events: p.Log, Health: p.Health, Runner: p.Runner, Graphs: p.Graphs, Runs: p.Runs})
	ts := serve(t, srv.Handler())
	return &stack{URL: ts.URL, P: p}
}

// servedGraphs is the registry the test stack serves: the example graphs echo and agent.
func servedGraphs(t testing.TB) *graphs.Registry {
	r, err := graphs.Examples().Select([]string{"echo", "agent"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// call sends body (a JSON string, or "" for none) and returns the status, headers and decoded body.
func (s *stack) call(t testing.TB, method, path, body string) (int, http.Header, any) {
	t.Helper()
	return s.do(t, method, path, body, nil)
}

// do sends body ("" for none) with request headers and returns the status, headers and decoded
// body (JSON; a body that is not JSON fails the test).
func (s *stack) do(t testing.TB, method, path, body string, header map[string]string) (int, http.Header, any) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s %s: body is not JSON: %q", method, path, raw)
		}
	}
	return resp.StatusCode, resp.Header, v
}

func field(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

func TestThreadLifecycle(t *testing.T) {
	s := startStack(t)
	code, _, th := s.call(t, "POST", "/threads", `{"metadata":{"user":"a"},"ttl":{"strategy":"delete","ttl":60}}`)
	if code != 200 || field(th, "status") != "idle" || field(th, "values") != nil || field(th, "ttl") != nil {
		t.Fatalf("create: %d %v", code, th)
	}
	id := field(th, "thread_id").(string)
	if u, err := uuid.Parse(id); err != nil || u.Version() != 7 {
		t.Fatalf("a thread id the server makes is time-ordered (UUIDv7): %q (%v)", id, err)
	}

	_, _, got := s.call(t, "GET", "/threads/"+id+"?include=ttl", "")
	if field(got, "ttl", "ttl") != 60.0 || field(got, "ttl", "strategy") != "delete" {
		t.Fatalf("include=ttl: %v", got)
	}
	_, _, got = s.call(t, "GET", "/threads/"+id, "")
	if field(got, "ttl") != nil {
		t.Fatalf("ttl shown without include: %v", got)
	}

	code, _, got = s.call(t, "PATCH", "/threads/"+id, `{"metadata":{"k":2}}`)
	if code != 200 || field(got, "metadata", "user") != "a" || field(got, "metadata", "k") != 2.0 {
		t.Fatalf("patch merges metadata: %d %v", code, got)
	}
	for _, prefer := range []string{"return=minimal", "handling=lenient, return=minimal"} {
		code, _, got = s.do(t, "PATCH", "/threads/"+id, `{"metadata":{"m":1}}`, map[string]string{"Prefer": prefer})
		if code != 204 || got != nil {
			t.Fatalf("Prefer: %s answers 204 without a body: %d %v", prefer, code, got)
		}
	}
	if _, _, got = s.call(t, "GET", "/threads/"+id, ""); field(got, "metadata", "m") != 1.0 {
		t.Fatalf("a minimal patch is applied: %v", got)
	}

	tests := []struct {
		name, method, path, body string
		code                     int
		detail                   string
	}{
		{"duplicate create", "POST", "/threads", `{"thread_id":"` + id + `"}`, 409, "Thread already exists"},
		{"do_nothing returns existing", "POST", "/threads", `{"thread_id":"` + id + `","if_exists":"do_nothing"}`, 200, ""},
		{"unknown thread", "GET", "/threads/00000000-0000-0000-0000-000000000001", "", 404, "Thread with ID 00000000-0000-0000-0000-000000000001 not found"},
		{"patch unknown thread", "PATCH", "/threads/00000000-0000-0000-0000-000000000001", `{}`, 404, "Thread with ID 00000000-0000-0000-0000-000000000001 not found"},
		{"delete", "DELETE", "/threads/" + id, "", 204, ""},
		{"gone after delete", "GET", "/threads/" + id, "", 404, "Thread with ID " + id + " not found"},
		{"delete again", "DELETE", "/threads/" + id, "", 404, "Thread with ID " + id + " not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := s.call(t, tc.method, tc.path, tc.body)
			if code != tc.code {
				t.Fatalf("status %d, want %d: %v", code, tc.code, body)
			}
			if tc.detail != "" && field(body, "detail") != tc.detail {
				t.Fatalf("detail %v, want %q", field(body, "detail"), tc.detail)
			}
		})
	}
}

func TestThreadValidationListsEveryProblem(t *testing.T) {
	s := startStack(t)
	tests := []struct {
		name, method, path, body string
		want                     []string // loc/type pairs
	}{
		{"create", "POST", "/threads", `{"thread_id":"x","metadata":[],"if_exists":"maybe","ttl":-5}`,
			[]string{"body.thread_id:uuid_parsing", "body.metadata:dict_type", "body.if_exists:literal_error", "body.ttl:greater_than"}},
		{"malformed json", "POST", "/threads", `{"metadata":`, []string{"body.0:json_invalid"}},
		{"not an object", "POST", "/threads", `[1,2]`, []string{"body:model_attributes_type"}},
		{"bad path id", "GET", "/threads/not-a-uuid", "", []string{"path.thread_id:uuid_parsing"}},
		{"search", "POST", "/threads/search", `{"limit":"x","offset":-1,"status":"asleep","sort_by":"name","ids":["nope"],"select":["secret"]}`,
			[]string{"body.status:literal_error", "body.ids.0:uuid_parsing", "body.limit:int_parsing", "body.offset:greater_than_equal", "body.sort_by:literal_error", "body.select.0:literal_error"}},
		{"ttl strategy", "PATCH", "/threads/00000000-0000-0000-0000-000000000001", `{"ttl":{"strategy":"keep","ttl":1}}`,
			[]string{"body.ttl.strategy:literal_error"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := s.call(t, tc.method, tc.path, tc.body)
			if code != 422 {
				t.Fatalf("status %d, want 422: %v", code, body)
			}
			var got []string
			for _, d := range field(body, "detail").([]any) {
				var loc []string
				for _, l := range field(d, "loc").([]any) {
					loc = append(loc, fmt.Sprint(l))
				}
				got = append(got, strings.Join(loc, ".")+":"+field(d, "type").(string))
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("violations\n got %v\nwant %v", got, want)
			}
		})
	}
}

func TestThreadSearch(t *testing.T) {
	s := startStack(t)
	var ids []string
	for i := range 5 {
		_, _, th := s.call(t, "POST", "/threads", fmt.Sprintf(`{"metadata":{"n":%d,"team":{"name":"%s"}}}`, i, []string{"red", "blue"}[i%2]))
		ids = append(ids, field(th, "thread_id").(string))
	}
	count := func(body string) float64 {
		_, _, n := s.call(t, "POST", "/threads/count", body)
		return n.(float64)
	}
	if n := count(`{}`); n != 5 {
		t.Fatalf("count = %v", n)
	}
	if n := count(`{"metadata":{"team":{"name":"red"}}}`); n != 3 {
		t.Fatalf("nested metadata containment count = %v, want 3", n)
	}
	if n := count(`{"ids":["` + ids[0] + `","` + ids[1] + `"]}`); n != 2 {
		t.Fatalf("ids count = %v", n)
	}
	if n := count(`{"status":"busy"}`); n != 0 {
		t.Fatalf("busy count = %v", n)
	}

	code, h, page := s.call(t, "POST", "/threads/search", `{"limit":2,"offset":1,"sort_by":"created_at","sort_order":"asc","select":["thread_id","metadata"]}`)
	list := page.([]any)
	if code != 200 || len(list) != 2 || h.Get("X-Pagination-Total") != "5" || h.Get("X-Pagination-Next") != "3" {
		t.Fatalf("page: %d %v headers %v", code, page, h)
	}
	if field(list[0], "thread_id") != ids[1] || field(list[1], "thread_id") != ids[2] {
		t.Fatalf("ascending by created_at: got %v, %v; want %s, %s", field(list[0], "thread_id"), field(list[1], "thread_id"), ids[1], ids[2])
	}
	if len(list[0].(map[string]any)) != 2 {
		t.Fatalf("select kept %v", list[0])
	}
	_, h, page = s.call(t, "POST", "/threads/search", `{"limit":10,"offset":3}`)
	if len(page.([]any)) != 2 || h.Get("X-Pagination-Next") != "" {
		t.Fatalf("last page: %v, next %q", page, h.Get("X-Pagination-Next"))
	}
	// Default order is updated_at, newest first: patching the oldest brings it to the front.
	s.call(t, "PATCH", "/threads/"+ids[0], `{"metadata":{"touched":true}}`)
	_, _, page = s.call(t, "POST", "/threads/search", `{}`)
	if field(page.([]any)[0], "thread_id") != ids[0] {
		t.Fatalf("default sort is not updated_at desc: %v", page)
	}
}

func TestConcurrentPatchesLoseNothing(t *testing.T) {
	s := startStack(t)
	_, _, th := s.call(t, "POST", "/threads", `{}`)
	id := field(th, "thread_id").(string)
	const n = 20
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _, _ = s.call(t, "PATCH", "/threads/"+id, fmt.Sprintf(`{"metadata":{"k%d":%d}}`, i, i))
		}()
	}
	wg.Wait()
	_, _, got := s.call(t, "GET", "/threads/"+id, "")
	md := field(got, "metadata").(map[string]any)
	for i, code := range codes {
		_, applied := md[fmt.Sprintf("k%d", i)]
		switch {
		case code == 200 && !applied:
			t.Errorf("patch %d acknowledged but lost", i)
		case code == 409 && applied:
			t.Errorf("patch %d refused but applied", i)
		case code != 200 && code != 409:
			t.Errorf("patch %d: status %d", i, code)
		}
	}
}

// sweepUntilGone sweeps until thread id is gone or 200 sweeps have passed: the sweep itself
// decides, not a timer in the test.
func sweepUntilGone(t *testing.T, s *stack, id string) {
	t.Helper()
	for range 200 {
		if _, err := s.P.Threads.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		if code, _, _ := s.call(t, "GET", "/threads/"+id, ""); code == 404 {
			return
		}
	}
}

func TestTTLSweeperDeletesExpiredThreads(t *testing.T) {
	s := startStack(t)
	_, _, th := s.call(t, "POST", "/threads", `{"ttl":0.0001}`) // 6 ms
	id := field(th, "thread_id").(string)
	_, _, keep := s.call(t, "POST", "/threads", `{"ttl":60}`)
	sweepUntilGone(t, s, id)
	if code, _, _ := s.call(t, "GET", "/threads/"+id, ""); code != 404 {
		t.Fatal("expired thread still there")
	}
	if code, _, _ := s.call(t, "GET", "/threads/"+field(keep, "thread_id").(string), ""); code != 200 {
		t.Fatal("thread with a long TTL was deleted")
	}
}

func TestEventsEndpoint(t *testing.T) {
	s := startStack(t)
	_, _, th := s.call(t, "POST", "/threads", `{"metadata":{"a":1}}`)
	id := field(th, "thread_id").(string)
	s.call(t, "PATCH", "/threads/"+id, `{"metadata":{"b":2}}`)
	resp, err := http.Get(s.URL + "/events/thread/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"type":"created"`) || !strings.Contains(lines[1], `"type":"patched"`) {
		t.Fatalf("events:\n%s", raw)
	}
}

// TestThreadEventsPages: GET /threads/{id}/events pages a thread's log by sequence and filters
// it by type; an unknown thread is a 404, a bad filter a 422 naming it.
func TestThreadEventsPages(t *testing.T) {
	s := startStack(t)
	_, _, th := s.call(t, "POST", "/threads", `{"metadata":{"a":1}}`)
	id := field(th, "thread_id").(string)
	for i := range 3 {
		s.call(t, "PATCH", "/threads/"+id, fmt.Sprintf(`{"metadata":{"b":%d}}`, i))
	}
	get := func(query string) (int, []map[string]any) {
		t.Helper()
		resp, err := http.Get(s.URL + "/threads/" + id + "/events" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var events []map[string]any
		dec := json.NewDecoder(resp.Body)
		for dec.More() {
			var e map[string]any
			if err := dec.Decode(&e); err != nil {
				t.Fatal(err)
			}
			events = append(events, e)
		}
		return resp.StatusCode, events
	}
	_, all := get("")
	if len(all) != 4 {
		t.Fatalf("events = %v", all)
	}
	seq := func(e map[string]any) string { return fmt.Sprint(e["seq"]) }
	tests := []struct {
		name, query string
		want        []map[string]any
	}{
		{"whole", "", all},
		{"after the second", "?since=" + seq(all[1]), all[2:]},
		{"a page of two", "?limit=2", all[:2]},
		{"the page after", "?limit=2&since=" + seq(all[1]), all[2:]},
		{"past the end", "?since=" + seq(all[3]), nil},
		{"by type", "?type=patched", all[1:]},
		{"by types", "?type=created&type=deleted", all[:1]},
		{"by comma", "?type=created,patched&limit=1", all[:1]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, got := get(tc.query)
			if code != 200 || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("%d %v, want %v", code, got, tc.want)
			}
		})
	}
	if code, _, _ := s.call(t, "GET", "/threads/"+uuid.NewString()+"/events", ""); code != 404 {
		t.Fatalf("unknown thread: %d", code)
	}
	if code, _, _ := s.call(t, "GET", "/threads/"+uuid.NewString()+"/events?since=3", ""); code != 404 {
		t.Fatalf("unknown thread from a sequence: %d", code)
	}
	code, _, body := s.call(t, "GET", "/threads/nope/events?since=-1&type=Bad.Type", "")
	if code != 422 || len(body.(map[string]any)["detail"].([]any)) != 3 {
		t.Fatalf("bad query: %d %v", code, body)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	s := startStack(t)
	if code, _, body := s.call(t, "GET", "/ok", ""); code != 200 || field(body, "ok") != true {
		t.Fatalf("/ok: %d %v", code, body)
	}
	s.call(t, "POST", "/threads", `{}`)
	resp, err := http.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(raw), `jetgraph_http_requests_total{method="POST",route="/threads",status="200"} 1`) {
		t.Fatalf("request counter missing:\n%s", raw)
	}
	_, _, js := s.call(t, "GET", "/metrics?format=json", "")
	if field(js, "jetgraph_http_requests_total", "type") != "COUNTER" {
		t.Fatalf("json metrics: %v", field(js, "jetgraph_http_requests_total"))
	}
}

func TestHealthFailsWhenTheLogIsDown(t *testing.T) {
	s := startStack(t)
	s.P.Log.Close()
	if code, _, body := s.call(t, "GET", "/ok", ""); code != 503 || field(body, "detail") == nil {
		t.Fatalf("/ok with the log closed: %d %v", code, body)
	}
}

// TestDefaultThreadTTL: langgraph.json's checkpointer.ttl.default_ttl is the TTL of a thread
// created without one (shown with include=ttl, swept when it passes); a thread's own TTL wins.
func TestDefaultThreadTTL(t *testing.T) {
	s := startStack(t)
	s.P.Threads.SetDefaultTTL(&engine.TTLSpec{Strategy: "delete", Minutes: 0.0001}) // 6 ms
	_, _, th := s.call(t, "POST", "/threads", `{}`)
	id := field(th, "thread_id").(string)
	if _, _, got := s.call(t, "GET", "/threads/"+id+"?include=ttl", ""); field(got, "ttl", "ttl") != 0.0001 || field(got, "ttl", "strategy") != "delete" {
		t.Fatalf("a thread without a ttl: %v", got)
	}
	_, _, keep := s.call(t, "POST", "/threads", `{"ttl":60}`)
	sweepUntilGone(t, s, id)
	if code, _, _ := s.call(t, "GET", "/threads/"+id, ""); code != 404 {
		t.Fatal("a thread past the default TTL is still there")
	}
	if code, _, _ := s.call(t, "GET", "/threads/"+field(keep, "thread_id").(string), ""); code != 200 {
		t.Fatal("a thread with its own TTL was deleted")
	}
}
