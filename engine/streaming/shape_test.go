package streaming

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
)

// msgs builds a run's messages from (event, ns, data) triples, numbered from 1.
func msgs(items ...[3]string) []Msg {
	out := make([]Msg, len(items))
	t := time.UnixMilli(1_700_000_000_000)
	for i, it := range items {
		var ns []string
		if it[1] != "" {
			ns = strings.Split(it[1], "|")
		}
		out[i] = Msg{Seq: uint64(i + 1), Time: t, RunID: "r1", Event: graph.Kind(it[0]), NS: ns, Data: json.RawMessage(it[2])}
		if it[0] == "messages" {
			var c []struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(out[i].Data, &c)
			out[i].ChunkID = c[0].ID
		}
		if it[0] == "metadata" {
			out[i].Run = &RunInfo{ThreadID: "t1", AssistantID: "a1", GraphID: "g", StreamMode: []engine.StreamMode{engine.StreamValues}}
		}
	}
	return out
}

// shapeAll shapes every message and returns "event data" lines.
func shapeAll(s *Shaper, ms []Msg) []string {
	var lines []string
	for _, m := range ms {
		for _, f := range s.Shape(m, nil) {
			lines = append(lines, f.Event+" "+string(f.Data))
		}
	}
	return lines
}

func TestParseEventID(t *testing.T) {
	for _, c := range []struct {
		in   string
		seq  uint64
		ok   bool
		fail bool
	}{
		{"", 0, false, false},
		{"1700000000000-42", 42, true, false},
		// The old plain integer names a message: everything of it was received.
		{"42", 42*frameSlots + frameSlots - 1, true, false},
		{" 7 ", 7*frameSlots + frameSlots - 1, true, false},
		{"abc", 0, false, true},
		{"1-x", 0, false, true},
		{"x-1", 0, false, true},
		// The JS SDK's "from the beginning".
		{"-1", 0, false, false},
		{" -1 ", 0, false, false},
		{"-2", 0, false, true},
		{"1-2-3", 0, false, true},
	} {
		seq, ok, err := ParseEventID(c.in)
		if (err != nil) != c.fail || seq != c.seq || ok != c.ok {
			t.Errorf("ParseEventID(%q) = %d, %v, %v", c.in, seq, ok, err)
		}
	}
	if got := EventID(time.UnixMilli(1234), 56); got != fmt.Sprintf("1234-%d", 56*frameSlots) {
		t.Errorf("EventID = %q", got)
	}
	if got := FrameID(time.UnixMilli(1234), 56, 2); got != fmt.Sprintf("1234-%d", 56*frameSlots+2) {
		t.Errorf("FrameID = %q", got)
	}
}

func TestShaperFiltersAndNamesSubgraphs(t *testing.T) {
	ms := msgs(
		[3]string{"metadata", "", `{"run_id":"r1","attempt":1}`},
		[3]string{"values", "", `{"a":1}`},
		[3]string{"updates", "", `{"n":{"a":1}}`},
		[3]string{"values", "sub:t1", `{"b":1}`},
		[3]string{"custom", "", `{"x":1}`},
		[3]string{"error", "", `{"error":"E","message":"m"}`},
		[3]string{"end", "", `null`},
	)
	got := shapeAll(NewShaper([]engine.StreamMode{"values"}, false), ms)
	want := []string{`metadata {"run_id":"r1","attempt":1}`, `values {"a":1}`, `error {"error":"E","message":"m"}`, `end null`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("values only:\n%s", strings.Join(got, "\n"))
	}
	got = shapeAll(NewShaper([]engine.StreamMode{"values", "updates", "custom"}, true), ms)
	if !contains(got, `values|sub:t1 {"b":1}`) || !contains(got, `updates {"n":{"a":1}}`) || !contains(got, `custom {"x":1}`) {
		t.Errorf("subgraphs:\n%s", strings.Join(got, "\n"))
	}
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

func TestShaperMessagesModes(t *testing.T) {
	chunk := func(text, extra string) [3]string {
		return [3]string{"messages", "", `[{"content":"` + text + `","type":"AIMessageChunk","id":"m1"` + extra + `},{"langgraph_node":"agent"}]`}
	}
	ms := msgs(
		[3]string{"metadata", "", `{"run_id":"r1","attempt":1}`},
		[3]string{"task_start", "", `{"id":"t0","name":"__start__","input":{},"triggers":["__start__"]}`},
		[3]string{"task_start", "", `{"id":"t1","name":"agent","input":{},"triggers":["branch:to:agent"]}`},
		chunk("he", ""),
		chunk("llo", `,"tool_call_chunks":[{"name":"f","args":"{\"q\":","id":"c1","index":0,"type":"tool_call_chunk"}]`),
		chunk("", `,"tool_calls":[{"name":"f","args":null,"id":"c1","type":"tool_call"}],"tool_call_chunks":[{"args":"1}","index":0,"type":"tool_call_chunk"}]`),
		[3]string{"task_result", "", `{"id":"t1","name":"agent","result":{},"error":null,"interrupts":[]}`},
		[3]string{"updates", "", `{"agent":{"messages":[{"content":"hello","type":"ai","id":"m1"}]}}`},
		[3]string{"updates", "", `{"tool":{"messages":[{"content":"42","type":"tool","id":"m2","tool_call_id":"c1"}]}}`},
		[3]string{"values", "", `{"messages":[{"content":"hello","type":"ai","id":"m1"},{"content":"42","type":"tool","id":"m2"}]}`},
		[3]string{"updates", "", `{"tool":{"messages":[{"content":"42","type":"tool","id":"m2"}]}}`},
		[3]string{"end", "", `null`},
	)
	tuple := shapeAll(NewShaper([]engine.StreamMode{"messages-tuple"}, false), ms)
	var n int
	for _, l := range tuple {
		if strings.HasPrefix(l, "messages ") {
			n++
		}
	}
	// three chunks, and the tool message once (the streamed m1 is not sent again, m2 not twice)
	if n != 4 || !strings.Contains(tuple[3], `"args":{}`) || !strings.Contains(tuple[4], `"id":"m2"`) {
		t.Errorf("messages-tuple:\n%s", strings.Join(tuple, "\n"))
	}
	legacy := shapeAll(NewShaper([]engine.StreamMode{"messages"}, false), ms)
	want := []string{
		`messages/metadata {"m1":{"metadata":{"langgraph_node":"agent"}}}`,
		`messages/partial [{"additional_kwargs":{},"content":"he"`,
		`messages/partial [{"additional_kwargs":{},"content":"hello"`,
		`"tool_calls":[{"args":{"q":1},"id":"c1","name":"f","type":"tool_call"}]`,
		`messages/complete [{"content":"hello","id":"m1","type":"ai"}]`,
		`messages/metadata {"m2":{"metadata":`,
		`messages/complete [{"content":"42","id":"m2","tool_call_id":"c1","type":"tool"}]`,
	}
	joined := strings.Join(legacy, "\n")
	at := 0
	for _, w := range want {
		i := strings.Index(joined[at:], w)
		if i < 0 {
			t.Fatalf("messages mode: missing %s after offset %d in\n%s", w, at, joined)
		}
		at += i + len(w)
	}
	if strings.Count(joined, "messages/complete") != 2 {
		t.Errorf("messages mode sent a message twice:\n%s", joined)
	}
}

func TestShaperTasksDebugAndEvents(t *testing.T) {
	ms := msgs(
		[3]string{"metadata", "", `{"run_id":"r1","attempt":1}`},
		[3]string{"checkpoints", "", `{"metadata":{"step":-1},"values":{}}`},
		[3]string{"task_start", "", `{"id":"t0","name":"__start__","input":{},"triggers":["__start__"]}`},
		[3]string{"checkpoints", "", `{"metadata":{"step":0},"values":{}}`},
		[3]string{"task_start", "", `{"id":"t1","name":"agent","input":{"q":1},"triggers":["branch:to:agent"],"interrupts":[]}`},
		[3]string{"task_result", "", `{"id":"t1","name":"agent","result":{"a":2},"error":null,"interrupts":[]}`},
		[3]string{"checkpoints", "", `{"metadata":{"step":1},"values":{"a":2}}`},
		[3]string{"values", "", `{"a":2}`},
		[3]string{"end", "", `null`},
	)
	got := shapeAll(NewShaper([]engine.StreamMode{"tasks", "debug", "checkpoints"}, false), ms)
	joined := strings.Join(got, "\n")
	for _, w := range []string{
		`tasks {"id":"t1","name":"agent","input":{"q":1}`,
		`debug {"payload":{"id":"t1","name":"agent","input":{"q":1},"triggers":["branch:to:agent"],"interrupts":[]},"step":1,"timestamp":"2023-11-14T22:13:20.000000+00:00","type":"task"}`,
		`"step":1,"timestamp":"2023-11-14T22:13:20.000000+00:00","type":"task_result"}`,
		`debug {"payload":{"metadata":{"step":1},"values":{"a":2}},"step":1,"timestamp"`,
		`checkpoints {"metadata":{"step":-1},"values":{}}`,
	} {
		if !strings.Contains(joined, w) {
			t.Errorf("missing %s in\n%s", w, joined)
		}
	}
	if strings.Contains(joined, "__start__") {
		t.Errorf("the start task is shown:\n%s", joined)
	}
	ev := strings.Join(shapeAll(NewShaper([]engine.StreamMode{"events"}, false), ms), "\n")
	for _, w := range []string{`"event":"on_chain_start","metadata"`, `"name":"agent","parent_ids":["r1"],"run_id":"t1","tags":["graph:step:1"]`,
		`{"data":{"output":{"a":2}},"event":"on_chain_end"`} {
		if !strings.Contains(ev, w) {
			t.Errorf("events: missing %s in\n%s", w, ev)
		}
	}
}

func TestAppendFrame(t *testing.T) {
	got := string(AppendFrame(nil, Frame{Event: "val\r\nues", Data: []byte("{\n \"a\": 1\n}"), ID: "1-2\nevent: x"}))
	want := "event: values\ndata: {\"a\":1}\nid: 1-2event: x\n\n"
	if got != want {
		t.Errorf("frame = %q, want %q", got, want)
	}
	if got := string(AppendFrame(nil, Frame{Comment: "hi\nthere"})); got != ": hithere\n\n" {
		t.Errorf("comment = %q", got)
	}
	if got := string(AppendFrame(nil, Frame{Event: "end"})); got != "event: end\ndata: null\n\n" {
		t.Errorf("end = %q", got)
	}
	if got := string(AppendFrame(nil, Frame{Event: "x", Data: []byte("not\njson")})); got != "event: x\ndata: \"not\\njson\"\n\n" {
		t.Errorf("bad data = %q", got)
	}
}

func TestSanitize(t *testing.T) {
	got := Sanitize("connect postgres://u:p@db.internal:5432/x failed; see https://user:secret@host/p")
	if strings.Contains(got, "db.internal") || strings.Contains(got, "secret") {
		t.Errorf("Sanitize left a secret: %q", got)
	}
	if Sanitize("Boo!") != "Boo!" {
		t.Error("Sanitize changed a plain message")
	}
}
