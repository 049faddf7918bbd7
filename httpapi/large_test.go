package httpapi_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/httpapi"
)

// humanInput is a run input of one human message.
func humanInput(text string) string {
	return `{"messages":[{"role":"human","content":"` + text + `"}]}`
}

// messageTexts are the contents of the messages of a JSON state.
func messageTexts(t testing.TB, raw string) []string {
	t.Helper()
	var v struct {
		Values struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		} `json:"values"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("state of %d bytes: %v", len(raw), err)
	}
	msgs := v.Values.Messages
	if msgs == nil {
		msgs = v.Messages
	}
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return out
}

// sameTexts fails unless got are want, naming the lengths (the texts are megabytes).
func sameTexts(t testing.TB, what string, got, want []string) {
	t.Helper()
	if fmt.Sprint(got) == fmt.Sprint(want) {
		return
	}
	lens := func(l []string) []int {
		out := make([]int, len(l))
		for i, s := range l {
			out[i] = len(s)
		}
		return out
	}
	t.Fatalf("%s: messages of %v bytes, want %v", what, lens(got), lens(want))
}

// TestLargeStatesRoundTrip runs the echo graph with a 5 MiB input (its state grows to 10 MiB,
// then 14 MiB): the state comes back whole from /runs/wait, as the final values event of
// /runs/stream, from GET state, history, GET thread and thread search, after a rebuild of the projections from the log,
// and a 3 MiB state update, 2 MiB supersteps and a 2 MiB store item work. Over the state limit,
// each is a 413 naming it, and nothing is appended.
func TestLargeStatesRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("moves tens of megabytes")
	}
	s := startStreamStack(t, 0)
	start := time.Now()
	big := strings.Repeat("a", 5<<20)
	thread := s.thread(t)

	code, body := s.status(t, "POST", "/threads/"+thread+"/runs/wait", `{"assistant_id":"echo","input":`+humanInput(big)+`}`, nil)
	if code != 200 {
		t.Fatalf("runs/wait: %d %.300s", code, body)
	}
	want := []string{big, "echo: " + big}
	sameTexts(t, "runs/wait", messageTexts(t, `{"values":`+body+`}`), want)

	second := strings.Repeat("b", 2<<20)
	_, events := s.stream(t, "POST", "/threads/"+thread+"/runs/stream",
		`{"assistant_id":"echo","stream_mode":["values"],"input":`+humanInput(second)+`}`, nil)
	events = slices.DeleteFunc(events, func(e sseEvent) bool { return e.Comment != "" }) // heartbeats
	if got := strings.Join(names(events), ","); got != "metadata,values,values,end" {
		t.Fatalf("stream events = %s", got)
	}
	want = append(want, second, "echo: "+second)
	sameTexts(t, "final values event", messageTexts(t, `{"values":`+events[2].Data+`}`), want)

	state := func(s *streamStack, what string) {
		code, body := s.status(t, "GET", "/threads/"+thread+"/state", "", nil)
		if code != 200 {
			t.Fatalf("%s: GET state: %d %.300s", what, code, body)
		}
		sameTexts(t, what+": GET state", messageTexts(t, body), want)
		code, body = s.status(t, "GET", "/threads/"+thread, "", nil)
		if code != 200 {
			t.Fatalf("%s: GET thread: %d %.300s", what, code, body)
		}
		sameTexts(t, what+": GET thread", messageTexts(t, body), want)
		code, body = s.status(t, "POST", "/threads/search", `{"ids":["`+thread+`"]}`, nil)
		var found []json.RawMessage
		if code != 200 || json.Unmarshal([]byte(body), &found) != nil || len(found) != 1 {
			t.Fatalf("%s: search: %d, %d threads", what, code, len(found))
		}
		sameTexts(t, what+": thread search", messageTexts(t, string(found[0])), want)
		code, body = s.status(t, "POST", "/threads/"+thread+"/history", `{"limit":10}`, nil)
		var hist []json.RawMessage
		if code != 200 || json.Unmarshal([]byte(body), &hist) != nil || len(hist) < 4 {
			t.Fatalf("%s: history: %d, %d entries", what, code, len(hist))
		}
		sameTexts(t, what+": newest history entry", messageTexts(t, string(hist[0])), want)
		sameTexts(t, what+": history after the first run", messageTexts(t, string(hist[2])), want[:2])
	}
	t.Logf("%v runs done", time.Since(start))
	state(s, "served")
	t.Logf("%v served state read", time.Since(start))

	// A new projection file on the same log replays every event, references included.
	discard := slog.New(slog.DiscardHandler)
	p2 := platformtest.Start(t, platform.Config{Graphs: streamGraphs(), Logger: discard}, s.P.Log)
	ts2 := serve(t, httpapi.New(httpapi.Deps{Threads: p2.Threads, Assistants: p2.Assistants, Store: p2.Store,
		Runner: p2.Runner, Graphs: p2.Graphs, Runs: p2.Runs, Streams: httpapi.StreamsOf(p2.Streams), Logger: discard}).Handler())
	state(&streamStack{URL: ts2.URL, P: p2, client: s.client}, "rebuilt")
	t.Logf("%v rebuilt", time.Since(start))

	// A 3 MiB state update, a thread created with 2 MiB supersteps, a 2 MiB store item.
	update := strings.Repeat("u", 3<<20)
	code, body = s.status(t, "POST", "/threads/"+thread+"/state",
		`{"values":{"messages":[{"role":"human","content":"`+update+`","id":"upd"}]},"as_node":"echo"}`, nil)
	if code != 200 {
		t.Fatalf("update state: %d %.300s", code, body)
	}
	code, body = s.status(t, "GET", "/threads/"+thread+"/state", "", nil)
	if got := messageTexts(t, body); code != 200 || len(got) != 5 || got[4] != update {
		t.Fatalf("state after the update: %d, %d messages", code, len(got))
	}
	step := strings.Repeat("s", 2<<20)
	code, body = s.status(t, "POST", "/threads",
		`{"metadata":{"graph_id":"echo"},"supersteps":[{"updates":[{"values":{"messages":[{"role":"human","content":"`+step+`"}]},"as_node":"echo"}]}]}`, nil)
	if code != 200 {
		t.Fatalf("create with supersteps: %d %.300s", code, body)
	}
	var th engine.Thread
	_ = json.Unmarshal([]byte(body), &th)
	code, body = s.status(t, "GET", "/threads/"+th.ThreadID+"/state", "", nil)
	if code != 200 {
		t.Fatalf("state after supersteps: %d %.300s", code, body)
	}
	sameTexts(t, "supersteps", messageTexts(t, body), []string{step})
	item := strings.Repeat("i", 2<<20)
	if code, body = s.status(t, "PUT", "/store/items", `{"namespace":["n"],"key":"k","value":{"doc":"`+item+`"}}`, nil); code != 204 {
		t.Fatalf("store put: %d %.300s", code, body)
	}
	code, body = s.status(t, "GET", "/store/items?namespace=n&key=k", "", nil)
	if code != 200 || !strings.Contains(body, item) {
		t.Fatalf("store get: %d, %d bytes", code, len(body))
	}

	t.Logf("%v updates done", time.Since(start))
	// Over the limit: 413 naming it, and nothing appended.
	over := strings.Repeat("o", engine.MaxStateBytes)
	seq, _ := s.P.Log.LastSeq(t.Context(), "JG_RUNTIME")
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/threads/" + thread + "/runs/wait", `{"assistant_id":"echo","input":` + humanInput(over) + `}`},
		{"POST", "/threads/" + thread + "/state", `{"values":{"messages":[{"role":"human","content":"` + over + `"}]}}`},
		{"POST", "/threads", `{"metadata":{"graph_id":"echo"},"supersteps":[{"updates":[{"values":{"messages":"` + over + `"},"as_node":"__input__"}]}]}`},
		{"PUT", "/store/items", `{"namespace":["n"],"key":"k","value":{"doc":"` + over + `"}}`},
	} {
		code, body := s.status(t, tc.method, tc.path, tc.body, nil)
		if code != 413 || !strings.Contains(body, engine.MaxStateText) {
			t.Errorf("%s %s over the limit: %d %.300s", tc.method, tc.path, code, body)
		}
	}
	if after, _ := s.P.Log.LastSeq(t.Context(), "JG_RUNTIME"); after != seq {
		t.Errorf("refused requests appended %d messages", after-seq)
	}
}
