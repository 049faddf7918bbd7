package threadstream

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/goldentest"
	"github.com/jetgraph/jetgraph/engine/streaming"
)

func intp(n int) *int { return &n }

func TestFilterMatches(t *testing.T) {
	ev := func(method string, data any, ns ...string) *Event {
		if ns == nil {
			ns = []string{}
		}
		return &Event{Method: method, Params: EventParams{Namespace: ns, Data: data}}
	}
	tests := []struct {
		name   string
		filter Filter
		event  *Event
		want   bool
	}{
		{"channel asked", Filter{Channels: []string{"values"}}, ev("values", nil), true},
		{"channel not asked", Filter{Channels: []string{"values"}}, ev("updates", nil), false},
		{"input requests are the input channel", Filter{Channels: []string{"input"}}, ev(EventInputRequested, nil), true},
		{"custom takes named custom", Filter{Channels: []string{"custom"}}, ev("custom", CustomData{Name: "a2a"}), true},
		{"custom:name takes its name", Filter{Channels: []string{"custom:a2a"}}, ev("custom", CustomData{Name: "a2a"}), true},
		{"custom:name not another", Filter{Channels: []string{"custom:x"}}, ev("custom", CustomData{Name: "a2a"}), false},
		{"any namespace", Filter{Channels: []string{"values"}}, ev("values", nil, "sub:1", "leaf:2"), true},
		{"depth from the root", Filter{Channels: []string{"values"}, Depth: intp(1)}, ev("values", nil, "sub:1", "leaf:2"), false},
		{"depth 1 takes a child", Filter{Channels: []string{"values"}, Depth: intp(1)}, ev("values", nil, "sub:1"), true},
		{"prefix by node name", Filter{Channels: []string{"values"}, Namespaces: [][]string{{"sub"}}}, ev("values", nil, "sub:1", "leaf:2"), true},
		{"prefix with its task", Filter{Channels: []string{"values"}, Namespaces: [][]string{{"sub:1"}}}, ev("values", nil, "sub:1"), true},
		{"prefix of another task", Filter{Channels: []string{"values"}, Namespaces: [][]string{{"sub:2"}}}, ev("values", nil, "sub:1"), false},
		{"prefix and depth 0", Filter{Channels: []string{"values"}, Namespaces: [][]string{{"sub"}}, Depth: intp(0)}, ev("values", nil, "sub:1", "leaf:2"), false},
		{"root not under a prefix", Filter{Channels: []string{"values"}, Namespaces: [][]string{{"sub"}}}, ev("values", nil), false},
		{"the root prefix", Filter{Channels: []string{"values"}, Namespaces: [][]string{{}}, Depth: intp(0)}, ev("values", nil), true},
	}
	for _, tt := range tests {
		if got := tt.filter.Matches(tt.event); got != tt.want {
			t.Errorf("%s: Matches = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestFilterValidate(t *testing.T) {
	tests := []struct {
		body string
		want int // problems
	}{
		{`{"channels":["values","custom:x"]}`, 0},
		{`{"channels":[]}`, 1},
		{`{"channels":["nope","custom:"],"depth":65}`, 3},
		{`{"channels":["values"],"depth":-1}`, 1},
	}
	for _, tt := range tests {
		var f Filter
		if err := json.Unmarshal([]byte(tt.body), &f); err != nil {
			t.Fatal(err)
		}
		var v engine.Violations
		f.Validate(&v, "body")
		if len(v) != tt.want {
			t.Errorf("%s: %d problems %v, want %d", tt.body, len(v), v, tt.want)
		}
	}
}

// TestTranslateRun pins the events a run's output gives (testdata/translate.json): lifecycle,
// values, updates, a streamed message (start, block, deltas, finish), tasks, checkpoints,
// custom, tools, an interrupt and the end; Number gives them their positions.
func TestTranslateRun(t *testing.T) {
	at := time.UnixMilli(1700000000000).UTC()
	msgs := []streaming.Msg{
		{Seq: 1, Event: "metadata", Data: json.RawMessage(`{"run_id":"r1","attempt":1}`), Run: &streaming.RunInfo{GraphID: "agent"}},
		{Seq: 2, Event: "checkpoints", Data: json.RawMessage(`{"checkpoint_id":"c1","parent_checkpoint_id":null,"metadata":{"step":-1,"source":"input"}}`)},
		{Seq: 2, Event: "values", Data: json.RawMessage(`{"messages":[]}`)},
		{Seq: 3, Event: "task_start", Data: json.RawMessage(`{"id":"t0","name":"__start__"}`)},
		{Seq: 3, Event: "task_start", Data: json.RawMessage(`{"id":"t1","name":"agent","input":{}}`)},
		{Seq: 4, Event: "messages", Data: json.RawMessage(`[{"id":"m1","content":"be"},{"langgraph_node":"agent"}]`)},
		{Seq: 4, Event: "messages", Data: json.RawMessage(`[{"id":"m1","content":"gin"},{"langgraph_node":"agent"}]`)},
		{Seq: 5, Event: "updates", Data: json.RawMessage(`{"agent":{"messages":[{"id":"m1","content":"begin"}]}}`)},
		{Seq: 5, Event: "custom", Data: json.RawMessage(`{"type":"sleep","step":0}`)},
		// A root-level tool node's calls are at the root namespace, a subgraph's at the subgraph's.
		{Seq: 6, Event: "trace/tool_start", Data: json.RawMessage(`{"id":"inv1","name":"calculator","tool_call_id":"call1","input":{"x":1}}`), NS: []string{"tools:t2"}},
		{Seq: 6, Event: "trace/tool_end", Data: json.RawMessage(`{"id":"inv1","output":"2","error":null}`), NS: []string{"tools:t2"}},
		{Seq: 6, Event: "trace/tool_start", Data: json.RawMessage(`{"id":"inv2","name":"search","tool_call_id":"call2","input":{"q":"x"}}`), NS: []string{"sub:1", "tools:t3"}},
		{Seq: 6, Event: "trace/tool_end", Data: json.RawMessage(`{"id":"inv2","output":null,"error":"boom"}`), NS: []string{"sub:1", "tools:t3"}},
		{Seq: 7, Event: "messages", Data: json.RawMessage(`[{"id":"m2","content":"sub"},{"langgraph_node":"leaf"}]`), NS: []string{"sub:1"}},
		{Seq: 8, Event: "updates", Data: json.RawMessage(`{"__interrupt__":[{"value":"ask","id":"i1"}]}`)},
		{Seq: 8, Event: "values", Data: json.RawMessage(`{"__interrupt__":[{"value":"ask","id":"i1"}],"messages":[]}`)},
		{Seq: 8, Event: "end"},
	}
	tr := NewTranslator()
	var all []Event
	rank := map[uint64]int{}
	for _, m := range msgs {
		m.RunID, m.Time = "r1", at
		events := tr.Translate(m, nil)
		Number(events, m.Seq, rank[m.Seq])
		rank[m.Seq] += len(events)
		all = append(all, events...)
	}
	goldentest.JSON(t, filepath.Join("testdata", "translate.json"), all)
}

// FuzzFilter feeds any body to the stream request's filter: decoding, validating and matching
// never panic, and a valid filter matches only the channels it names.
func FuzzFilter(f *testing.F) {
	f.Add(`{"channels":["values","custom:a"],"namespaces":[["sub"]],"depth":2,"since":5}`, "values", "sub:1")
	f.Add(`{"channels":["custom"]}`, "custom", "")
	f.Fuzz(func(t *testing.T, body, method, ns string) {
		var filter Filter
		if json.Unmarshal([]byte(body), &filter) != nil {
			return
		}
		var v engine.Violations
		filter.Validate(&v, "body")
		e := &Event{Method: method, Params: EventParams{Namespace: []string{ns}}}
		if filter.Matches(e) && len(v) == 0 {
			ch := ChannelOf(e)
			found := false
			for _, c := range filter.Channels {
				found = found || c == ch || c == ChannelCustom && method == EventCustom
			}
			if !found {
				t.Errorf("%s matches channel %q it does not name", body, ch)
			}
		}
	})
}

// TestTranslateInterruptedEnd: how a run's end is announced. A static interrupt (the end's
// interrupt update carries no value: weather's interrupt_before) ends as interrupted with an
// input.requested, as a dynamic interrupt does. The Python reference server (langgraph-api
// 0.16.7) says "completed" and asks nothing there while the thread is interrupted; a client
// could then neither see the thread wait nor answer it (issue 24).
func TestTranslateInterruptedEnd(t *testing.T) {
	cp := func(next string) streaming.Msg {
		return streaming.Msg{Event: "checkpoints", Data: json.RawMessage(`{"checkpoint_id":"c","metadata":{"step":1,"source":"loop"},"next":` + next + `}`)}
	}
	upd := func(data string, ns ...string) streaming.Msg {
		return streaming.Msg{Event: "updates", Data: json.RawMessage(data), NS: ns}
	}
	static := func(next ...string) InputRequestedData {
		return InputRequestedData{InterruptID: StaticInterruptID("r1"),
			Payload: StaticInterruptPayload{Type: StaticInterruptType, Next: append([]string{}, next...)}}
	}
	cases := []struct {
		name  string
		msgs  []streaming.Msg
		asked []InputRequestedData
		end   string
	}{
		{"completed", []streaming.Msg{cp(`[]`)}, nil, StatusCompleted},
		{"static interrupt", []streaming.Msg{cp(`["weather_graph"]`), upd(`{"__interrupt__":[]}`)}, []InputRequestedData{static("weather_graph")}, StatusInterrupted},
		{"static interrupt, no checkpoints streamed", []streaming.Msg{upd(`{"__interrupt__":[]}`)}, []InputRequestedData{static()}, StatusInterrupted},
		{"a subgraph's empty interrupt update is not the run's end", []streaming.Msg{upd(`{"__interrupt__":[]}`, "weather_graph:1")}, nil, StatusCompleted},
		{"dynamic interrupt, announced once", []streaming.Msg{
			upd(`{"__interrupt__":[{"value":"ask","id":"i1"}]}`), upd(`{"__interrupt__":[{"value":"ask","id":"i1"}]}`)},
			[]InputRequestedData{{InterruptID: "i1", Payload: "ask"}}, StatusInterrupted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := NewTranslator()
			msgs := append([]streaming.Msg{{Event: "metadata", Data: json.RawMessage(`{"attempt":1}`)}}, c.msgs...)
			msgs = append(msgs, streaming.Msg{Event: "end"})
			var asked []InputRequestedData
			var end LifecycleData
			for _, m := range msgs {
				m.RunID = "r1"
				for _, e := range tr.Translate(m, nil) {
					switch d := e.Params.Data.(type) {
					case InputRequestedData:
						if len(e.Params.Namespace) != 0 {
							t.Errorf("input.requested at %v, want the root", e.Params.Namespace)
						}
						asked = append(asked, d)
					case LifecycleData:
						end = d
					}
				}
			}
			if got, want := fmt.Sprint(asked), fmt.Sprint(c.asked); got != want {
				t.Errorf("input.requested %s, want %s", got, want)
			}
			if end.Event != c.end {
				t.Errorf("lifecycle ends %q, want %q", end.Event, c.end)
			}
		})
	}
}
