package a2a_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/assistants"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/a2a"
	"github.com/jetgraph/jetgraph/httpapi/httpapitest"
)

// leakyError is what the leaky graph fails with: a connection string, a host name with a port,
// an address and a path, none of which may reach an A2A client.
const leakyError = "dial postgres://admin:hunter2@db.prod.internal:5432/app via 10.1.2.3:6432 (/etc/jetgraph/secrets/db.json): connection refused"

// leakyState is the leaky graph's state.
type leakyState struct {
	Messages []any `json:"messages,omitempty"`
}

// registry serves echo, agent and leaky, a graph whose node fails with leakyError.
func registry(t testing.TB) *graphs.Registry {
	t.Helper()
	reg, err := graphs.Examples().Select([]string{"echo", "agent", "weather"})
	if err != nil {
		t.Fatal(err)
	}
	fail := graph.Typed(func(ctx context.Context, s leakyState, rt *graph.Runtime) (leakyState, error) {
		return s, errors.New(leakyError)
	})
	leaky := graph.Channels[leakyState](graph.NewBuilder("leaky")).Node("connect", fail).
		Edge(graph.Start, "connect").MustCompile(graph.CompileOptions{})
	reg.MustRegister(graphs.Entry{ID: "leaky", Build: graphs.Static(leaky)})
	return reg
}

// server is a jetgraph stack serving A2A over real JetStream and bbolt, every exchange checked
// against the OpenAPI document.
type server struct {
	URL string
	P   *platform.Platform
}

// start serves the stack; wrap, when set, changes the A2A endpoint's run service.
func start(t testing.TB, wrap func(a2a.Runs) a2a.Runs) *server {
	t.Helper()
	p := platformtest.Start(t, platform.Config{Graphs: registry(t)}, nil)
	var r a2a.Runs = p.Runs
	if wrap != nil {
		r = wrap(r)
	}
	srv := httpapi.New(httpapi.Deps{Threads: p.Threads, Assistants: p.Assistants, Store: p.Store, Runner: p.Runner,
		Graphs: p.Graphs, Runs: p.Runs, Logger: slog.New(slog.DiscardHandler),
		A2A: a2a.New(a2a.Deps{Assistants: p.Assistants, Runs: r, States: p.Runner, Threads: p.Threads, Logger: slog.New(slog.DiscardHandler)})})
	ts := httpapitest.NewServer(t, httpapi.OpenAPI(), srv.Handler())
	return &server{URL: ts.URL, P: p}
}

// rpcAnswer is a JSON-RPC response as the tests read it.
type rpcAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *a2a.RPCError   `json:"error"`
}

// do sends an HTTP request with body (none when empty) and header pairs.
func do(t *testing.T, method, url, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// post sends body to the A2A endpoint of assistant and returns the status and raw answer.
func (s *server) post(t *testing.T, assistant, body string, header ...string) (int, []byte) {
	t.Helper()
	res := do(t, "POST", s.URL+"/a2a/"+assistant, body, header...)
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, raw
}

// call sends one JSON-RPC request to assistant and decodes the answer (status 200).
func (s *server) call(t *testing.T, assistant, method string, params any) rpcAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	code, raw := s.post(t, assistant, string(body))
	if code != 200 {
		t.Fatalf("%s: status %d: %s", method, code, raw)
	}
	var a rpcAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("%s: %v: %s", method, err, raw)
	}
	if string(a.ID) != "7" || a.JSONRPC != "2.0" {
		t.Fatalf("%s: envelope %s", method, raw)
	}
	return a
}

// task calls method and decodes its task, failing on an error.
func (s *server) task(t *testing.T, assistant, method string, params any) a2a.Task {
	t.Helper()
	a := s.call(t, assistant, method, params)
	if a.Error != nil {
		t.Fatalf("%s: error %d %s", method, a.Error.Code, a.Error.Message)
	}
	var task a2a.Task
	if err := json.Unmarshal(a.Result, &task); err != nil {
		t.Fatal(err)
	}
	return task
}

// msg is message/send params of a user message with parts.
func msg(id string, extra map[string]any, parts ...map[string]any) map[string]any {
	m := map[string]any{"kind": "message", "messageId": id, "role": "user", "parts": parts}
	for k, v := range extra {
		m[k] = v
	}
	return map[string]any{"message": m}
}

// text is a text part.
func text(s string) map[string]any { return map[string]any{"kind": "text", "text": s} }

// data is a data part.
func data(d map[string]any) map[string]any { return map[string]any{"kind": "data", "data": d} }

// partsText joins the texts of parts.
func partsText(parts []a2a.Part) string {
	var out []string
	for _, p := range parts {
		out = append(out, p.Text)
	}
	return strings.Join(out, "")
}

// errCase is a request answered with a JSON-RPC error: its code, and what its message names.
type errCase struct {
	name string
	body string
	code int
	says []string
}

func TestRPCErrorCodes(t *testing.T) {
	s := start(t, nil)
	done := s.task(t, "echo", "message/send", msg("m-done", nil, text("hi")))
	if done.Status.State != a2a.StateCompleted {
		t.Fatalf("echo task: %+v", done.Status)
	}
	missing := "0190f7a6-0000-7000-8000-000000000001"
	validMsg := func(extra map[string]any, parts ...map[string]any) string {
		if len(parts) == 0 {
			parts = []map[string]any{text("hi")}
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "r", "method": "message/send", "params": msg("m1", extra, parts...)})
		return string(b)
	}
	rpc := func(method string, params string) string {
		return `{"jsonrpc":"2.0","id":"r","method":"` + method + `","params":` + params + `}`
	}
	cases := []errCase{
		{"not JSON", `{"jsonrpc":`, a2a.CodeParseError, []string{"JSON"}},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"tasks/get"}]`, a2a.CodeInvalidRequest, nil},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"tasks/get","params":{}}`, a2a.CodeInvalidRequest, []string{"jsonrpc"}},
		{"no method", `{"jsonrpc":"2.0","id":1}`, a2a.CodeInvalidRequest, []string{"method"}},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"tasks/get"}`, a2a.CodeInvalidRequest, []string{"id"}},
		{"array params", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":[1]}`, a2a.CodeInvalidRequest, []string{"params"}},
		{"unknown method", rpc("tasks/frobnicate", `{}`), a2a.CodeMethodNotFound, []string{"tasks/frobnicate"}},
		{"push notifications", rpc("tasks/pushNotificationConfig/set", `{}`), a2a.CodePushNotSupported, nil},
		{"extended card", rpc("agent/getAuthenticatedExtendedCard", `{}`), a2a.CodeUnsupportedOperation, nil},
		{"unsupported version", rpc("tasks/get", `{"id":"`+done.ID+`"}`), a2a.CodeVersionNotSupported, []string{"2.1"}},
		{"message to an ended task", validMsg(map[string]any{"taskId": done.ID}), a2a.CodeUnsupportedOperation, []string{"completed", "contextId"}},
		{"push config on send", validMsg(nil) + "", 0, nil}, // replaced below
		{"no params", `{"jsonrpc":"2.0","id":1,"method":"message/send"}`, a2a.CodeInvalidParams, []string{"params"}},
		{"no message", rpc("message/send", `{}`), a2a.CodeInvalidParams, []string{"message"}},
		{"every problem of a message", rpc("message/send", `{"message":{"role":"bot","parts":[]}}`), a2a.CodeInvalidParams,
			[]string{"messageId", "role", "parts"}},
		{"bad parts", rpc("message/send", `{"message":{"role":"user","messageId":"x","parts":[{"kind":"image"},{"kind":"text","text":""},{"kind":"data"},{"kind":"file","file":{}}]}}`),
			a2a.CodeInvalidParams, []string{"parts[0].kind", "parts[1].text", "parts[2].data", "parts[3].file"}},
		{"parts of the wrong type", rpc("message/send", `{"message":{"role":"user","messageId":"x","parts":"hi"}}`), a2a.CodeInvalidParams, []string{"parts"}},
		{"context not a UUID", validMsg(map[string]any{"contextId": "my-conversation"}), a2a.CodeInvalidParams, []string{"contextId"}},
		{"bad command", rpc("message/send", `{"message":{"role":"user","messageId":"x","parts":[{"kind":"text","text":"a"}]},"metadata":{"command":"yes"}}`),
			a2a.CodeInvalidParams, []string{"command"}},
		{"task of another context", validMsg(map[string]any{"taskId": done.ID, "contextId": missing}), a2a.CodeInvalidParams, []string{"contextId"}},
		{"unknown task on send", validMsg(map[string]any{"taskId": missing}), a2a.CodeTaskNotFound, []string{missing}},
		{"file part", validMsg(nil, map[string]any{"kind": "file", "file": map[string]any{"uri": "https://example.com/a.png"}}), a2a.CodeContentTypeNotSupport, []string{"file"}},
		{"output modes", rpc("message/send", `{"message":{"role":"user","messageId":"x","parts":[{"kind":"text","text":"a"}]},"configuration":{"acceptedOutputModes":["image/png"]}}`),
			a2a.CodeContentTypeNotSupport, nil},
		{"get: no id", rpc("tasks/get", `{}`), a2a.CodeInvalidParams, []string{"id"}},
		{"get: id not a UUID", rpc("tasks/get", `{"id":"abc"}`), a2a.CodeInvalidParams, []string{"id"}},
		{"get: negative history", rpc("tasks/get", `{"id":"`+done.ID+`","historyLength":-1}`), a2a.CodeInvalidParams, []string{"historyLength"}},
		{"get: unknown task", rpc("tasks/get", `{"id":"`+missing+`"}`), a2a.CodeTaskNotFound, nil},
		{"get: another agent's task", `{"jsonrpc":"2.0","id":"r","method":"tasks/get","params":{"id":"` + done.ID + `"}}`, a2a.CodeTaskNotFound, nil}, // sent to agent below
		{"cancel: unknown task", rpc("tasks/cancel", `{"id":"`+missing+`"}`), a2a.CodeTaskNotFound, nil},
		{"cancel: ended task", rpc("tasks/cancel", `{"id":"`+done.ID+`"}`), a2a.CodeTaskNotCancelable, []string{"completed"}},
		{"list: bad page", rpc("tasks/list", `{"pageSize":0,"status":"sleeping","pageToken":"x","contextId":"c"}`), a2a.CodeInvalidParams,
			[]string{"pageSize", "status", "pageToken", "contextId"}},
	}
	for i := range cases {
		if cases[i].name == "push config on send" {
			cases[i] = errCase{"push config on send", rpc("message/send", `{"message":{"role":"user","messageId":"x","parts":[{"kind":"text","text":"a"}]},"configuration":{"pushNotificationConfig":{"url":"https://example.com/hook"}}}`),
				a2a.CodePushNotSupported, nil}
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assistant := "echo"
			if strings.HasPrefix(tc.name, "get: another") {
				assistant = "agent"
			}
			var header []string
			if tc.name == "unsupported version" {
				header = []string{"A2A-Version", "2.1"}
			}
			code, raw := s.post(t, assistant, tc.body, header...)
			if code != 200 {
				t.Fatalf("status %d: %s", code, raw)
			}
			var a rpcAnswer
			if err := json.Unmarshal(raw, &a); err != nil {
				t.Fatal(err)
			}
			if a.Error == nil || a.Error.Code != tc.code {
				t.Fatalf("answer %s, want error %d", raw, tc.code)
			}
			if a.Result != nil {
				t.Errorf("an error answer has a result: %s", raw)
			}
			for _, w := range tc.says {
				if !strings.Contains(a.Error.Message, w) {
					t.Errorf("message %q does not name %q", a.Error.Message, w)
				}
			}
		})
	}
}

func TestInternalErrorsSayNothingOfTheInfrastructure(t *testing.T) {
	s := start(t, func(r a2a.Runs) a2a.Runs { return failingRuns{r} })
	a := s.call(t, "echo", "message/send", msg("m1", nil, text("hi")))
	if a.Error == nil || a.Error.Code != a2a.CodeInternal {
		t.Fatalf("answer %+v, want -32603", a)
	}
	if strings.Contains(a.Error.Message, "nats") || strings.Contains(a.Error.Message, "4222") {
		t.Errorf("internal error shows its cause: %q", a.Error.Message)
	}
}

// failingRuns is the run service of a log that does not answer.
type failingRuns struct{ a2a.Runs }

func (failingRuns) Create(ctx context.Context, c runs.Create) (engine.RunRecord, error) {
	return engine.RunRecord{}, fmt.Errorf("runs.create: nats: dial tcp nats-0.nats.svc.cluster.local:4222: i/o timeout")
}

func TestAgentCard(t *testing.T) {
	s := start(t, nil)
	desc := "Repeats what it is told."
	a, err := s.P.Assistants.Create(context.Background(), assistantCreate("echo", "Echoer", desc))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, id, proto, wantScheme, wantName, wantDesc string
	}{
		{"system assistant over http", "echo", "", "http", "echo", ""},
		{"an assistant behind a TLS proxy", a.AssistantID, "https", "https", "Echoer", desc},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", s.URL+"/a2a/"+tc.id+"/.well-known/agent-card.json", nil)
			if tc.proto != "" {
				req.Header.Set("X-Forwarded-Proto", tc.proto)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var card a2a.AgentCard
			if err := json.NewDecoder(res.Body).Decode(&card); err != nil || res.StatusCode != 200 {
				t.Fatalf("status %d, %v", res.StatusCode, err)
			}
			host := strings.TrimPrefix(s.URL, "http://")
			if want := tc.wantScheme + "://" + host + "/a2a/" + tc.id; card.URL != want {
				t.Errorf("url %q, want %q", card.URL, want)
			}
			if card.Name != tc.wantName || !card.Capabilities.Streaming || len(card.Skills) != 1 || card.Skills[0].ID != "echo" {
				t.Errorf("card %+v", card)
			}
			if tc.wantDesc != "" && (card.Description != tc.wantDesc || card.Skills[0].Description != tc.wantDesc) {
				t.Errorf("description %q, want %q", card.Description, tc.wantDesc)
			}
		})
	}
	res, err := http.Get(s.URL + "/a2a/nope/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if code, _ := s.post(t, "nope", `{"jsonrpc":"2.0","id":1,"method":"tasks/list"}`); res.StatusCode != 404 || code != 404 {
		t.Errorf("unknown assistant: card %d, rpc %d, want 404", res.StatusCode, code)
	}
}

func TestSendGetAndListOnAContext(t *testing.T) {
	s := start(t, nil)
	first := s.task(t, "echo", "message/send", msg("hello-1", nil, text("hi")))
	if first.Status.State != a2a.StateCompleted || len(first.Artifacts) != 1 || partsText(first.Artifacts[0].Parts) != "echo: hi" {
		t.Fatalf("first task %+v", first)
	}
	if first.Status.Message == nil || partsText(first.Status.Message.Parts) != "echo: hi" || first.Status.Message.Role != a2a.RoleAgent {
		t.Errorf("status message %+v", first.Status.Message)
	}
	if len(first.History) != 2 || first.History[0].MessageID != "hello-1" || first.History[0].Role != a2a.RoleUser || first.History[1].Role != a2a.RoleAgent {
		t.Errorf("history %+v", first.History)
	}
	// The context is the thread: the message id is the thread's message id.
	snap, err := s.P.Runner.State(context.Background(), graph.Ref{ThreadID: first.ContextID}, false)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(snap.Values); !strings.Contains(string(b), `"id":"hello-1"`) {
		t.Errorf("thread values %s lack the message id", b)
	}
	second := s.task(t, "echo", "message/send", msg("hello-2", map[string]any{"contextId": first.ContextID}, text("again")))
	if second.ContextID != first.ContextID || second.ID == first.ID || partsText(second.Artifacts[0].Parts) != "echo: again" {
		t.Fatalf("second task %+v", second)
	}
	got := s.task(t, "echo", "tasks/get", map[string]any{"id": first.ID, "historyLength": 1})
	if got.ID != first.ID || got.Status.State != a2a.StateCompleted || partsText(got.Artifacts[0].Parts) != "echo: hi" ||
		len(got.History) != 1 || got.History[0].Role != a2a.RoleAgent {
		t.Errorf("tasks/get %+v", got)
	}
	other := s.task(t, "echo", "message/send", msg("elsewhere", nil, text("x")))

	var page struct {
		Tasks         []a2a.Task `json:"tasks"`
		NextPageToken string     `json:"nextPageToken"`
		PageSize      int        `json:"pageSize"`
		TotalSize     int        `json:"totalSize"`
	}
	list := func(params map[string]any) {
		t.Helper()
		a := s.call(t, "echo", "tasks/list", params)
		if a.Error != nil {
			t.Fatalf("tasks/list: %+v", a.Error)
		}
		page.Tasks, page.NextPageToken = nil, ""
		if err := json.Unmarshal(a.Result, &page); err != nil {
			t.Fatal(err)
		}
	}
	list(map[string]any{"contextId": first.ContextID, "pageSize": 1})
	if page.TotalSize != 2 || len(page.Tasks) != 1 || page.Tasks[0].ID != second.ID || page.NextPageToken == "" {
		t.Fatalf("first page %+v", page)
	}
	list(map[string]any{"contextId": first.ContextID, "pageSize": 1, "pageToken": page.NextPageToken})
	if len(page.Tasks) != 1 || page.Tasks[0].ID != first.ID || page.NextPageToken != "" || page.Tasks[0].Artifacts != nil {
		t.Fatalf("second page %+v", page)
	}
	list(map[string]any{"includeArtifacts": true, "status": "completed"})
	if page.TotalSize != 3 || page.Tasks[0].ID != other.ID || len(page.Tasks[0].Artifacts) != 1 {
		t.Fatalf("every context: %+v", page)
	}
	list(map[string]any{"status": "failed"})
	if page.TotalSize != 0 {
		t.Errorf("failed tasks: %+v", page)
	}
}

// event is one event of a message/stream answer.
type event struct {
	Kind      string          `json:"kind"`
	Status    a2a.TaskStatus  `json:"status"`
	Final     bool            `json:"final"`
	Artifact  a2a.Artifact    `json:"artifact"`
	ID        string          `json:"id"`
	TaskID    string          `json:"taskId"`
	ContextID string          `json:"contextId"`
	Raw       json.RawMessage `json:"-"`
}

// stream sends message/stream and reads every event of its answer.
func (s *server) stream(t *testing.T, assistant string, params any) ([]event, *a2a.RPCError) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "s1", "method": "message/stream", "params": params})
	req, _ := http.NewRequest("POST", s.URL+"/a2a/"+assistant, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("status %d, content type %q", res.StatusCode, ct)
	}
	var events []event
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var a rpcAnswer
		if err := json.Unmarshal([]byte(line), &a); err != nil || string(a.ID) != `"s1"` {
			t.Fatalf("event %s: %v", line, err)
		}
		if a.Error != nil {
			return events, a.Error
		}
		var e event
		if err := json.Unmarshal(a.Result, &e); err != nil {
			t.Fatal(err)
		}
		e.Raw = a.Result
		events = append(events, e)
	}
	return events, nil
}

// kinds lists the kinds of events, with the states of status updates.
func kinds(events []event) string {
	var out []string
	for _, e := range events {
		k := e.Kind
		if e.Kind != a2a.KindArtifactUpdate {
			k += ":" + string(e.Status.State)
		} else {
			k += ":" + e.Artifact.Name
		}
		out = append(out, k)
	}
	return strings.Join(out, " ")
}

func TestStreamAnInterruptThenResume(t *testing.T) {
	s := start(t, nil)
	events, rerr := s.stream(t, "agent", msg("ask", nil, text("hi"), data(map[string]any{"interrupt": true})))
	if rerr != nil {
		t.Fatal(rerr)
	}
	want := "task:submitted status-update:working artifact-update:Interrupt status-update:input-required"
	if got := kinds(events); got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	last := events[len(events)-1]
	if !last.Final || partsText(last.Status.Message.Parts) != "i want to interrupt" || partsText(events[2].Artifact.Parts) != "i want to interrupt" {
		t.Errorf("interrupt events %s / %s", events[2].Raw, last.Raw)
	}
	taskID, contextID := events[0].ID, events[0].ContextID
	got := s.task(t, "agent", "tasks/get", map[string]any{"id": taskID})
	if got.Status.State != a2a.StateInputRequired {
		t.Fatalf("tasks/get of the interrupted task: %+v", got.Status)
	}
	// The next message on the task answers the interrupt: a resume, not a new input, and the
	// same task goes on.
	resumed := s.task(t, "agent", "message/send", msg("answer", map[string]any{"taskId": taskID, "contextId": contextID}, text("go on")))
	if resumed.Status.State != a2a.StateCompleted || resumed.ID != taskID || resumed.ContextID != contextID || len(resumed.Artifacts) != 1 {
		t.Fatalf("resumed task %+v", resumed)
	}
	rec := s.latestRun(t, contextID)
	if resume, ok := rec.Kwargs.Command["resume"]; !ok || resume != "go on" || rec.Kwargs.Input != nil || rec.RunID == taskID {
		t.Errorf("resume run %s kwargs: command %v, input %v", rec.RunID, rec.Kwargs.Command, rec.Kwargs.Input)
	}
	if got := s.task(t, "agent", "tasks/get", map[string]any{"id": taskID}); got.Status.State != a2a.StateCompleted {
		t.Errorf("tasks/get after the resume: %+v", got.Status)
	}
	if a := s.call(t, "agent", "tasks/get", map[string]any{"id": rec.RunID}); a.Error == nil || a.Error.Code != a2a.CodeTaskNotFound {
		t.Errorf("the resume run's id is a task: %+v", a)
	}

	// A command in the metadata is sent as it is.
	events, rerr = s.stream(t, "agent", msg("ask-2", nil, text("hi"), data(map[string]any{"interrupt": true})))
	if rerr != nil || len(events) != 4 {
		t.Fatalf("second interrupt: %v %s", rerr, kinds(events))
	}
	p := msg("cmd", map[string]any{"contextId": events[0].ContextID}, text("ignored"))
	p["metadata"] = map[string]any{"command": map[string]any{"resume": map[string]any{"ok": true}}}
	events, rerr = s.stream(t, "agent", p)
	if rerr != nil || kinds(events) != "task:submitted status-update:working artifact-update:Assistant Response status-update:completed" {
		t.Fatalf("command stream: %v %s", rerr, kinds(events))
	}

	// An invalid stream request is the stream's one event.
	if _, rerr := s.stream(t, "agent", msg("", nil, text("x"))); rerr == nil || rerr.Code != a2a.CodeInvalidParams {
		t.Errorf("invalid stream request: %+v", rerr)
	}
}

// latestRun is the newest run on thread.
func (s *server) latestRun(t *testing.T, thread string) engine.RunRecord {
	t.Helper()
	rs, err := s.P.Runs.List(context.Background(), thread, "", 100, 0)
	if err != nil || len(rs) == 0 {
		t.Fatalf("runs of %s: %v", thread, err)
	}
	last := rs[0]
	for _, r := range rs {
		if r.CreatedAt.After(last.CreatedAt.Time) {
			last = r
		}
	}
	return last
}

func TestCancelARunningTask(t *testing.T) {
	s := start(t, nil)
	p := msg("slow", nil, text("hi"), data(map[string]any{"sleep": 60}))
	p["configuration"] = map[string]any{"blocking": false}
	task := s.task(t, "agent", "message/send", p)
	if task.Status.State != a2a.StateSubmitted && task.Status.State != a2a.StateWorking {
		t.Fatalf("non-blocking send: %+v", task.Status)
	}
	cancelled := s.task(t, "agent", "tasks/cancel", map[string]any{"id": task.ID})
	if cancelled.Status.State != a2a.StateCanceled {
		t.Fatalf("cancelled task %+v", cancelled.Status)
	}
	a := s.call(t, "agent", "tasks/cancel", map[string]any{"id": task.ID})
	if a.Error == nil || a.Error.Code != a2a.CodeTaskNotCancelable {
		t.Errorf("second cancel: %+v", a)
	}
}

func TestFailuresAreSanitised(t *testing.T) {
	s := start(t, nil)
	leaks := []string{"postgres", "hunter2", "db.prod.internal", "5432", "10.1.2.3", "/etc/jetgraph"}
	check := func(what string, v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		for _, l := range leaks {
			if strings.Contains(string(b), l) {
				t.Errorf("%s shows %q: %s", what, l, b)
			}
		}
		if !strings.Contains(string(b), "connection refused") {
			t.Errorf("%s lost what failed: %s", what, b)
		}
	}
	failed := s.task(t, "leaky", "message/send", msg("m", nil, text("hi")))
	if failed.Status.State != a2a.StateFailed {
		t.Fatalf("leaky task %+v", failed.Status)
	}
	check("message/send", failed.Status)
	check("tasks/get", s.task(t, "leaky", "tasks/get", map[string]any{"id": failed.ID}).Status)
	events, rerr := s.stream(t, "leaky", msg("m2", nil, text("hi")))
	if rerr != nil || len(events) == 0 || events[len(events)-1].Status.State != a2a.StateFailed {
		t.Fatalf("stream: %v %s", rerr, kinds(events))
	}
	check("message/stream", events[len(events)-1].Status)
}

func TestDisabled(t *testing.T) {
	p := platformtest.Start(t, platform.Config{Graphs: registry(t)}, nil)
	srv := httpapi.New(httpapi.Deps{Threads: p.Threads, Assistants: p.Assistants, Store: p.Store, Runner: p.Runner,
		Graphs: p.Graphs, Runs: p.Runs, Logger: slog.New(slog.DiscardHandler)})
	ts := httpapitest.NewServer(t, httpapi.OpenAPI(), srv.Handler())
	for _, path := range []string{"/a2a/echo", "/a2a/echo/.well-known/agent-card.json"} {
		res, err := http.Post(ts.URL+path, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tasks/list"}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 404 && res.StatusCode != 405 {
			t.Errorf("%s: status %d, want 404", path, res.StatusCode)
		}
		res, err = http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 404 && res.StatusCode != 405 {
			t.Errorf("GET %s: status %d, want 404", path, res.StatusCode)
		}
	}
}

// assistantCreate is the creation of an assistant of graph with a name and description.
func assistantCreate(graphID, name, desc string) assistants.Create {
	return assistants.Create{GraphID: graphID, Name: name, Description: &desc}
}
