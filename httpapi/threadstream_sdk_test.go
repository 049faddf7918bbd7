package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/threadstream"
)

// The thread-centric protocol as the SDKs use it (issue 24): a stream opened before the thread
// exists, a static interrupt announced and answered, and the tool calls of a root-level tool node.

// TestThreadEventsBeforeTheThreadExists: an SSE stream on a thread id nobody created yet waits
// for the run.start that creates the thread, as a WebSocket subscription does (and as the Python
// reference server answers: 200, then the run's events). The SDKs open their lifecycle watch
// before run.start; a 404 there failed client.threads.stream and crashed the JS SDK.
func TestThreadEventsBeforeTheThreadExists(t *testing.T) {
	s := startStreamStack(t, 0)
	tid := "7d3f1c52-5b8e-4a8e-9c2f-2f1e0b9a4c11"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := `{"channels":["lifecycle","values"]}`
	resp := s.openEvents(t, ctx, tid, body)
	if r := s.command(t, tid, 1, threadstream.MethodRunStart, `{"assistant_id":"echo","input":{"messages":"hi"}}`); r.Type != threadstream.TypeSuccess {
		t.Fatalf("run.start: %+v", r)
	}
	events := s.readProtoEvents(t, ctx, resp, body, func(e []protoEvent) bool { return ended(e) == 1 })
	if events[0].lifecycle() != threadstream.StatusRunning || events[len(events)-1].lifecycle() != threadstream.StatusCompleted {
		t.Fatalf("events of the first run: %+v", events)
	}
	if code, raw := s.status(t, "GET", "/threads/"+tid, "", nil); code != http.StatusOK {
		t.Fatalf("the thread run.start made: %d %s", code, raw)
	}
}

// TestStaticInterruptOnTheThreadStream: weather stops before its weather_node (interrupt_before
// in a subgraph). The run ends in lifecycle as interrupted, with an input.requested whose id
// input.respond takes, exactly as after a dynamic interrupt(); the answer continues the thread.
// The Python reference server (langgraph-api 0.16.7) announces "completed" and no input there
// while the thread is interrupted, and refuses every interrupt_id (no_such_interrupt); it
// continues such a thread on run.start without input, as this server also does.
func TestStaticInterruptOnTheThreadStream(t *testing.T) {
	s := startStreamStack(t, 0)
	tid := s.thread(t)
	start := s.command(t, tid, 1, threadstream.MethodRunStart, `{"assistant_id":"weather","input":{"messages":"weather in SF?"}}`)
	if start.Type != threadstream.TypeSuccess {
		t.Fatalf("run.start: %+v", start)
	}
	runID := start.Result.(map[string]any)["run_id"].(string)
	events := s.protoEvents(t, tid, `{"channels":["lifecycle","input","values"],"since":0}`, func(e []protoEvent) bool { return ended(e) == 1 })
	var asked []threadstream.InputRequestedData
	for _, e := range events {
		switch e.Method {
		case threadstream.EventInputRequested:
			var d struct {
				InterruptID string                              `json:"interrupt_id"`
				Payload     threadstream.StaticInterruptPayload `json:"payload"`
			}
			_ = json.Unmarshal(e.Params.Data, &d)
			asked = append(asked, threadstream.InputRequestedData{InterruptID: d.InterruptID, Payload: d.Payload})
		case threadstream.EventValues:
			if strings.Contains(string(e.Params.Data), "__interrupt__") {
				t.Errorf("values with the interrupts the input channel carries: %s", e.Params.Data)
			}
		}
	}
	want := []threadstream.InputRequestedData{{InterruptID: threadstream.StaticInterruptID(runID),
		Payload: threadstream.StaticInterruptPayload{Type: threadstream.StaticInterruptType, Next: []string{"weather_graph"}}}}
	if fmt.Sprint(asked) != fmt.Sprint(want) {
		t.Fatalf("input.requested %v, want %v", asked, want)
	}
	if end := events[len(events)-1].lifecycle(); end != threadstream.StatusInterrupted {
		t.Fatalf("the run ends %q, want interrupted", end)
	}

	if r := s.command(t, tid, 2, threadstream.MethodInputRespond, `{"namespace":[],"interrupt_id":"not-it","response":"go"}`); r.Error != threadstream.ErrNoSuchInterrupt {
		t.Fatalf("input.respond to another id: %+v", r)
	}
	params := fmt.Sprintf(`{"namespace":[],"interrupt_id":%q,"response":"go"}`, want[0].InterruptID)
	if r := s.command(t, tid, 3, threadstream.MethodInputRespond, params); r.Type != threadstream.TypeSuccess {
		t.Fatalf("input.respond: %+v", r)
	}
	events = s.protoEvents(t, tid, `{"channels":["lifecycle"],"since":0}`, func(e []protoEvent) bool { return ended(e) == 2 })
	if end := events[len(events)-1].lifecycle(); end != threadstream.StatusCompleted {
		t.Fatalf("the answered run ends %q, want completed", end)
	}
	_, raw := s.status(t, "GET", "/threads/"+tid+"/state", "", nil)
	if !strings.Contains(raw, "It's sunny in San Francisco!") {
		t.Fatalf("state after the answer: %s", raw)
	}
	// Answered: the id is not pending any more.
	if r := s.command(t, tid, 4, threadstream.MethodInputRespond, params); r.Error != threadstream.ErrNoSuchInterrupt {
		t.Fatalf("input.respond again: %+v", r)
	}
}

// TestStaticInterruptResumedOverREST: the ways the Python reference server continues a thread
// stopped by a static interrupt, settled against it (langgraph-api 0.16.7, a weather-like graph):
// a run with input null, and one with command.resume, whatever its value (the value is dropped);
// a run with new input starts over and stops there again.
func TestStaticInterruptResumedOverREST(t *testing.T) {
	s := startStreamStack(t, 0)
	cases := []struct {
		name, body, status string
	}{
		{"input null", `{"assistant_id":"weather","input":null}`, "idle"},
		{"command.resume", `{"assistant_id":"weather","command":{"resume":"yes"}}`, "idle"},
		{"command.resume by id", `{"assistant_id":"weather","command":{"resume":{"some-id":"yes"}}}`, "idle"},
		{"new input", `{"assistant_id":"weather","input":{"messages":"again"}}`, "interrupted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tid := s.thread(t)
			if code, raw := s.status(t, "POST", "/threads/"+tid+"/runs/wait", `{"assistant_id":"weather","input":{"messages":"hi"}}`, nil); code != http.StatusOK {
				t.Fatalf("first run: %d %s", code, raw)
			}
			if code, raw := s.status(t, "POST", "/threads/"+tid+"/runs/wait", c.body, nil); code != http.StatusOK {
				t.Fatalf("%s: %d %s", c.body, code, raw)
			}
			_, raw := s.status(t, "GET", "/threads/"+tid, "", nil)
			var th struct {
				Status string `json:"status"`
			}
			_ = json.Unmarshal([]byte(raw), &th)
			_, state := s.status(t, "GET", "/threads/"+tid+"/state", "", nil)
			if th.Status != c.status || (c.status == "idle") != strings.Contains(state, "It's sunny") {
				t.Fatalf("after %s: thread %s, state %s", c.body, raw, state)
			}
		})
	}
}

// TestToolCallsOfARootToolNode: the react template's tool node is at the root, so its calls'
// tools events are at the root namespace (where the SDK's thread.tool_calls looks, with depth 0),
// from node "tools", and a call's output is its tool message, as LangGraph's tools stream mode
// gives it (checked against langgraph 1.2.24: a root ToolNode's events at (), the output a
// ToolMessage with status "success").
func TestToolCallsOfARootToolNode(t *testing.T) {
	s := startStreamStack(t, 0)
	tid := s.thread(t)
	if r := s.command(t, tid, 1, threadstream.MethodRunStart, `{"assistant_id":"react","input":{"messages":"calculator: 2 + 3"}}`); r.Type != threadstream.TypeSuccess {
		t.Fatalf("run.start: %+v", r)
	}
	events := s.protoEvents(t, tid, `{"channels":["tools","lifecycle"],"namespaces":[[]],"depth":0,"since":0}`, func(e []protoEvent) bool { return ended(e) == 1 })
	type toolEvent struct {
		Event      string `json:"event"`
		ToolCallID string `json:"tool_call_id"`
		ToolName   string `json:"tool_name"`
		Output     *struct {
			Type       string `json:"type"`
			Content    string `json:"content"`
			Name       string `json:"name"`
			ToolCallID string `json:"tool_call_id"`
			Status     string `json:"status"`
		} `json:"output"`
	}
	var got []string
	for _, e := range events {
		if e.Method != threadstream.EventTools {
			continue
		}
		var d toolEvent
		if err := json.Unmarshal(e.Params.Data, &d); err != nil {
			t.Fatalf("tools event %s: %v", e.Params.Data, err)
		}
		line := fmt.Sprintf("%v %s %s %s", e.Params.Namespace, e.Params.Node, d.Event, d.ToolName)
		if d.Output != nil {
			if d.Output.ToolCallID != d.ToolCallID {
				t.Errorf("output for call %q, event for %q", d.Output.ToolCallID, d.ToolCallID)
			}
			line += fmt.Sprintf("-> %s %s %s %q", d.Output.Type, d.Output.Name, d.Output.Status, d.Output.Content)
		}
		got = append(got, line)
	}
	want := []string{"[] tools tool-started calculator", `[] tools tool-finished -> tool calculator success "5"`}
	if !slices.Equal(got, want) {
		t.Fatalf("tools events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
