package a2a_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/httpapi/a2a"
)

// A static breakpoint (the weather graph's subgraph stops before weather_node) makes the task
// input-required with a status message saying where it stopped; the next message on the task
// continues the same task past the breakpoint, which a resume command could not.
func TestStaticInterruptContinuesTheTask(t *testing.T) {
	s := start(t, nil)
	asked := s.task(t, "weather", "message/send", msg("q", nil, text("what is the weather in SF?")))
	if asked.Status.State != a2a.StateInputRequired || asked.Status.Message == nil {
		t.Fatalf("weather task %+v", asked.Status)
	}
	if got := partsText(asked.Status.Message.Parts); !strings.Contains(got, "weather_graph/weather_node") {
		t.Errorf("status message %q does not say where the graph paused", got)
	}
	if len(asked.Artifacts) != 1 || asked.Artifacts[0].Name != "Interrupt" {
		t.Errorf("artifacts %+v", asked.Artifacts)
	}
	// Another task on the context in between would make the pause not this task's any more.
	other := s.task(t, "weather", "message/send", msg("q2", map[string]any{"contextId": asked.ContextID}, text("and in Paris?")))
	if a := s.call(t, "weather", "message/send", msg("late", map[string]any{"taskId": asked.ID}, text("go on"))); a.Error == nil ||
		a.Error.Code != a2a.CodeUnsupportedOperation {
		t.Fatalf("a message to a superseded task: %+v", a)
	}
	asked = other
	done := s.task(t, "weather", "message/send", msg("go", map[string]any{"taskId": asked.ID}, text("go on")))
	if done.ID != asked.ID || done.Status.State != a2a.StateCompleted || !strings.Contains(partsText(done.Artifacts[0].Parts), "sunny") {
		t.Fatalf("continued task %+v", done)
	}
	rec := s.latestRun(t, asked.ContextID)
	if rec.Kwargs.Command != nil || rec.Kwargs.Input != nil {
		t.Errorf("a continue past a breakpoint runs without input or command: %v %v", rec.Kwargs.Command, rec.Kwargs.Input)
	}
	a := s.call(t, "weather", "tasks/list", map[string]any{"contextId": asked.ContextID})
	var page struct {
		Tasks []a2a.Task `json:"tasks"`
	}
	if a.Error != nil || json.Unmarshal(a.Result, &page) != nil || len(page.Tasks) != 2 || page.Tasks[0].ID != asked.ID ||
		page.Tasks[0].Status.State != a2a.StateCompleted {
		t.Errorf("the context's tasks: %s %+v", a.Result, a.Error)
	}
}

// sse posts body with Accept: text/event-stream and returns the JSON-RPC responses of the
// event stream it answers (failing when the answer is no event stream).
func (s *server) sse(t *testing.T, assistant, body string, header ...string) []map[string]any {
	t.Helper()
	res := do(t, "POST", s.URL+"/a2a/"+assistant, body, append([]string{"Accept", "text/event-stream"}, header...)...)
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("status %d, content type %q", res.StatusCode, ct)
	}
	var out []map[string]any
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("event %s: %v", line, err)
			}
			out = append(out, m)
		}
	}
	return out
}

// errorCode is the code of the one error event of events, 0 when it is not that.
func errorCode(events []map[string]any) int {
	if len(events) != 1 {
		return 0
	}
	e, _ := events[0]["error"].(map[string]any)
	code, _ := e["code"].(float64)
	return int(code)
}

// A resubscription is refused where a streaming client reads: in an event stream, with
// unsupported operation for a task, not found for none.
func TestResubscribeIsRefusedInTheStream(t *testing.T) {
	s := start(t, nil)
	done := s.task(t, "echo", "message/send", msg("m", nil, text("hi")))
	missing := "0190f7a6-0000-7000-8000-000000000001"
	cases := []struct {
		name, body string
		header     []string
		code       int
	}{
		{"0.3", `{"jsonrpc":"2.0","id":3,"method":"tasks/resubscribe","params":{"id":"` + done.ID + `"}}`, nil, a2a.CodeUnsupportedOperation},
		{"0.3 unknown task", `{"jsonrpc":"2.0","id":3,"method":"tasks/resubscribe","params":{"id":"` + missing + `"}}`, nil, a2a.CodeTaskNotFound},
		{"1.0", `{"jsonrpc":"2.0","id":3,"method":"SubscribeToTask","params":{"id":"` + done.ID + `"}}`, []string{"A2A-Version", "1.0"}, a2a.CodeUnsupportedOperation},
		{"1.0 without id", `{"jsonrpc":"2.0","id":3,"method":"SubscribeToTask","params":{}}`, []string{"A2A-Version", "1.0"}, a2a.CodeInvalidParams},
		{"a stream of an unsupported version", `{"jsonrpc":"2.0","id":3,"method":"SendStreamingMessage","params":{}}`, []string{"A2A-Version", "9.0"}, a2a.CodeVersionNotSupported},
		{"not JSON, to a client reading a stream", `{"jsonrpc"`, nil, a2a.CodeParseError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			events := s.sse(t, "echo", tc.body, tc.header...)
			if got := errorCode(events); got != tc.code {
				t.Fatalf("events %v, want one error %d", events, tc.code)
			}
		})
	}
}

// v1 sends one A2A 1.0 JSON-RPC request (A2A-Version: 1.0) and returns its result or error.
func (s *server) v1(t *testing.T, assistant, method string, params any) (map[string]any, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	code, raw := s.post(t, assistant, string(body), "A2A-Version", "1.0")
	var a struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if code != 200 || json.Unmarshal(raw, &a) != nil {
		t.Fatalf("%s: status %d: %s", method, code, raw)
	}
	if strings.Contains(string(raw), `"kind"`) {
		t.Errorf("%s: a 1.0 answer has 0.3's kinds: %s", method, raw)
	}
	return a.Result, a.Error
}

// at reads a path of keys and indices in a decoded JSON value.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func userV1(id string, extra map[string]any, parts ...map[string]any) map[string]any {
	m := map[string]any{"messageId": id, "role": "ROLE_USER", "parts": parts}
	for k, v := range extra {
		m[k] = v
	}
	return map[string]any{"message": m}
}

func TestVersion1Card(t *testing.T) {
	s := start(t, nil)
	card := func(header ...string) map[string]any {
		t.Helper()
		res := do(t, "GET", s.URL+"/a2a/echo/.well-known/agent-card.json", "", header...)
		defer res.Body.Close()
		var c map[string]any
		if err := json.NewDecoder(res.Body).Decode(&c); err != nil || res.StatusCode != 200 {
			t.Fatalf("card: %d %v", res.StatusCode, err)
		}
		return c
	}
	url := s.URL + "/a2a/echo"
	v1 := card("A2A-Version", "1.0")
	if v1["protocolVersion"] != nil || v1["url"] != nil || v1["preferredTransport"] != nil {
		t.Errorf("the 1.0 card has 0.3's fields: %v", v1)
	}
	if at(v1, "supportedInterfaces", 0, "protocolVersion") != "1.0" || at(v1, "supportedInterfaces", 0, "url") != url ||
		at(v1, "supportedInterfaces", 0, "protocolBinding") != "JSONRPC" || at(v1, "supportedInterfaces", 1, "protocolVersion") != "0.3" ||
		at(v1, "capabilities", "extendedAgentCard") != false || at(v1, "capabilities", "streaming") != true {
		t.Errorf("1.0 card %v", v1)
	}
	v03 := card()
	if v03["protocolVersion"] != "0.3.0" || v03["url"] != url || at(v03, "supportedInterfaces", 0, "protocolVersion") != "1.0" {
		t.Errorf("0.3 card %v", v03)
	}
}

// The 1.0 binding end to end: a send answered as SendMessageResponse, get, list with 1.0's
// state names, an interrupt streamed as StreamResponses whose input-required status says what
// is asked, the next message continuing the task, a cancel, and 1.0's error details.
func TestVersion1Binding(t *testing.T) {
	s := start(t, nil)
	res, rerr := s.v1(t, "echo", "SendMessage", userV1("m1", nil, map[string]any{"text": "hi"}))
	if rerr != nil || at(res, "task", "status", "state") != "TASK_STATE_COMPLETED" ||
		at(res, "task", "artifacts", 0, "parts", 0, "text") != "echo: hi" ||
		at(res, "task", "history", 0, "role") != "ROLE_USER" || at(res, "task", "history", 1, "role") != "ROLE_AGENT" {
		t.Fatalf("SendMessage: %v %v", res, rerr)
	}
	id, _ := at(res, "task", "id").(string)
	got, rerr := s.v1(t, "echo", "GetTask", map[string]any{"id": id, "historyLength": 0})
	if rerr != nil || got["id"] != id || at(got, "status", "state") != "TASK_STATE_COMPLETED" || got["history"] != nil {
		t.Errorf("GetTask: %v %v", got, rerr)
	}
	list, rerr := s.v1(t, "echo", "ListTasks", map[string]any{"status": "TASK_STATE_COMPLETED", "includeArtifacts": true})
	if rerr != nil || at(list, "tasks", 0, "id") != id || list["nextPageToken"] != "" || at(list, "tasks", 0, "artifacts", 0, "artifactId") == nil {
		t.Errorf("ListTasks: %v %v", list, rerr)
	}
	if _, rerr := s.v1(t, "echo", "ListTasks", map[string]any{"status": "completed"}); rerr == nil || !strings.Contains(rerr["message"].(string), "TASK_STATE_COMPLETED") {
		t.Errorf("ListTasks with a 0.3 state: %v", rerr)
	}

	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "s", "method": "SendStreamingMessage",
		"params": userV1("ask", nil, map[string]any{"text": "hi"}, map[string]any{"data": map[string]any{"interrupt": true}})})
	events := s.sse(t, "agent", string(body), "A2A-Version", "1.0")
	var shape []string
	for _, e := range events {
		r, _ := e["result"].(map[string]any)
		for k := range r {
			shape = append(shape, k)
		}
	}
	if strings.Join(shape, " ") != "task statusUpdate artifactUpdate statusUpdate" {
		t.Fatalf("stream %v", events)
	}
	last := at(events[3], "result", "statusUpdate")
	if at(last, "status", "state") != "TASK_STATE_INPUT_REQUIRED" || at(last, "status", "message", "parts", 0, "text") != "i want to interrupt" ||
		at(last, "final") != nil || at(events[2], "result", "artifactUpdate", "artifact", "name") != "Interrupt" {
		t.Errorf("input-required events %v / %v", events[2], events[3])
	}
	task, _ := at(events[0], "result", "task", "id").(string)
	res, rerr = s.v1(t, "agent", "SendMessage", userV1("answer", map[string]any{"taskId": task}, map[string]any{"text": "yes"}))
	if rerr != nil || at(res, "task", "id") != task || at(res, "task", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Errorf("the next message on the task: %v %v", res, rerr)
	}

	slow := userV1("slow", nil, map[string]any{"text": "hi"}, map[string]any{"data": map[string]any{"sleep": 60}})
	slow["configuration"] = map[string]any{"returnImmediately": true}
	res, rerr = s.v1(t, "agent", "SendMessage", slow)
	if rerr != nil {
		t.Fatal(rerr)
	}
	cancelled, rerr := s.v1(t, "agent", "CancelTask", map[string]any{"id": at(res, "task", "id")})
	if rerr != nil || at(cancelled, "status", "state") != "TASK_STATE_CANCELED" {
		t.Errorf("CancelTask: %v %v", cancelled, rerr)
	}

	_, rerr = s.v1(t, "echo", "SendMessage", map[string]any{"message": map[string]any{"messageId": "x", "role": "ROLE_BOT", "parts": []any{map[string]any{}}}})
	if rerr == nil || rerr["code"] != float64(a2a.CodeInvalidParams) || at(rerr, "data", 0, "@type") != "type.googleapis.com/google.rpc.BadRequest" ||
		at(rerr, "data", 0, "fieldViolations", 0, "field") != "message.role" || at(rerr, "data", 0, "fieldViolations", 1, "field") != "message.parts[0]" {
		t.Errorf("1.0 invalid params: %v", rerr)
	}
	if _, rerr = s.v1(t, "echo", "CreateTaskPushNotificationConfig", map[string]any{}); rerr == nil || rerr["code"] != float64(a2a.CodePushNotSupported) {
		t.Errorf("push config: %v", rerr)
	}
}
