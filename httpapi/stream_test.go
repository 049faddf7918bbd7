package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/streaming"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/httpapi"
)

// streamStack is a whole process with the run API and the output bus wired, served over HTTP.
type streamStack struct {
	URL    string
	P      *platform.Platform
	client *http.Client
}

// startStreamStack starts a stack serving the default graphs and the test graphs of
// streamGraphs; retention is the output stream's (0: the default).
func startStreamStack(t testing.TB, retention time.Duration) *streamStack {
	t.Helper()
	return startStreamStackWith(t, retention, nil)
}

// startStreamStackWith is startStreamStack with before called on the platform before it starts.
func startStreamStackWith(t testing.TB, retention time.Duration, before func(*platform.Platform)) *streamStack {
	t.Helper()
	ctx := context.Background()
	discard := slog.New(slog.DiscardHandler)
	l, err := eventlog.Open(ctx, eventlog.Config{Dir: t.TempDir(), Logger: discard, OutputRetention: retention})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	p := platformtest.StartWith(t, platform.Config{Graphs: streamGraphs(), Logger: discard}, l, before)
	srv := httpapi.New(httpapi.Deps{Threads: p.Threads, Assistants: p.Assistants, Store: p.Store, Runner: p.Runner,
		Graphs: p.Graphs, Runs: p.Runs, Streams: httpapi.StreamsOf(p.Streams), Outputs: p.Streams, Logger: discard})
	ts := serve(t, srv.Handler())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}
	t.Cleanup(client.CloseIdleConnections)
	return &streamStack{URL: ts.URL, P: p, client: client}
}

// streamGraphs are the default graphs, "tokens" (an AI message streamed in input.n one-word
// chunks) and "crlf" (a subgraph whose node name holds CRs and LFs, which would end an SSE
// event early and start fields of their own).
func streamGraphs() *graphs.Registry {
	r := graphs.Default()
	tokens := graph.NewBuilder("tokens").Channel("messages", graph.Messages()).Channel("n", graph.LastValue())
	tokens.Node("model", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
		n, _ := in.(graph.State)["n"].(float64)
		id := "tok-" + rt.Config.String("run_id")
		for i := 0; i < int(n); i++ {
			c := engine.MessageChunk{Content: "w ", Type: "AIMessageChunk", ID: id, AdditionalKwargs: map[string]any{},
				ResponseMetadata: map[string]any{}, ToolCalls: []engine.ToolCall{}, InvalidToolCalls: []any{}, ToolCallChunks: []engine.ToolCallChunk{}}
			rt.MessageChunk(c)
		}
		m := engine.NewMessage(engine.MessageAI, strings.Repeat("w ", int(n)))
		m.ID = id
		return map[string]any{"messages": []any{m}}, nil
	})
	r.MustRegister(graphs.Entry{ID: "tokens", Build: graphs.Static(tokens.Edge(graph.Start, "model").MustCompile(graph.CompileOptions{}))})
	inner := graph.NewBuilder("inner").Channel("x", graph.LastValue()).
		Node("leaf", func(context.Context, any, *graph.Runtime) (any, error) { return map[string]any{"x": 1}, nil }).
		Edge(graph.Start, "leaf").MustCompile(graph.CompileOptions{})
	crlf := graph.NewBuilder("crlf").Channel("x", graph.LastValue()).Subgraph("sub\r\n\r\nevent\ndata\r", inner)
	r.MustRegister(graphs.Entry{ID: "crlf", Build: graphs.Static(crlf.Edge(graph.Start, "sub\r\n\r\nevent\ndata\r").MustCompile(graph.CompileOptions{}))})
	return r
}

// sseEvent is one parsed server-sent event, or a comment.
type sseEvent struct {
	Event, Data, ID, Comment string
}

// readSSE parses an event stream, handing each event to each until it returns false or the
// stream ends.
func readSSE(r io.Reader, each func(sseEvent) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 512<<20) // large states are one line
	var e sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if e != (sseEvent{}) && !each(e) {
				return nil
			}
			e = sseEvent{}
		case strings.HasPrefix(line, ":"):
			e.Comment = strings.TrimSpace(line[1:])
		case strings.HasPrefix(line, "event: "):
			e.Event = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			if e.Data != "" {
				return fmt.Errorf("two data fields in one event: %q", line)
			}
			e.Data = line[len("data: "):]
		case strings.HasPrefix(line, "id: "):
			e.ID = line[len("id: "):]
		default:
			return fmt.Errorf("unexpected SSE line %q", line)
		}
	}
	return sc.Err()
}

// open sends a request and returns the response, its body unread.
func (s *streamStack) open(t testing.TB, ctx context.Context, method, path, body string, header map[string]string) *http.Response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// stream sends a request and reads the whole event stream.
func (s *streamStack) stream(t testing.TB, method, path, body string, header map[string]string) (*http.Response, []sseEvent) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp := s.open(t, ctx, method, path, body, header)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	var events []sseEvent
	if err := readSSE(resp.Body, func(e sseEvent) bool { events = append(events, e); return true }); err != nil {
		t.Fatal(err)
	}
	return resp, events
}

// thread creates a thread and returns its id.
func (s *streamStack) thread(t testing.TB) string {
	t.Helper()
	resp := s.open(t, context.Background(), "POST", "/threads", "{}", nil)
	defer resp.Body.Close()
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&th); err != nil || th.ThreadID == "" {
		t.Fatalf("create thread: %v", err)
	}
	return th.ThreadID
}

// status answers a request without a stream: status and body.
func (s *streamStack) status(t testing.TB, method, path, body string, header map[string]string) (int, string) {
	t.Helper()
	resp := s.open(t, context.Background(), method, path, body, header)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

func names(events []sseEvent) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Event
		if e.Comment != "" {
			out[i] = ": " + e.Comment
		}
	}
	return out
}

const fooInput = `{"messages":[{"role":"user","content":"foo"}]}`

func TestStreamHeadersAndStatelessRun(t *testing.T) {
	s := startStreamStack(t, 0)
	resp, events := s.stream(t, "POST", "/runs/stream", `{"assistant_id":"echo","input":`+fooInput+`}`, nil)
	loc, cloc := resp.Header.Get("Location"), resp.Header.Get("Content-Location")
	if !strings.HasPrefix(cloc, "/runs/") || loc != cloc+"/stream" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("headers: Location %q, Content-Location %q, Content-Type %q", loc, cloc, resp.Header.Get("Content-Type"))
	}
	if got := strings.Join(names(events), ","); got != "metadata,values,values,end" {
		t.Errorf("events = %s", got)
	}
	var md map[string]any
	_ = json.Unmarshal([]byte(events[0].Data), &md)
	if md["run_id"] != strings.TrimPrefix(cloc, "/runs/") || md["attempt"] != 1.0 {
		t.Errorf("metadata = %s", events[0].Data)
	}
	// A stateless run's output outlives its thread: joining it again replays it.
	_, again := s.stream(t, "GET", loc, "", nil)
	if strings.Join(names(again), ",") != "metadata,values,values,end" {
		t.Errorf("rejoined = %v", names(again))
	}

	tid := s.thread(t)
	resp, _ = s.stream(t, "POST", "/threads/"+tid+"/runs/stream", `{"assistant_id":"echo","input":`+fooInput+`}`, nil)
	if !strings.HasPrefix(resp.Header.Get("Content-Location"), "/threads/"+tid+"/runs/") || resp.Header.Get("Location") != resp.Header.Get("Content-Location")+"/stream" {
		t.Errorf("thread run headers: %v", resp.Header)
	}
}

func TestStreamResumeWithLastEventID(t *testing.T) {
	s := startStreamStack(t, 0)
	tid := s.thread(t)
	body := `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"foo"}],"sleep":{"steps":3,"ms":1}},"stream_mode":["values","custom","messages-tuple","updates"]}`
	resp, all := s.stream(t, "POST", "/threads/"+tid+"/runs/stream", body, nil)
	var last uint64
	for i, e := range all {
		var ms, seq uint64
		if _, err := fmt.Sscanf(e.ID, "%d-%d", &ms, &seq); err != nil {
			t.Fatalf("event %d id %q is not <ms>-<seq>", i, e.ID)
		}
		if seq < last {
			t.Fatalf("ids go back: %v", e.ID)
		}
		last = seq
	}
	loc := resp.Header.Get("Location")
	for _, k := range []int{0, 5, len(all) - 2} {
		_, later := s.stream(t, "GET", loc, "", map[string]string{"Last-Event-ID": all[k].ID})
		// Events of one message share its id: the resumed stream starts after all of them.
		first := k + 1
		for first < len(all) && all[first].ID == all[k].ID {
			first++
		}
		want := all[first:]
		if len(later) != len(want) {
			t.Fatalf("after %s: %d events, want %d: %v", all[k].ID, len(later), len(want), names(later))
		}
		for i := range want {
			if later[i] != want[i] {
				t.Fatalf("after %s: event %d = %+v, want %+v", all[k].ID, i, later[i], want[i])
			}
		}
	}
	// The plain integer form names a message: the stream resumes after all of its frames.
	msg, err := streaming.MessageOf(all[3].ID)
	if err != nil {
		t.Fatal(err)
	}
	_, later := s.stream(t, "GET", loc, "", map[string]string{"Last-Event-ID": strconv.FormatUint(msg, 10)})
	for _, e := range later {
		if m, _ := streaming.MessageOf(e.ID); m <= msg {
			t.Errorf("plain id %d: event %s of message %d resent", msg, e.ID, m)
		}
	}
	if len(later) == 0 {
		t.Errorf("plain id: nothing after message %d", msg)
	}
}

// TestStreamLastEventIDMinusOneIsFromTheStart: "-1" is what the official JS SDK sends when a
// client joins a run it has seen nothing of (useStream's joinStream): the whole stream, as a join
// without Last-Event-ID gets it, for a run's stream and for a thread's.
func TestStreamLastEventIDMinusOneIsFromTheStart(t *testing.T) {
	s := startStreamStack(t, 0)
	tid := s.thread(t)
	body := `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"foo"}]},"stream_mode":["values","updates"]}`
	resp, _ := s.stream(t, "POST", "/threads/"+tid+"/runs/stream", body, nil)
	loc := resp.Header.Get("Location")
	_, plain := s.stream(t, "GET", loc, "", nil)
	r, fromStart := s.stream(t, "GET", loc, "", map[string]string{"Last-Event-ID": "-1"})
	if r.StatusCode != 200 || len(plain) < 3 || len(fromStart) != len(plain) {
		t.Fatalf("Last-Event-ID -1: status %d, %d events, want the %d of a plain join: %v", r.StatusCode, len(fromStart), len(plain), names(fromStart))
	}
	for i := range plain {
		if fromStart[i] != plain[i] {
			t.Fatalf("event %d = %+v, want %+v", i, fromStart[i], plain[i])
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := s.open(t, ctx, "GET", "/threads/"+tid+"/stream", "", map[string]string{"Last-Event-ID": "-1"})
	if tr.StatusCode != 200 {
		t.Fatalf("thread stream with Last-Event-ID -1: %d", tr.StatusCode)
	}
	_ = tr.Body.Close()
}

func TestStreamBadInput(t *testing.T) {
	s := startStreamStack(t, 0)
	tid := s.thread(t)
	missing := "/threads/" + tid + "/runs/0190b6a5-6b6a-7b6a-9b6a-6b6a6b6a6b6a/stream"
	for _, c := range []struct {
		method, path, body string
		header             map[string]string
		status             int
		detail             string
	}{
		{"POST", "/threads/" + tid + "/runs/stream", `{"assistant_id":"echo","stream_mode":["values","nope"]}`, nil, 422, "stream_mode"},
		{"POST", "/runs/stream", `{"assistant_id":"echo","stream_mode":"[\"values\",\"bad\"]"}`, nil, 422, "stream_mode"},
		{"GET", missing, "", nil, 404, "Run not found"},
		{"GET", "/runs/0190b6a5-6b6a-7b6a-9b6a-6b6a6b6a6b6a/stream", "", nil, 404, "Run not found"},
		{"GET", missing + "?stream_mode=nope", "", nil, 422, "stream_mode"},
		{"GET", missing, "", map[string]string{"Last-Event-ID": "yesterday"}, 422, "last-event-id"},
		{"GET", missing, "", map[string]string{"Last-Event-ID": "12-x"}, 422, "last-event-id"},
		{"GET", "/threads/" + tid + "/stream?stream_mode=values", "", nil, 422, "stream_mode"},
		{"GET", "/threads/" + tid + "/stream", "", map[string]string{"Last-Event-ID": "a-b"}, 422, "last-event-id"},
		{"GET", "/threads/0190b6a5-6b6a-7b6a-9b6a-6b6a6b6a6b6a/stream", "", nil, 404, "not found"},
		{"POST", "/threads/" + tid + "/runs/stream", `{"assistant_id":"nope"}`, nil, 404, "No assistant found"},
	} {
		status, body := s.status(t, c.method, c.path, c.body, c.header)
		if status != c.status || !strings.Contains(body, c.detail) {
			t.Errorf("%s %s %v: %d %s, want %d with %q", c.method, c.path, c.header, status, body, c.status, c.detail)
		}
	}
}

func TestStreamOldLastEventIDRestarts(t *testing.T) {
	s := startStreamStack(t, time.Second)
	tid := s.thread(t)
	body := `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"foo"}],"sleep":{"steps":8,"ms":250}},"stream_mode":["custom"]}`
	resp := s.open(t, context.Background(), "POST", "/threads/"+tid+"/runs/stream", body, nil)
	var first sseEvent
	_ = readSSE(resp.Body, func(e sseEvent) bool { first = e; return false })
	resp.Body.Close()
	time.Sleep(1500 * time.Millisecond) // the metadata event expires
	_, later := s.stream(t, "GET", resp.Header.Get("Location"), "", map[string]string{"Last-Event-ID": first.ID})
	if len(later) < 3 || !strings.Contains(later[0].Comment, "older than the stream's retention") {
		t.Fatalf("events = %v", names(later))
	}
	steps := map[float64]bool{}
	for _, e := range later[1:] {
		if e.Event == "custom" {
			var c map[string]float64
			_ = json.Unmarshal([]byte(e.Data), &c)
			if steps[c["step"]] {
				t.Errorf("step %v repeated", c["step"])
			}
			steps[c["step"]] = true
		}
	}
	if steps[0] || !steps[7] || later[len(later)-1].Event != "end" {
		t.Errorf("restarted stream: %v %v", names(later), steps)
	}
}

// longRun is a run body that streams custom events for a few seconds.
func longRun(extra string) string {
	return `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"foo"}],"sleep":{"steps":40,"ms":100}},"stream_mode":["custom"]` + extra + `}`
}

func TestStreamDisconnectLeavesNothingBehind(t *testing.T) {
	s := startStreamStack(t, 0)
	s.P.Streams.Heartbeat = 20 * time.Millisecond
	tid := s.thread(t)
	s.stream(t, "POST", "/threads/"+tid+"/runs/stream", `{"assistant_id":"echo","input":`+fooInput+`}`, nil) // warm up
	s.client.CloseIdleConnections()
	ctx := context.Background()
	out, err := eventlogtest.JetStream(s.P.Log).Stream(ctx, eventlog.OutputStream)
	if err != nil {
		t.Fatal(err)
	}
	settle := func() int {
		time.Sleep(50 * time.Millisecond)
		return runtime.NumGoroutine()
	}
	before := settle()
	for _, c := range []struct {
		extra, status string
	}{{`,"on_disconnect":"cancel"`, engine.RunInterrupted}, {`,"on_disconnect":"continue"`, engine.RunSuccess}} {
		rctx, cancel := context.WithCancel(ctx)
		resp := s.open(t, rctx, "POST", "/threads/"+tid+"/runs/stream", longRun(c.extra), nil)
		run := resp.Header.Get("Content-Location")
		n := 0
		_ = readSSE(resp.Body, func(e sseEvent) bool { n++; return n < 3 })
		cancel()
		resp.Body.Close()
		s.client.CloseIdleConnections()
		waitUntil(t, 5*time.Second, func() bool {
			info, err := out.Info(ctx)
			return err == nil && info.State.Consumers == 0
		})
		rid := run[strings.LastIndexByte(run, '/')+1:]
		rec, err := s.P.Runs.Wait(ctx, tid, rid)
		if err != nil || rec.Status != c.status {
			t.Errorf("%s: run %s is %s (%v)", c.extra, rid, rec.Status, err)
		}
	}
	waitUntil(t, 5*time.Second, func() bool { return runtime.NumGoroutine() <= before })
}

// waitUntil polls cond until it holds or d passes.
func waitUntil(t testing.TB, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("condition not met within %s; goroutines:\n%s", d, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStreamJoinHeartbeatAndCancelOnDisconnect(t *testing.T) {
	s := startStreamStack(t, 0)
	s.P.Streams.Heartbeat = 20 * time.Millisecond
	tid := s.thread(t)
	code, body := s.status(t, "POST", "/threads/"+tid+"/runs", `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"foo"}],"sleep":2}}`, nil)
	if code != 200 {
		t.Fatalf("create run: %d %s", code, body)
	}
	var run engine.Run
	_ = json.Unmarshal([]byte(body), &run)
	ctx, cancel := context.WithCancel(context.Background())
	resp := s.open(t, ctx, "GET", "/threads/"+tid+"/runs/"+run.RunID+"/stream?cancel_on_disconnect=true&stream_mode=values", "", nil)
	var got []string
	_ = readSSE(resp.Body, func(e sseEvent) bool {
		got = append(got, names([]sseEvent{e})...)
		return len(got) < 4
	})
	cancel()
	resp.Body.Close()
	if !strings.Contains(strings.Join(got, ","), ": heartbeat") {
		t.Errorf("no heartbeat on an idle stream: %v", got)
	}
	rec, err := s.P.Runs.Wait(context.Background(), tid, run.RunID)
	if err != nil || rec.Status != engine.RunInterrupted {
		t.Errorf("run after the client left: %s %v", rec.Status, err)
	}
}

func TestStreamStripsCRLF(t *testing.T) {
	s := startStreamStack(t, 0)
	resp := s.open(t, context.Background(), "POST", "/runs/stream",
		`{"assistant_id":"crlf","input":{"x":0},"stream_mode":["values","updates"],"stream_subgraphs":true}`, nil)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	text := string(raw)
	if strings.Contains(text, "\r") || strings.Contains(text, "\nevent\n") || strings.Contains(text, "\ndata\n") {
		t.Errorf("CR/LF reached the stream:\n%q", text)
	}
	if !strings.Contains(text, "event: values|subeventdata:") {
		t.Errorf("no subgraph event:\n%s", text)
	}
	var events []sseEvent
	if err := readSSE(strings.NewReader(text), func(e sseEvent) bool { events = append(events, e); return true }); err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Data != "" && !json.Valid([]byte(e.Data)) {
			t.Errorf("data is not one JSON value: %q", e.Data)
		}
	}
}

func TestThreadStream(t *testing.T) {
	s := startStreamStack(t, 0)
	tid := s.thread(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := s.open(t, ctx, "GET", "/threads/"+tid+"/stream?stream_mode=lifecycle&stream_mode=run_modes&stream_mode=state_update", "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("thread stream: %d", resp.StatusCode)
	}
	events := make(chan sseEvent, 100)
	go func() {
		defer close(events)
		_ = readSSE(resp.Body, func(e sseEvent) bool { events <- e; return true })
	}()
	next := func() sseEvent {
		t.Helper()
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatal("the thread stream ended")
			}
			return e
		case <-time.After(10 * time.Second):
			t.Fatal("no event from the thread stream")
		}
		return sseEvent{}
	}
	var runIDs []string
	for _, modes := range []string{`"values"`, `"updates"`} {
		code, body := s.status(t, "POST", "/threads/"+tid+"/runs", `{"assistant_id":"echo","input":`+fooInput+`,"stream_mode":`+modes+`}`, nil)
		if code != 200 {
			t.Fatalf("create run: %d %s", code, body)
		}
		var run engine.Run
		_ = json.Unmarshal([]byte(body), &run)
		runIDs = append(runIDs, run.RunID)
	}
	var got []string
	for done := 0; done < 2; {
		e := next()
		got = append(got, e.Event+" "+e.Data)
		if strings.Contains(e.Data, `"status":"run_done"`) {
			done++
		}
	}
	want := []string{
		`metadata {"attempt":1,"run_id":"` + runIDs[0] + `"}`, "values", "values",
		`metadata {"run_id":"` + runIDs[0] + `","status":"run_done"}`,
		`metadata {"attempt":1,"run_id":"` + runIDs[1] + `"}`, "updates",
		`metadata {"run_id":"` + runIDs[1] + `","status":"run_done"}`,
	}
	if len(got) != len(want) {
		t.Fatalf("thread stream:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("event %d = %s, want %s", i, got[i], want[i])
		}
	}
	code, body := s.status(t, "POST", "/threads/"+tid+"/state", `{"values":{"messages":[{"role":"user","content":"edited"}]},"as_node":"echo"}`, nil)
	if code != 200 {
		t.Fatalf("update state: %d %s", code, body)
	}
	e := next()
	if e.Event != "state_update" || !strings.Contains(e.Data, `"content":"edited"`) || !strings.Contains(e.Data, `"source":"update"`) {
		t.Errorf("state update event: %+v", e)
	}
	cancel()

	// Resumed after the first run's end (its run_done has that id): the second run only.
	_, all := s.stream(t, "GET", "/threads/"+tid+"/runs/"+runIDs[0]+"/stream", "", nil)
	rctx, rcancel := context.WithCancel(context.Background())
	defer rcancel()
	resp2 := s.open(t, rctx, "GET", "/threads/"+tid+"/stream?stream_modes=lifecycle", "", map[string]string{"Last-Event-ID": all[len(all)-1].ID})
	var resumed []string
	_ = readSSE(resp2.Body, func(e sseEvent) bool {
		resumed = append(resumed, e.Data)
		return len(resumed) < 2
	})
	rcancel()
	resp2.Body.Close()
	if len(resumed) != 2 || !strings.Contains(resumed[0], runIDs[1]) || !strings.Contains(resumed[1], "run_done") {
		t.Errorf("resumed thread stream: %v", resumed)
	}
}

func TestStreamJoinRunCancelledBeforeItStarts(t *testing.T) {
	s := startStreamStack(t, 0)
	tid := s.thread(t)
	create := func(body string) string {
		code, out := s.status(t, "POST", "/threads/"+tid+"/runs", body, nil)
		if code != 200 {
			t.Fatalf("create run: %d %s", code, out)
		}
		var r engine.Run
		_ = json.Unmarshal([]byte(out), &r)
		return r.RunID
	}
	first := create(longRun(""))
	queued := create(`{"assistant_id":"echo","input":` + fooInput + `}`)
	// The join has its answer's headers, so it follows the run, before the run is cancelled.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp := s.open(t, ctx, "GET", "/threads/"+tid+"/runs/"+queued+"/stream", "", nil)
	defer resp.Body.Close()
	done := make(chan []sseEvent, 1)
	go func() {
		var events []sseEvent
		_ = readSSE(resp.Body, func(e sseEvent) bool { events = append(events, e); return true })
		done <- events
	}()
	if code, out := s.status(t, "POST", "/threads/"+tid+"/runs/"+queued+"/cancel", "", nil); code != 202 {
		t.Fatalf("cancel: %d %s", code, out)
	}
	select {
	case events := <-done:
		if strings.Join(names(events), ",") != "end" {
			t.Errorf("events of a run cancelled before it started: %v", names(events))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream of a cancelled queued run did not end")
	}
	_ = s.P.Runs.Cancel(context.Background(), tid, first, "interrupt", true)
}

func TestStreamOfCancelledRunEndsWithoutInterrupt(t *testing.T) {
	s := startStreamStack(t, 0)
	for _, action := range []string{"interrupt", "rollback"} {
		tid := s.thread(t)
		s.stream(t, "POST", "/threads/"+tid+"/runs/stream", `{"assistant_id":"echo","input":`+fooInput+`}`, nil) // a state to return to
		resp := s.open(t, context.Background(), "POST", "/threads/"+tid+"/runs/stream",
			`{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"foo"}],"sleep":2},"stream_mode":["values","updates"]}`, nil)
		var events []sseEvent
		cancelled := false
		_ = readSSE(resp.Body, func(e sseEvent) bool {
			events = append(events, e)
			if e.Event == "values" && !cancelled {
				cancelled = true
				if code, out := s.status(t, "POST", resp.Header.Get("Content-Location")+"/cancel?action="+action, "", nil); code != 202 {
					t.Errorf("cancel: %d %s", code, out)
				}
			}
			return true
		})
		resp.Body.Close()
		got := strings.Join(names(events), ",")
		if got != "metadata,values,end" || strings.Contains(fmt.Sprint(events), "__interrupt__") {
			t.Errorf("%s: events %s: %v", action, got, events)
		}
	}
}

// TestRunEndSeenIsRunEndHere: a client that saw a run's stream end finds the run ended when it
// acts on it at once, even with a projection that lags (each batch it applies is followed by a
// pause): the thread is idle, its state can be updated, and a run that rejects company starts.
func TestRunEndSeenIsRunEndHere(t *testing.T) {
	s := startStreamStackWith(t, 0, func(p *platform.Platform) {
		p.Runtime.OnApply = func(int, time.Duration) { time.Sleep(20 * time.Millisecond) }
	})
	tid := s.thread(t)
	for i := range 3 {
		_, events := s.stream(t, "POST", "/threads/"+tid+"/runs/stream", `{"assistant_id":"echo","input":`+fooInput+`}`, nil)
		if len(events) == 0 || events[len(events)-1].Event != "end" {
			t.Fatalf("round %d: stream %+v", i, events)
		}
		code, body := s.status(t, "GET", "/threads/"+tid, "", nil)
		var th engine.Thread
		if err := json.Unmarshal([]byte(body), &th); code != 200 || err != nil || th.Status != engine.ThreadIdle {
			t.Fatalf("round %d: thread after its run's end: %d %s", i, code, body)
		}
		if code, body := s.status(t, "POST", "/threads/"+tid+"/state", `{"values":{"messages":[{"role":"user","content":"edited"}]},"as_node":"echo"}`, nil); code != 200 {
			t.Fatalf("round %d: update state: %d %s", i, code, body)
		}
		code, body = s.status(t, "POST", "/threads/"+tid+"/runs", `{"assistant_id":"echo","input":`+fooInput+`,"multitask_strategy":"reject"}`, nil)
		var run engine.Run
		if err := json.Unmarshal([]byte(body), &run); code != 200 || err != nil {
			t.Fatalf("round %d: run rejecting company: %d %s", i, code, body)
		}
		if code, body := s.status(t, "GET", "/threads/"+tid+"/runs/"+run.RunID+"/join", "", nil); code != 200 {
			t.Fatalf("round %d: join: %d %s", i, code, body)
		}
	}

	// The same for a run's end seen on the thread's stream (run_done).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := s.open(t, ctx, "GET", "/threads/"+tid+"/stream?stream_mode=lifecycle", "", nil)
	defer resp.Body.Close()
	code, body := s.status(t, "POST", "/threads/"+tid+"/runs", `{"assistant_id":"echo","input":`+fooInput+`}`, nil)
	var last engine.Run
	if err := json.Unmarshal([]byte(body), &last); code != 200 || err != nil {
		t.Fatalf("create run: %d %s", code, body)
	}
	// The stream may still carry the end of the run joined above: wait for this run's.
	done := `"run_id":"` + last.RunID + `","status":"run_done"`
	_ = readSSE(resp.Body, func(e sseEvent) bool { return !strings.Contains(e.Data, done) })
	code, body = s.status(t, "GET", "/threads/"+tid, "", nil)
	var th engine.Thread
	if err := json.Unmarshal([]byte(body), &th); code != 200 || err != nil || th.Status != engine.ThreadIdle {
		t.Fatalf("thread after run_done: %d %s", code, body)
	}
}

// TestStreamReconnectKeepsTheRunsSubgraphs: the official SDKs reconnect a dropped stream with a
// GET of its Location and Last-Event-ID alone, neither stream_mode nor stream_subgraphs: the
// events after the id are those the run's own stream would have sent, its subgraphs' included
// when it was created with stream_subgraphs (the reference keeps subgraphs in the run's
// kwargs). A join may still ask for subgraphs, or leave them out, itself.
func TestStreamReconnectKeepsTheRunsSubgraphs(t *testing.T) {
	s := startStreamStack(t, 0)
	tid := s.thread(t)
	body := `{"assistant_id":"weather","input":{"messages":[{"role":"user","content":"SF"}]},"stream_mode":["updates","messages-tuple"],"stream_subgraphs":true}`
	resp, all := s.stream(t, "POST", "/threads/"+tid+"/runs/stream", body, nil)
	inner := 0
	for _, e := range all {
		if strings.Contains(e.Event, "|") {
			inner++
		}
	}
	if inner == 0 {
		t.Fatalf("no subgraph event in the run's own stream: %v", names(all))
	}
	loc := resp.Header.Get("Location")
	for _, tc := range []struct {
		name, query string
		subgraphs   bool
	}{
		{"as the SDKs reconnect", "", true},
		{"subgraphs left out", "?stream_subgraphs=false", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, later := s.stream(t, "GET", loc+tc.query, "", map[string]string{"Last-Event-ID": all[0].ID})
			var want []sseEvent
			for _, e := range all[1:] {
				if e.ID != all[0].ID && (tc.subgraphs || !strings.Contains(e.Event, "|")) {
					want = append(want, e)
				}
			}
			if !reflect.DeepEqual(names(later), names(want)) {
				t.Fatalf("after %s: %v, want %v", all[0].ID, names(later), names(want))
			}
		})
	}
	// A run streamed without subgraphs is joined with them when the join asks.
	resp, root := s.stream(t, "POST", "/threads/"+tid+"/runs/stream", strings.Replace(body, "true", "false", 1), nil)
	_, joined := s.stream(t, "GET", resp.Header.Get("Location")+"?stream_subgraphs=true", "", nil)
	if len(joined) <= len(root) {
		t.Errorf("a join with stream_subgraphs: %v, the run's own stream: %v", names(joined), names(root))
	}
}
