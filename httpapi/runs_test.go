package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/httpapitest"
)

// startRunStack starts a stack serving the example graphs with the run API wired (Deps.Runs);
// mutate may change the dependencies (ConfigurableHeaders).
func startRunStack(t *testing.T, mutate func(*httpapi.Deps)) *stack {
	t.Helper()
	base := startStackWith(t, graphs.Examples())
	p := base.P
	d := httpapi.Deps{Threads: p.Threads, Assistants: p.Assistants, Store: p.Store, Events: p.Log, Health: p.Health,
		Runner: p.Runner, Graphs: p.Graphs, Runs: p.Runs}
	if mutate != nil {
		mutate(&d)
	}
	ts := serve(t, httpapi.New(d).Handler())
	return &stack{URL: ts.URL, P: p}
}

// must calls and fails the test unless the status is want.
func (s *stack) must(t testing.TB, want int, method, path, body string) (http.Header, any) {
	t.Helper()
	code, h, v := s.call(t, method, path, body)
	if code != want {
		t.Fatalf("%s %s: status %d, want %d: %v", method, path, code, want, v)
	}
	return h, v
}

// newThread creates a thread and returns its id.
func (s *stack) newThread(t testing.TB) string {
	t.Helper()
	_, th := s.must(t, 200, "POST", "/threads", `{}`)
	return field(th, "thread_id").(string)
}

// startRun creates a run on thread and returns its id.
func (s *stack) startRun(t testing.TB, thread, body string) string {
	t.Helper()
	_, run := s.must(t, 200, "POST", "/threads/"+thread+"/runs", body)
	return field(run, "run_id").(string)
}

// runStatus returns the status of a run, "" once it is gone (404).
func (s *stack) runStatus(t testing.TB, thread, run string) string {
	t.Helper()
	code, _, v := s.call(t, "GET", "/threads/"+thread+"/runs/"+run, "")
	if code == 404 {
		return ""
	}
	if code != 200 {
		t.Fatalf("get run: %d %v", code, v)
	}
	return field(v, "status").(string)
}

// contents returns the contents of the messages of a values object.
func contents(values any) []string {
	msgs, _ := field(values, "messages").([]any)
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i], _ = field(m, "content").(string)
	}
	return out
}

// stateTexts returns the message contents of the thread's current state.
func (s *stack) stateTexts(t testing.TB, thread string) []string {
	t.Helper()
	_, st := s.must(t, 200, "GET", "/threads/"+thread+"/state", "")
	return contents(field(st, "values"))
}

func TestRunCreateJoinGet(t *testing.T) {
	s := startRunStack(t, nil)
	tid := s.newThread(t)
	h, run := s.must(t, 200, "POST", "/threads/"+tid+"/runs",
		`{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"hi"}]},"metadata":{"k":"v"}}`)
	rid := field(run, "run_id").(string)
	if got, want := h.Get("Content-Location"), "/threads/"+tid+"/runs/"+rid; got != want {
		t.Errorf("Content-Location %q, want %q", got, want)
	}
	// The reference servers answer the run as inserted (pending); runs.Service.Create re-reads
	// the projection, where a fast worker may already have moved it on (reported; the strict
	// check is TestRunCancel/pending, on a run queued behind a busy one).
	if st := field(run, "status"); !slices.Contains([]any{"pending", "running", "success"}, st) {
		t.Errorf("created run status %v", st)
	}
	if field(run, "thread_id") != tid || field(run, "multitask_strategy") != "enqueue" || field(run, "metadata", "k") != "v" {
		t.Errorf("created run: %v", run)
	}
	if field(run, "kwargs", "config", "configurable", "run_id") != rid || field(run, "kwargs", "stream_mode") == nil {
		t.Errorf("kwargs: %v", field(run, "kwargs"))
	}
	for _, internal := range []string{"attempt", "run_at", "started_at", "ended_at", "cancel", "webhook", "checkpoint", "error", "temporary"} {
		if _, ok := run.(map[string]any)[internal]; ok {
			t.Errorf("internal field %q shown: %v", internal, run)
		}
	}

	_, out := s.must(t, 200, "GET", "/threads/"+tid+"/runs/"+rid+"/join", "")
	if got := contents(out); !slices.Equal(got, []string{"hi", "echo: hi"}) {
		t.Fatalf("join values: %v", out)
	}
	if st := s.runStatus(t, tid, rid); st != "success" {
		t.Fatalf("status after join %q", st)
	}
	// Joining an ended run answers at once, the same.
	_, again := s.must(t, 200, "GET", "/threads/"+tid+"/runs/"+rid+"/join", "")
	if !slices.Equal(contents(again), contents(out)) {
		t.Fatalf("second join: %v", again)
	}
	code, _, v := s.call(t, "GET", "/threads/"+tid+"/runs/"+newID(), "")
	if code != 404 || field(v, "detail") != "Run not found" {
		t.Fatalf("unknown run: %d %v", code, v)
	}
	code, _, v = s.call(t, "GET", "/threads/"+tid+"/runs/nope/join", "")
	if code != 422 || !hasLoc(v, "path.run_id") {
		t.Fatalf("bad run id: %d %v", code, v)
	}
}

func TestRunWait(t *testing.T) {
	s := startRunStack(t, nil)
	t.Run("echo", func(t *testing.T) {
		tid := s.newThread(t)
		h, out := s.must(t, 200, "POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"echo","input":{"messages":"yo"}}`)
		if got := contents(out); !slices.Equal(got, []string{"yo", "echo: yo"}) {
			t.Fatalf("values: %v", out)
		}
		if !strings.HasPrefix(h.Get("Content-Location"), "/threads/"+tid+"/runs/") {
			t.Errorf("Content-Location %q", h.Get("Content-Location"))
		}
	})
	t.Run("agent", func(t *testing.T) {
		tid := s.newThread(t)
		_, out := s.must(t, 200, "POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"foo"}]}}`)
		msgs, _ := field(out, "messages").([]any)
		if len(msgs) < 2 || field(msgs[len(msgs)-1], "type") != "ai" {
			t.Fatalf("agent values: %v", out)
		}
	})
	t.Run("error", func(t *testing.T) {
		tid := s.newThread(t)
		_, out := s.must(t, 200, "POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"error","input":{"messages":"x"}}`)
		if field(out, "__error__", "error") != "CustomError" || field(out, "__error__", "message") != "Boo!" {
			t.Fatalf("error run: %v", out)
		}
		_, list := s.must(t, 200, "GET", "/threads/"+tid+"/runs", "")
		if l := list.([]any); len(l) != 1 || field(l[0], "status") != "error" {
			t.Fatalf("error run listed: %v", list)
		}
	})
	t.Run("feedback keys", func(t *testing.T) {
		tid := s.newThread(t)
		_, out := s.must(t, 200, "POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"echo","input":{"messages":"x"},"feedback_keys":["score"]}`)
		if u, _ := field(out, "__feedback__", "score").(string); !strings.Contains(u, "key=score") {
			t.Fatalf("__feedback__: %v", out)
		}
	})
	// A wait answers with the values the run ended with, handed over by the worker of this
	// process; a join reads the thread's state: both answers are the same.
	for _, tc := range []struct{ name, body string }{
		{"echo", `{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"hi","id":"m1"}]}}`},
		{"agent", `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"foo"}]}}`},
		{"nested", `{"assistant_id":"nested","input":{"messages":[]}}`},
	} {
		t.Run("wait answers as join: "+tc.name, func(t *testing.T) {
			tid := s.newThread(t)
			h, waited := s.must(t, 200, "POST", "/threads/"+tid+"/runs/wait", tc.body)
			_, joined := s.must(t, 200, "GET", h.Get("Content-Location")+"/join", "")
			w, _ := json.Marshal(waited)
			j, _ := json.Marshal(joined)
			if string(w) != string(j) {
				t.Fatalf("wait answered\n%s\njoin answered\n%s", w, j)
			}
		})
	}
	t.Run("interrupt_before", func(t *testing.T) {
		tid := s.newThread(t)
		h, out := s.must(t, 200, "POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"echo","input":{"messages":"x"},"interrupt_before":["echo"]}`)
		if !slices.Equal(contents(out), []string{"x"}) {
			t.Fatalf("values before echo: %v", out)
		}
		rid := h.Get("Content-Location")[strings.LastIndex(h.Get("Content-Location"), "/")+1:]
		if st := s.runStatus(t, tid, rid); st != "interrupted" {
			t.Fatalf("status %q, want interrupted", st)
		}
	})
	// A run's own interrupt lists are not checked against the graph, as in LangGraph: they apply
	// to its root graph's nodes, and other names (a subgraph's node, no node) never match.
	for _, tc := range []struct {
		name, graph, before, after, status string
	}{
		{"interrupt_before a subgraph's node", "nested", `["c_one"]`, `[]`, "success"},
		{"interrupt_after no node", "echo", `[]`, `["nope"]`, "success"},
		{"interrupt_before every node", "nested", `"*"`, `[]`, "interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tid := s.newThread(t)
			h, _ := s.must(t, 200, "POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"`+tc.graph+`","input":{"messages":["x"]},`+
				`"interrupt_before":`+tc.before+`,"interrupt_after":`+tc.after+`}`)
			rid := h.Get("Content-Location")[strings.LastIndex(h.Get("Content-Location"), "/")+1:]
			if st := s.runStatus(t, tid, rid); st != tc.status {
				t.Fatalf("status %q, want %s", st, tc.status)
			}
		})
	}
}

func TestRunListGetDelete(t *testing.T) {
	s := startRunStack(t, nil)
	tid := s.newThread(t)
	var ids []string
	for i := range 3 {
		_, run := s.must(t, 200, "POST", "/threads/"+tid+"/runs/wait", fmt.Sprintf(`{"assistant_id":"echo","input":{"messages":"m%d"}}`, i))
		_ = run
		_, list := s.must(t, 200, "GET", "/threads/"+tid+"/runs?limit=1", "")
		ids = append(ids, field(list.([]any)[0], "run_id").(string))
	}
	_, list := s.must(t, 200, "GET", "/threads/"+tid+"/runs", "")
	var got []string
	for _, r := range list.([]any) {
		got = append(got, field(r, "run_id").(string))
	}
	if want := []string{ids[2], ids[1], ids[0]}; !slices.Equal(got, want) {
		t.Fatalf("list order %v, want newest first %v", got, want)
	}
	_, page := s.must(t, 200, "GET", "/threads/"+tid+"/runs?limit=1&offset=1", "")
	if p := page.([]any); len(p) != 1 || field(p[0], "run_id") != ids[1] {
		t.Fatalf("page: %v", page)
	}
	_, sel := s.must(t, 200, "GET", "/threads/"+tid+"/runs?select=run_id&select=status&status=success", "")
	if p := sel.([]any); len(p) != 3 || len(p[0].(map[string]any)) != 2 || field(p[0], "status") != "success" {
		t.Fatalf("select: %v", sel)
	}
	_, none := s.must(t, 200, "GET", "/threads/"+tid+"/runs?status=pending", "")
	if p := none.([]any); len(p) != 0 {
		t.Fatalf("status filter: %v", none)
	}
	code, _, v := s.call(t, "GET", "/threads/"+tid+"/runs?limit=0&status=done&select=nope", "")
	if code != 422 || !hasLoc(v, "query.limit", "query.status", "query.select.0") {
		t.Fatalf("bad query: %d %v", code, v)
	}
	code, _, v = s.call(t, "GET", "/threads/"+newID()+"/runs", "")
	if code != 404 || !strings.HasPrefix(fmt.Sprint(field(v, "detail")), "Thread with ID") {
		t.Fatalf("runs of an unknown thread: %d %v", code, v)
	}
	_, fresh := s.must(t, 200, "GET", "/threads/"+s.newThread(t)+"/runs", "")
	if l, ok := fresh.([]any); !ok || len(l) != 0 {
		t.Fatalf("runs of a new thread: %#v", fresh)
	}

	s.must(t, 200, "GET", "/threads/"+tid+"/runs/"+ids[0], "")
	s.must(t, 204, "DELETE", "/threads/"+tid+"/runs/"+ids[0], "")
	s.must(t, 404, "GET", "/threads/"+tid+"/runs/"+ids[0], "")
	s.must(t, 404, "DELETE", "/threads/"+tid+"/runs/"+ids[0], "")

	busy := s.startRun(t, tid, `{"assistant_id":"delay","input":{"delay":60000,"messages":"x"}}`)
	code, _, v = s.call(t, "DELETE", "/threads/"+tid+"/runs/"+busy, "")
	if code != 409 {
		t.Fatalf("delete an active run: %d %v", code, v)
	}
	s.must(t, 204, "POST", "/threads/"+tid+"/runs/"+busy+"/cancel?wait=1", "")
	s.must(t, 204, "DELETE", "/threads/"+tid+"/runs/"+busy, "")
}

func TestRunRejectWhileBusy(t *testing.T) {
	s := startRunStack(t, nil)
	tid := s.newThread(t)
	first := s.startRun(t, tid, `{"assistant_id":"delay","input":{"delay":60000,"messages":"x"}}`)
	code, _, v := s.call(t, "POST", "/threads/"+tid+"/runs", `{"assistant_id":"delay","input":{"delay":0,"messages":"y"},"multitask_strategy":"reject"}`)
	if code != 409 || field(v, "detail") != runs.RejectDetail {
		t.Fatalf("reject while busy: %d %v", code, v)
	}
	code, _, v = s.call(t, "POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"delay","input":{"delay":0,"messages":"y"},"multitask_strategy":"reject"}`)
	if code != 409 {
		t.Fatalf("reject on wait while busy: %d %v", code, v)
	}
	_, list := s.must(t, 200, "GET", "/threads/"+tid+"/runs", "")
	if len(list.([]any)) != 1 {
		t.Fatalf("a rejected run was recorded: %v", list)
	}
	s.must(t, 204, "POST", "/threads/"+tid+"/runs/"+first+"/cancel?wait=1", "")
	// Idle again: reject creates.
	s.must(t, 200, "POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"delay","input":{"delay":0,"messages":"z"},"multitask_strategy":"reject"}`)
}

func TestRunEnqueueRunsInOrder(t *testing.T) {
	s := startRunStack(t, nil)
	tid := s.newThread(t)
	first := s.startRun(t, tid, `{"assistant_id":"delay","input":{"delay":300,"messages":"one"}}`)
	second := s.startRun(t, tid, `{"assistant_id":"delay","input":{"delay":0,"messages":"two"}}`)
	s.must(t, 200, "GET", "/threads/"+tid+"/runs/"+second+"/join", "")
	if st := s.runStatus(t, tid, first); st != "success" {
		t.Fatalf("first run %q after the second ended", st)
	}
	want := []string{"one", "finished after 300ms", "two", "finished after 0ms"}
	if got := s.stateTexts(t, tid); !slices.Equal(got, want) {
		t.Fatalf("thread messages %q, want %q", got, want)
	}
}

// startBusy creates a long delay run on thread and waits until it runs and its input is in the
// thread's state.
func (s *stack) startBusy(t *testing.T, thread, text string) string {
	t.Helper()
	rid := s.startRun(t, thread, `{"assistant_id":"delay","input":{"delay":60000,"messages":"`+text+`"}}`)
	eventually(t, "the long run runs", func() bool { return s.runStatus(t, thread, rid) == "running" })
	eventually(t, "the long run's input is in the state", func() bool {
		return slices.Contains(s.stateTexts(t, thread), text)
	})
	return rid
}

func TestRunInterruptStrategy(t *testing.T) {
	s := startRunStack(t, nil)
	tid := s.newThread(t)
	first := s.startBusy(t, tid, "long")
	second := s.startRun(t, tid, `{"assistant_id":"delay","input":{"delay":0,"messages":"next"},"multitask_strategy":"interrupt"}`)
	s.must(t, 200, "GET", "/threads/"+tid+"/runs/"+second+"/join", "")
	if st := s.runStatus(t, tid, first); st != "interrupted" {
		t.Fatalf("interrupted run's status %q", st)
	}
	if st := s.runStatus(t, tid, second); st != "success" {
		t.Fatalf("second run's status %q", st)
	}
	want := []string{"long", "next", "finished after 0ms"}
	if got := s.stateTexts(t, tid); !slices.Equal(got, want) {
		t.Fatalf("thread messages %q, want %q (the interrupted run's checkpoints kept)", got, want)
	}
}

func TestRunRollbackStrategy(t *testing.T) {
	s := startRunStack(t, nil)
	tid := s.newThread(t)
	s.must(t, 200, "POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"delay","input":{"delay":0,"messages":"before"}}`)
	before := s.stateTexts(t, tid)
	first := s.startBusy(t, tid, "doomed")
	second := s.startRun(t, tid, `{"assistant_id":"delay","input":{"delay":0,"messages":"after"},"multitask_strategy":"rollback"}`)
	s.must(t, 200, "GET", "/threads/"+tid+"/runs/"+second+"/join", "")
	eventually(t, "the rolled back run is gone", func() bool { return s.runStatus(t, tid, first) == "" })
	want := append(slices.Clone(before), "after", "finished after 0ms")
	if got := s.stateTexts(t, tid); !slices.Equal(got, want) {
		t.Fatalf("thread messages %q, want %q (the rolled back run undone)", got, want)
	}
	_, hist := s.must(t, 200, "POST", "/threads/"+tid+"/history", `{"limit":100}`)
	for _, cp := range hist.([]any) {
		if field(cp, "metadata", "run_id") == first {
			t.Fatalf("a checkpoint of the rolled back run is left: %v", cp)
		}
	}
}

func TestRunCancel(t *testing.T) {
	s := startRunStack(t, nil)
	tid := s.newThread(t)
	t.Run("wait", func(t *testing.T) {
		rid := s.startBusy(t, tid, "a")
		s.must(t, 204, "POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=true&action=interrupt", "")
		if st := s.runStatus(t, tid, rid); st != "interrupted" {
			t.Fatalf("status after cancel with wait: %q", st)
		}
		_, out := s.must(t, 200, "GET", "/threads/"+tid+"/runs/"+rid+"/join", "")
		if !slices.Contains(contents(out), "a") {
			t.Fatalf("join of an interrupted run: %v", out)
		}
	})
	t.Run("no wait", func(t *testing.T) {
		rid := s.startBusy(t, tid, "b")
		s.must(t, 202, "POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=0", "")
		eventually(t, "the run is interrupted", func() bool { return s.runStatus(t, tid, rid) == "interrupted" })
	})
	t.Run("pending", func(t *testing.T) {
		busy := s.startBusy(t, tid, "c")
		queued := s.startRun(t, tid, `{"assistant_id":"delay","input":{"delay":0,"messages":"queued"}}`)
		if st := s.runStatus(t, tid, queued); st != "pending" {
			t.Fatalf("a run behind a running one is %q", st)
		}
		s.must(t, 204, "POST", "/threads/"+tid+"/runs/"+queued+"/cancel?wait=1", "")
		if st := s.runStatus(t, tid, queued); st != "interrupted" {
			t.Fatalf("cancelled pending run: %q", st)
		}
		s.must(t, 204, "POST", "/threads/"+tid+"/runs/"+busy+"/cancel?wait=1", "")
		if slices.Contains(s.stateTexts(t, tid), "queued") {
			t.Fatalf("a cancelled pending run ran")
		}
	})
	t.Run("rollback", func(t *testing.T) {
		before := s.stateTexts(t, tid)
		rid := s.startBusy(t, tid, "d")
		s.must(t, 204, "POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=1&action=rollback", "")
		if st := s.runStatus(t, tid, rid); st != "" {
			t.Fatalf("rolled back run still there: %q", st)
		}
		if got := s.stateTexts(t, tid); !slices.Equal(got, before) {
			t.Fatalf("state after rollback %q, want %q", got, before)
		}
	})
	t.Run("errors", func(t *testing.T) {
		code, _, v := s.call(t, "POST", "/threads/"+tid+"/runs/"+newID()+"/cancel", "")
		if code != 404 {
			t.Fatalf("cancel an unknown run: %d %v", code, v)
		}
		code, _, v = s.call(t, "POST", "/threads/"+tid+"/runs/"+newID()+"/cancel?action=explode&wait=maybe", "")
		if code != 422 || !hasLoc(v, "query.action", "query.wait") {
			t.Fatalf("bad cancel query: %d %v", code, v)
		}
	})
}

func TestRunWaitCancelsOnDisconnect(t *testing.T) {
	s := startRunStack(t, nil)
	tid := s.newThread(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/threads/"+tid+"/runs/wait",
			strings.NewReader(`{"assistant_id":"delay","input":{"delay":60000,"messages":"x"},"on_disconnect":"cancel"}`))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	var rid string
	eventually(t, "the waited run runs", func() bool {
		_, list := s.must(t, 200, "GET", "/threads/"+tid+"/runs", "")
		if l := list.([]any); len(l) == 1 && field(l[0], "status") == "running" {
			rid = field(l[0], "run_id").(string)
			return true
		}
		return false
	})
	cancel()
	<-done
	eventually(t, "the run of the departed client is cancelled", func() bool { return s.runStatus(t, tid, rid) == "interrupted" })
}

func TestStatelessRuns(t *testing.T) {
	s := startRunStack(t, nil)
	ctx := context.Background()
	t.Run("wait deletes the thread", func(t *testing.T) {
		h, out := s.must(t, 200, "POST", "/runs/wait", `{"assistant_id":"echo","input":{"messages":"hi"}}`)
		if !slices.Equal(contents(out), []string{"hi", "echo: hi"}) {
			t.Fatalf("values: %v", out)
		}
		loc := h.Get("Content-Location")
		tid, rid, ok := strings.Cut(strings.TrimPrefix(loc, "/threads/"), "/runs/")
		if !ok || !strings.HasPrefix(loc, "/threads/") || tid == "" || rid == "" {
			t.Fatalf("Content-Location %q names no thread and run", loc)
		}
		s.must(t, 404, "GET", "/threads/"+tid, "")
		if _, err := s.P.Runs.GetByID(ctx, rid); err == nil {
			t.Fatalf("the temporary thread of a waited stateless run is left")
		}
	})
	t.Run("wait keeps the thread", func(t *testing.T) {
		h, _ := s.must(t, 200, "POST", "/runs/wait", `{"assistant_id":"echo","input":{"messages":"hi"},"on_completion":"keep"}`)
		loc := h.Get("Content-Location")
		rec, err := s.P.Runs.GetByID(ctx, loc[strings.LastIndex(loc, "/")+1:])
		if err != nil {
			t.Fatal(err)
		}
		if loc != "/threads/"+rec.ThreadID+"/runs/"+rec.RunID {
			t.Fatalf("Content-Location %q does not name the kept thread %s", loc, rec.ThreadID)
		}
		s.must(t, 200, "GET", "/threads/"+rec.ThreadID, "")
	})
	t.Run("wait error", func(t *testing.T) {
		_, out := s.must(t, 200, "POST", "/runs/wait", `{"assistant_id":"error","input":{"messages":"x"}}`)
		if field(out, "__error__", "error") != "CustomError" {
			t.Fatalf("stateless error: %v", out)
		}
	})
	t.Run("background run deletes its thread", func(t *testing.T) {
		h, run := s.must(t, 200, "POST", "/runs", `{"assistant_id":"echo","input":{"messages":"hi"}}`)
		rid, tid := field(run, "run_id").(string), field(run, "thread_id").(string)
		if h.Get("Content-Location") != "/runs/"+rid {
			t.Errorf("Content-Location %q", h.Get("Content-Location"))
		}
		if field(run, "kwargs", "temporary") != true {
			t.Errorf("kwargs.temporary of a stateless run (on_completion delete) = %v, want true", field(run, "kwargs", "temporary"))
		}
		eventually(t, "the temporary thread is deleted", func() bool {
			code, _, _ := s.call(t, "GET", "/threads/"+tid, "")
			return code == 404
		})
	})
	t.Run("background run keeps its thread", func(t *testing.T) {
		_, run := s.must(t, 200, "POST", "/runs", `{"assistant_id":"echo","input":{"messages":"hi"},"on_completion":"keep"}`)
		tid, rid := field(run, "thread_id").(string), field(run, "run_id").(string)
		_, out := s.must(t, 200, "GET", "/threads/"+tid+"/runs/"+rid+"/join", "")
		if !slices.Equal(contents(out), []string{"hi", "echo: hi"}) {
			t.Fatalf("kept thread's values: %v", out)
		}
	})
}

func TestRunBatch(t *testing.T) {
	s := startRunStack(t, nil)
	count := func() float64 {
		_, n := s.must(t, 200, "POST", "/threads/count", `{}`)
		return n.(float64)
	}
	before := count()
	code, _, v := s.call(t, "POST", "/runs/batch", `[{"assistant_id":"echo","input":{"messages":"a"}},{"assistant_id":"echo","multitask_strategy":"nope"},{"after_seconds":-1}, 7]`)
	if code != 422 || !hasLoc(v, "body.1.multitask_strategy", "body.2.assistant_id", "body.2.after_seconds", "body.3") {
		t.Fatalf("bad batch: %d %v", code, v)
	}
	code, _, v = s.call(t, "POST", "/runs/batch", `[{"assistant_id":"echo"},{"assistant_id":"nobody"}]`)
	if code != 404 {
		t.Fatalf("batch with an unknown assistant: %d %v", code, v)
	}
	if after := count(); after != before {
		t.Fatalf("a refused batch created threads: %v -> %v", before, after)
	}
	code, _, v = s.call(t, "POST", "/runs/batch", `{"assistant_id":"echo"}`)
	if code != 422 || !hasLoc(v, "body") {
		t.Fatalf("batch of an object: %d %v", code, v)
	}

	_, out := s.must(t, 200, "POST", "/runs/batch", `[{"assistant_id":"echo","input":{"messages":"a"},"on_completion":"keep"},{"assistant_id":"echo","input":{"messages":"b"},"on_completion":"keep"}]`)
	list := out.([]any)
	if len(list) != 2 {
		t.Fatalf("batch: %v", out)
	}
	for i, want := range []string{"a", "b"} {
		tid, rid := field(list[i], "thread_id").(string), field(list[i], "run_id").(string)
		_, vals := s.must(t, 200, "GET", "/threads/"+tid+"/runs/"+rid+"/join", "")
		if !slices.Equal(contents(vals), []string{want, "echo: " + want}) {
			t.Fatalf("batch run %d: %v", i, vals)
		}
	}
	_, empty := s.must(t, 200, "POST", "/runs/batch", `[]`)
	if l, ok := empty.([]any); !ok || len(l) != 0 {
		t.Fatalf("empty batch: %#v", empty)
	}
}

func TestRunsCancelMany(t *testing.T) {
	s := startRunStack(t, nil)
	t.Run("by status", func(t *testing.T) {
		tid := s.newThread(t)
		busy := s.startBusy(t, tid, "a")
		queued := s.startRun(t, tid, `{"assistant_id":"delay","input":{"delay":0,"messages":"b"}}`)
		s.must(t, 204, "POST", "/runs/cancel", `{"thread_id":"`+tid+`","status":"all"}`)
		for _, rid := range []string{busy, queued} {
			eventually(t, "the runs are interrupted", func() bool { return s.runStatus(t, tid, rid) == "interrupted" })
		}
	})
	t.Run("by id", func(t *testing.T) {
		tid := s.newThread(t)
		busy := s.startBusy(t, tid, "a")
		queued := s.startRun(t, tid, `{"assistant_id":"delay","input":{"delay":0,"messages":"b"}}`)
		// All or nothing: an unknown run among those named cancels none of them.
		s.must(t, 404, "POST", "/runs/cancel", `{"thread_id":"`+tid+`","run_ids":["`+queued+`","`+newID()+`"]}`)
		if st := s.runStatus(t, tid, queued); st != "pending" {
			t.Fatalf("a run was cancelled by a request that failed: %q", st)
		}
		s.must(t, 204, "POST", "/runs/cancel?action=interrupt", `{"run_ids":["`+queued+`"]}`)
		eventually(t, "the named run is interrupted", func() bool { return s.runStatus(t, tid, queued) == "interrupted" })
		if st := s.runStatus(t, tid, busy); st != "running" {
			t.Fatalf("a run not named was cancelled: %q", st)
		}
		s.must(t, 204, "POST", "/runs/cancel?action=rollback", `{"thread_id":"`+tid+`","run_ids":["`+busy+`"]}`)
		eventually(t, "the rolled back run is gone", func() bool { return s.runStatus(t, tid, busy) == "" })
	})
	t.Run("errors", func(t *testing.T) {
		code, _, v := s.call(t, "POST", "/runs/cancel?action=nope", `{"run_ids":["x"],"status":"done"}`)
		if code != 422 || !hasLoc(v, "query.action", "body.run_ids.0", "body.status") {
			t.Fatalf("bad cancel: %d %v", code, v)
		}
		code, _, v = s.call(t, "POST", "/runs/cancel", `{}`)
		if code != 422 || !hasLoc(v, "body.run_ids") {
			t.Fatalf("cancel of nothing: %d %v", code, v)
		}
		code, _, v = s.call(t, "POST", "/runs/cancel", `{"run_ids":["`+newID()+`"]}`)
		if code != 404 {
			t.Fatalf("cancel of an unknown run: %d %v", code, v)
		}
	})
}

func TestRunValidation(t *testing.T) {
	s := startRunStack(t, nil)
	tid := s.newThread(t)
	tests := []struct {
		name, path, body string
		want             []string
	}{
		{"every problem", "/threads/" + tid + "/runs",
			`{"assistant_id":"delay","multitask_strategy":"nope","after_seconds":-1,"interrupt_before":["nope"],"interrupt_after":"all",` +
				`"webhook":"ftp://example.com/x","stream_mode":["values","bogus"],"durability":"never","on_disconnect":"x","if_not_exists":"maybe",` +
				`"feedback_keys":"score","checkpoint_id":"x","config":[],"metadata":"m","command":7,"stream_subgraphs":"sure"}`,
			[]string{"body.multitask_strategy", "body.after_seconds", "body.interrupt_after", "body.webhook",
				"body.stream_mode.1", "body.durability", "body.on_disconnect", "body.if_not_exists", "body.feedback_keys", "body.checkpoint_id",
				"body.config", "body.metadata", "body.command", "body.stream_subgraphs"}},
		{"missing assistant", "/threads/" + tid + "/runs/wait", `{"input":{}}`, []string{"body.assistant_id"}},
		{"bad thread id", "/threads/x/runs", `{"assistant_id":"echo"}`, []string{"path.thread_id"}},
		{"stringified stream modes", "/runs", `{"assistant_id":"echo","stream_mode":"[\"values\",\"nope\"]"}`, []string{"body.stream_mode.1"}},
		{"stateless on_completion", "/runs/wait", `{"assistant_id":"echo","on_completion":"never"}`, []string{"body.on_completion"}},
		{"relative webhook", "/threads/" + tid + "/runs", `{"assistant_id":"echo","webhook":"/hook"}`, []string{"body.webhook"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, v := s.call(t, "POST", tc.path, tc.body)
			if code != 422 || !hasLoc(v, tc.want...) {
				t.Fatalf("status %d, want 422 at %v: %v", code, tc.want, v)
			}
		})
	}
	_, list := s.must(t, 200, "GET", "/threads/"+tid+"/runs", "")
	if len(list.([]any)) != 0 {
		t.Fatalf("refused requests created runs: %v", list)
	}

	// An unknown assistant is a 404 and creates nothing, not even the thread if_not_exists names.
	ghost := newID()
	code, _, v := s.call(t, "POST", "/threads/"+ghost+"/runs", `{"assistant_id":"nobody","if_not_exists":"create"}`)
	want := `No assistant found for "nobody". Make sure the assistant ID is for a valid assistant or a valid graph ID.`
	if code != 404 || field(v, "detail") != want {
		t.Fatalf("unknown assistant: %d %v", code, v)
	}
	s.must(t, 404, "GET", "/threads/"+ghost, "")
	code, _, v = s.call(t, "POST", "/threads/"+ghost+"/runs", `{"assistant_id":"echo"}`)
	if code != 404 || field(v, "detail") != "Thread with ID "+ghost+" not found" {
		t.Fatalf("run on an unknown thread: %d %v", code, v)
	}
	_, out := s.must(t, 200, "POST", "/threads/"+ghost+"/runs/wait", `{"assistant_id":"echo","input":{"messages":"x"},"if_not_exists":"create"}`)
	if !slices.Equal(contents(out), []string{"x", "echo: x"}) {
		t.Fatalf("if_not_exists create: %v", out)
	}
	// Valid forms: "*", a stringified list of modes, a webhook, after_seconds 0, a checkpoint.
	s.must(t, 200, "POST", "/threads/"+tid+"/runs/wait",
		`{"assistant_id":"echo","input":{"messages":"x"},"interrupt_after":"*","stream_mode":"[\"values\",\"updates\"]",`+
			`"webhook":"http://127.0.0.1:1/hook","after_seconds":0,"durability":"sync","feedback_keys":[]}`)
}

// TestRunConfigurableHeaders: http.configurable_headers opts headers into a run's configurable
// as the reference does: the includes' headers but the excludes', over the body's values, never
// a credential (even included by name), and none without includes.
func TestRunConfigurableHeaders(t *testing.T) {
	body := `{"assistant_id":"agent_simple","input":{"messages":"hi"}}`
	header := map[string]string{"X-Configurable-Header": "from-header", "X-Api-Key": "secret", "Authorization": "Bearer secret",
		"X-Tenant-Id": "secret", "X-Hidden": "no", "User-Agent": "ua"}

	on := startRunStack(t, func(d *httpapi.Deps) {
		d.ConfigurableHeaders = engine.HeaderPatterns{Include: []string{"x-*", "authorization", "X-Tenant-ID"}, Exclude: []string{"x-hid*"}}
	})
	tid := on.newThread(t)
	code, _, out := on.do(t, "POST", "/threads/"+tid+"/runs/wait", body, header)
	if msgs := contents(out); code != 200 || len(msgs) == 0 || msgs[len(msgs)-1] != "end: from-header" {
		t.Fatalf("with configurable_headers: %d %v", code, out)
	}
	_, list := on.must(t, 200, "GET", "/threads/"+tid+"/runs", "")
	cf := field(list.([]any)[0], "kwargs", "config", "configurable").(map[string]any)
	if cf["x-configurable-header"] != "from-header" {
		t.Errorf("configurable: %v", cf)
	}
	for _, absent := range []string{"x-api-key", "authorization", "x-tenant-id", "x-hidden", "user-agent"} {
		if _, ok := cf[absent]; ok {
			t.Errorf("header %s copied into configurable: %v", absent, cf)
		}
	}
	// The header's value wins over the body's (the reference updates configurable with the
	// headers after the body).
	_, _, out = on.do(t, "POST", "/threads/"+on.newThread(t)+"/runs/wait",
		`{"assistant_id":"agent_simple","input":{"messages":"hi"},"config":{"configurable":{"x-configurable-header":"from-body"}}}`, header)
	if msgs := contents(out); len(msgs) == 0 || msgs[len(msgs)-1] != "end: from-header" {
		t.Fatalf("header over body: %v", out)
	}

	off := startRunStack(t, nil)
	tid = off.newThread(t)
	_, _, out = off.do(t, "POST", "/threads/"+tid+"/runs/wait", body, header)
	if msgs := contents(out); len(msgs) == 0 || strings.HasPrefix(msgs[len(msgs)-1], "end: ") {
		t.Fatalf("headers copied without configurable_headers: %v", out)
	}
}

// hasLoc reports whether a 422 detail lists a problem at every dotted location of want.
func hasLoc(v any, want ...string) bool {
	list, _ := field(v, "detail").([]any)
	got := map[string]bool{}
	for _, e := range list {
		loc, _ := field(e, "loc").([]any)
		parts := make([]string, len(loc))
		for i, p := range loc {
			parts[i] = fmt.Sprint(p)
		}
		got[strings.Join(parts, ".")] = true
	}
	for _, w := range want {
		if !got[w] {
			return false
		}
	}
	return true
}

// newID is a fresh UUID string.
func newID() string { return uuid.NewString() }

// eventually and jsonText are httpapitest's, under the names this package's tests use.
var (
	eventually = httpapitest.Eventually
	jsonText   = httpapitest.JSONText
)
