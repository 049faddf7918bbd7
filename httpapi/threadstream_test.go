package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/streaming"
	"github.com/jetgraph/jetgraph/engine/threadstream"
)

// protoEvent is an event of the thread-centric protocol as a client reads it.
type protoEvent struct {
	Type    string `json:"type"`
	EventID string `json:"event_id"`
	Seq     uint64 `json:"seq"`
	Method  string `json:"method"`
	Params  struct {
		Namespace []string        `json:"namespace"`
		RunID     string          `json:"run_id"`
		Node      string          `json:"node"`
		Data      json.RawMessage `json:"data"`
	} `json:"params"`
}

// lifecycle is the lifecycle state an event announces, "" for other events.
func (e protoEvent) lifecycle() string {
	if e.Method != threadstream.EventLifecycle {
		return ""
	}
	var d threadstream.LifecycleData
	_ = json.Unmarshal(e.Params.Data, &d)
	return d.Event
}

// ended counts the runs whose end the events show.
func ended(events []protoEvent) int {
	n := 0
	for _, e := range events {
		switch e.lifecycle() {
		case threadstream.StatusCompleted, threadstream.StatusInterrupted, threadstream.StatusFailed:
			n++
		}
	}
	return n
}

// command posts a protocol command to a thread and returns its response.
func (s *streamStack) command(t testing.TB, thread string, id int, method, params string) threadstream.Response {
	t.Helper()
	code, raw := s.status(t, "POST", "/threads/"+thread+"/commands",
		fmt.Sprintf(`{"id": %d, "method": %q, "params": %s}`, id, method, params), nil)
	var r threadstream.Response
	if code != http.StatusOK || json.Unmarshal([]byte(raw), &r) != nil {
		t.Fatalf("%s: %d %s", method, code, raw)
	}
	return r
}

// protoEvents reads a thread's event stream opened with body until done says it has enough.
func (s *streamStack) protoEvents(t testing.TB, thread, body string, done func([]protoEvent) bool) []protoEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.readProtoEvents(t, ctx, s.openEvents(t, ctx, thread, body), body, done)
}

// openEvents opens a thread's event stream with body: its response, the events unread.
func (s *streamStack) openEvents(t testing.TB, ctx context.Context, thread, body string) *http.Response {
	t.Helper()
	resp := s.open(t, ctx, "POST", "/threads/"+thread+"/stream/events", body, nil)
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("stream/events %s: %d %s", body, resp.StatusCode, raw)
	}
	return resp
}

// readProtoEvents reads the events of an opened stream until done says it has enough.
func (s *streamStack) readProtoEvents(t testing.TB, ctx context.Context, resp *http.Response, body string, done func([]protoEvent) bool) []protoEvent {
	t.Helper()
	defer resp.Body.Close()
	var events []protoEvent
	if done(events) {
		return events
	}
	err := readSSE(resp.Body, func(e sseEvent) bool {
		if e.Comment != "" {
			return true
		}
		var pe protoEvent
		if err := json.Unmarshal([]byte(e.Data), &pe); err != nil {
			t.Errorf("event %q: %v", e.Data, err)
			return false
		}
		if e.ID != pe.EventID || e.Event != pe.Method {
			t.Errorf("SSE id %q event %q, want the event's %q %q", e.ID, e.Event, pe.EventID, pe.Method)
		}
		events = append(events, pe)
		return !done(events)
	})
	if err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
	if !done(events) {
		t.Fatalf("stream/events %s ended early after %d events", body, len(events))
	}
	return events
}

var allChannels = `["values","updates","messages","tools","lifecycle","input","checkpoints","tasks","custom"]`

// TestThreadEventsSinceAcrossRuns proves the reconnect invariant of the thread-centric protocol:
// a stream opened with since=<seq> of any event sends exactly the events after it, across the
// runs of the thread (an interrupted run, its resumption by input.respond, a run of another
// assistant) and whatever reads them, another streamer on the same log included: no gap, no
// duplicate.
func TestThreadEventsSinceAcrossRuns(t *testing.T) {
	s := startStreamStack(t, 0)
	tid := s.thread(t)
	if r := s.command(t, tid, 1, threadstream.MethodRunStart, `{"assistant_id":"agent","input":{"messages":"foo","interrupt":true}}`); r.Type != threadstream.TypeSuccess {
		t.Fatalf("run.start: %+v", r)
	}
	first := s.protoEvents(t, tid, `{"channels":["input","lifecycle"]}`, func(e []protoEvent) bool { return ended(e) == 1 })
	var interrupt threadstream.InputRequestedData
	for _, e := range first {
		if e.Method == threadstream.EventInputRequested {
			_ = json.Unmarshal(e.Params.Data, &interrupt)
		}
	}
	if interrupt.InterruptID == "" || first[len(first)-1].lifecycle() != threadstream.StatusInterrupted {
		t.Fatalf("no interrupt requested, or not interrupted: %+v", first)
	}
	params := fmt.Sprintf(`{"namespace":[],"interrupt_id":%q,"response":"yes"}`, interrupt.InterruptID)
	if r := s.command(t, tid, 2, threadstream.MethodInputRespond, params); r.Type != threadstream.TypeSuccess {
		t.Fatalf("input.respond: %+v", r)
	}
	if r := s.command(t, tid, 3, threadstream.MethodRunStart, `{"assistant_id":"tokens","input":{"n":40}}`); r.Type != threadstream.TypeSuccess {
		t.Fatalf("run.start: %+v", r)
	}
	all := s.protoEvents(t, tid, `{"channels":`+allChannels+`,"since":0}`, func(e []protoEvent) bool { return ended(e) == 3 })

	runs := map[string]bool{}
	methods := map[string]bool{}
	for i, e := range all {
		runs[e.Params.RunID], methods[e.Method] = true, true
		if e.EventID != strconv.FormatUint(e.Seq, 10) {
			t.Errorf("event %d: event_id %q for seq %d", i, e.EventID, e.Seq)
		}
		if i > 0 && e.Seq <= all[i-1].Seq {
			t.Fatalf("event %d: seq %d after %d", i, e.Seq, all[i-1].Seq)
		}
	}
	for _, m := range []string{"lifecycle", "values", "updates", "messages", "input.requested", "checkpoints", "tasks"} {
		if !methods[m] {
			t.Errorf("no %s event in %d events", m, len(all))
		}
	}
	if len(runs) != 3 {
		t.Fatalf("events of %d runs, want 3", len(runs))
	}

	last := all[len(all)-1].EventID
	seqs := func(events []protoEvent) []uint64 {
		out := make([]uint64, len(events))
		for i, e := range events {
			out[i] = e.Seq
		}
		return out
	}
	step := max(1, len(all)/25)
	for k := 0; k < len(all)-1; k += step {
		got := s.protoEvents(t, tid, fmt.Sprintf(`{"channels":%s,"since":%d}`, allChannels, all[k].Seq),
			func(e []protoEvent) bool { return len(e) > 0 && e[len(e)-1].EventID == last })
		if want := seqs(all[k+1:]); !slices.Equal(seqs(got), want) {
			t.Fatalf("since %d: seqs %v, want %v", all[k].Seq, seqs(got), want)
		}
	}

	// Filtered: the same numbering, only the channel asked.
	var lifecycles []protoEvent
	for _, e := range all {
		if e.Method == threadstream.EventLifecycle {
			lifecycles = append(lifecycles, e)
		}
	}
	got := s.protoEvents(t, tid, `{"channels":["lifecycle"],"since":0}`, func(e []protoEvent) bool { return ended(e) == 3 })
	if !slices.Equal(seqs(got), seqs(lifecycles)) {
		t.Errorf("lifecycle seqs %v, want %v", seqs(got), seqs(lifecycles))
	}

	// Another process: a streamer of its own on the same log numbers the events the same way.
	other := streaming.New(streaming.Config{Bus: s.P.Log.OutputBus()})
	ctx, cancel := context.WithTimeout(engine.WithTenant(context.Background(), engine.DefaultTenant), 30*time.Second)
	defer cancel()
	k := len(all) / 2
	src, err := other.FollowOutput(ctx, tid, all[k].Seq, true)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var fromOther []uint64
	stop := fmt.Errorf("seen the last event")
	err = threadstream.Pump(ctx, src, threadstream.Filter{Channels: threadstream.Channels, Since: &all[k].Seq},
		func(e *threadstream.Event) error {
			fromOther = append(fromOther, e.Seq)
			if e.EventID == last {
				return stop
			}
			return nil
		}, func() error { return nil })
	if err != stop {
		t.Fatal(err)
	}
	if want := seqs(all[k+1:]); !slices.Equal(fromOther, want) {
		t.Fatalf("another streamer since %d: %v, want %v", all[k].Seq, fromOther, want)
	}
}

// TestThreadCommandsAnswer checks the command envelope (422 when it is not a command) and the
// protocol's answers: a success, or an error with the protocol's code.
func TestThreadCommandsAnswer(t *testing.T) {
	s := startStreamStack(t, 0)
	tid := s.thread(t)
	tests := []struct {
		body   string
		status int
		code   string // the protocol error code; "" for a success
	}{
		{`{"method":"run.start"}`, 422, ""},
		{`{"id":1}`, 422, ""},
		{`{"id":-1,"method":"run.start"}`, 422, ""},
		{`{"id":1,"method":"run.start","params":{}}`, 200, threadstream.ErrInvalidArgument},
		{`{"id":2,"method":"run.start","params":{"assistant_id":"nope"}}`, 200, threadstream.ErrInvalidArgument},
		{`{"id":3,"method":"run.start","params":{"assistant_id":"echo","input":{"messages":"x"},"multitask_strategy":"sometimes"}}`, 200, threadstream.ErrInvalidArgument},
		{`{"id":4,"method":"bogus"}`, 200, threadstream.ErrUnknownCommand},
		{`{"id":5,"method":"agent.getTree","params":{}}`, 200, threadstream.ErrNotSupported},
		{`{"id":6,"method":"subscription.subscribe","params":{"channels":["values"]}}`, 200, threadstream.ErrNotSupported},
		{`{"id":7,"method":"input.respond","params":{}}`, 200, threadstream.ErrInvalidArgument},
		{`{"id":8,"method":"input.respond","params":{"namespace":[],"interrupt_id":"i","response":1}}`, 200, threadstream.ErrNoSuchInterrupt},
		{`{"id":9,"method":"state.get","params":{"namespace":[]}}`, 200, ""},
		{`{"id":10,"method":"run.start","params":{"assistant_id":"echo","input":{"messages":"x"}}}`, 200, ""},
	}
	for _, tt := range tests {
		code, raw := s.status(t, "POST", "/threads/"+tid+"/commands", tt.body, nil)
		if code != tt.status {
			t.Errorf("%s: %d %s, want %d", tt.body, code, raw, tt.status)
			continue
		}
		if code != http.StatusOK {
			continue
		}
		var r threadstream.Response
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			t.Fatal(err)
		}
		var id struct {
			ID uint64 `json:"id"`
		}
		_ = json.Unmarshal([]byte(tt.body), &id)
		if r.ID != id.ID || r.Error != tt.code || (tt.code == "") != (r.Type == threadstream.TypeSuccess) {
			t.Errorf("%s: %s, want code %q", tt.body, raw, tt.code)
		}
	}
}

// TestThreadSocket speaks the protocol over a WebSocket: run.start on a new thread, a
// subscription that gets the run's events, unsubscribe, and the errors of a bad message and of
// an unknown subscription.
func TestThreadSocket(t *testing.T) {
	s := startStreamStack(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tid := "0192f0c4-1111-7000-8000-000000000001"
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/threads/"+tid+"/stream/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	send := func(msg string) {
		if err := conn.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	// next reads messages until one satisfies want.
	next := func(want func(map[string]any) bool) map[string]any {
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			if want(m) {
				return m
			}
		}
	}
	response := func(id float64) func(map[string]any) bool {
		return func(m map[string]any) bool { return m["type"] != threadstream.TypeEvent && m["id"] == id }
	}
	send(`not json`)
	if m := next(func(m map[string]any) bool { return m["type"] == threadstream.TypeError }); m["id"] != nil || m["error"] != threadstream.ErrInvalidArgument {
		t.Errorf("bad message: %v", m)
	}
	send(`{"id":1,"method":"run.start","params":{"assistant_id":"echo","input":{"messages":"hi"}}}`)
	run := next(response(1))
	runID, _ := run["result"].(map[string]any)["run_id"].(string)
	if run["type"] != threadstream.TypeSuccess || runID == "" {
		t.Fatalf("run.start: %v", run)
	}
	send(`{"id":2,"method":"subscription.subscribe","params":{"channels":["lifecycle","values"]}}`)
	var subID string
	var methods []string
	next(func(m map[string]any) bool {
		if m["type"] != threadstream.TypeEvent {
			if m["id"] == 2.0 {
				subID, _ = m["result"].(map[string]any)["subscription_id"].(string)
			}
			return false
		}
		methods = append(methods, m["method"].(string))
		data := m["params"].(map[string]any)["data"].(map[string]any)
		return m["method"] == threadstream.EventLifecycle && data["event"] == threadstream.StatusCompleted
	})
	if subID == "" || !slices.Contains(methods, "values") || methods[0] != "lifecycle" {
		t.Fatalf("subscription %q gave %v", subID, methods)
	}
	send(fmt.Sprintf(`{"id":3,"method":"subscription.unsubscribe","params":{"subscription_id":%q}}`, subID))
	if m := next(response(3)); m["type"] != threadstream.TypeSuccess {
		t.Errorf("unsubscribe: %v", m)
	}
	send(fmt.Sprintf(`{"id":4,"method":"subscription.unsubscribe","params":{"subscription_id":%q}}`, subID))
	if m := next(response(4)); m["error"] != threadstream.ErrNoSuchSubscription {
		t.Errorf("unsubscribe again: %v", m)
	}
	send(`{"id":5,"method":"subscription.subscribe","params":{"channels":["nope"]}}`)
	if m := next(response(5)); m["error"] != threadstream.ErrInvalidArgument {
		t.Errorf("subscribe to no channel: %v", m)
	}
	_ = conn.Close(websocket.StatusNormalClosure, "")
}

// endingRuns is the platform's run projection, whose first reading of a thread's active runs
// ends the run it finds before it answers: the run ends while a reader works out where to
// start.
type endingRuns struct {
	streaming.RunView
	end   func(run string) // cancels the run and returns once the projection has its end
	ended bool
}

func (r *endingRuns) Active(tenant, thread string) ([]engine.RunRecord, error) {
	active, err := r.RunView.Active(tenant, thread)
	if err == nil && len(active) > 0 && !r.ended {
		r.ended = true
		r.end(active[0].RunID)
	}
	return active, err
}

// TestOutputOfARunThatEndsAsItIsFollowed: a reading of a thread's output without a position
// starts at the first event of the run active when it asks, also when that run ends before the
// reading starts (reading the active runs twice once lost the whole run then).
func TestOutputOfARunThatEndsAsItIsFollowed(t *testing.T) {
	s := startStreamStack(t, 0)
	tid := s.thread(t)
	if r := s.command(t, tid, 1, threadstream.MethodRunStart, `{"assistant_id":"agent","input":{"messages":"foo","sleep":600}}`); r.Type != threadstream.TypeSuccess {
		t.Fatalf("run.start: %+v", r)
	}
	running := s.protoEvents(t, tid, `{"channels":["lifecycle"]}`, func(e []protoEvent) bool { return len(e) > 0 })[0]
	runs := &endingRuns{RunView: s.P.RunsView, end: func(run string) {
		if code, body := s.status(t, "POST", "/threads/"+tid+"/runs/"+run+"/cancel?wait=1", "", nil); code/100 != 2 {
			t.Fatalf("cancel: %d %s", code, body)
		}
		for {
			changed := s.P.RunsView.Watch(engine.DefaultTenant, tid, run)
			st, ok, err := s.P.RunsView.State(engine.DefaultTenant, tid, run)
			if err != nil || !ok || !st.Active() {
				s.P.RunsView.Unwatch(engine.DefaultTenant, tid, run, changed)
				return
			}
			select {
			case <-changed:
			case <-time.After(30 * time.Second):
				t.Fatal("the cancelled run is still active in the projection after 30 s")
			}
		}
	}}
	reader := streaming.New(streaming.Config{Bus: s.P.Log.OutputBus(), Runs: runs})
	ctx, cancel := context.WithTimeout(engine.WithTenant(context.Background(), engine.DefaultTenant), 10*time.Second)
	defer cancel()
	src, err := reader.FollowOutput(ctx, tid, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if !runs.ended {
		t.Fatal("the run was not active when the reading asked")
	}
	var got []string
	stop := fmt.Errorf("the run's end")
	err = threadstream.Pump(ctx, src, threadstream.Filter{Channels: []threadstream.Channel{threadstream.ChannelLifecycle}},
		func(e *threadstream.Event) error {
			got = append(got, fmt.Sprintf("%d %s", e.Seq, e.Method))
			if len(got) == 1 && e.Seq != running.Seq {
				return fmt.Errorf("first event %d, want the run's first, %d", e.Seq, running.Seq)
			}
			if e.Params.RunID == running.Params.RunID && len(got) > 1 {
				return stop
			}
			return nil
		}, func() error { return nil })
	if err != stop {
		t.Fatalf("%v (read %v)", err, got)
	}
}
