package httpapi_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine/graphs"
)

// texts lists the text of each message in a values object.
func texts(values any) string {
	var out []string
	ms, _ := field(values, "messages").([]any)
	for _, m := range ms {
		out = append(out, fmt.Sprint(field(m, "content")))
	}
	return strings.Join(out, ",")
}

func TestRunWaitStateAndHistory(t *testing.T) {
	s := startStackWith(t, graphs.Examples())
	_, _, th := s.call(t, "POST", "/threads", `{}`)
	id := field(th, "thread_id").(string)

	code, _, out := s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"foo"}]}}`)
	if code != 200 || texts(out) != "foo,begin,tool_call__begin,end" {
		t.Fatalf("wait: %d %v", code, out)
	}
	_, _, st := s.call(t, "GET", "/threads/"+id+"/state", "")
	if texts(field(st, "values")) != "foo,begin,tool_call__begin,end" || len(field(st, "next").([]any)) != 0 ||
		field(st, "metadata", "step") != 3.0 || field(st, "metadata", "graph_id") != "agent" || field(st, "checkpoint", "thread_id") != id {
		t.Fatalf("state: %v", st)
	}
	_, _, th = s.call(t, "GET", "/threads/"+id, "")
	if texts(field(th, "values")) != "foo,begin,tool_call__begin,end" || field(th, "metadata", "graph_id") != "agent" {
		t.Fatalf("thread values not kept current: %v", th)
	}
	_, _, hist := s.call(t, "POST", "/threads/"+id+"/history", `{"limit":10}`)
	var steps []string
	for _, h := range hist.([]any) {
		steps = append(steps, fmt.Sprintf("%v:%v", field(h, "metadata", "step"), field(h, "metadata", "source")))
	}
	if strings.Join(steps, " ") != "3:loop 2:loop 1:loop 0:loop -1:input" {
		t.Fatalf("history: %v", steps)
	}
	// An older checkpoint by id, by object, and the history before it.
	older := field(hist.([]any)[2], "checkpoint_id").(string)
	_, _, at := s.call(t, "GET", "/threads/"+id+"/state/"+older, "")
	if field(at, "metadata", "step") != 1.0 || field(at, "next").([]any)[0] != "tool" {
		t.Fatalf("state at %s: %v", older, at)
	}
	_, _, at2 := s.call(t, "POST", "/threads/"+id+"/state/checkpoint", `{"checkpoint":{"checkpoint_id":"`+older+`"}}`)
	if field(at2, "checkpoint_id") != older {
		t.Fatalf("state/checkpoint: %v", at2)
	}
	_, _, before := s.call(t, "GET", "/threads/"+id+"/history?limit=5&before="+older, "")
	if len(before.([]any)) != 2 {
		t.Fatalf("history before: %v", before)
	}

	// A second run continues the thread: the fake model's turn comes from the state.
	_, _, out = s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"agent","input":{"messages":"bar"}}`)
	if texts(out) != "foo,begin,tool_call__begin,end,bar,begin,tool_call__begin,end" {
		t.Fatalf("second run: %v", out)
	}
}

func TestInterruptUpdateResumeAndFork(t *testing.T) {
	s := startStackWith(t, graphs.Examples())
	_, _, th := s.call(t, "POST", "/threads", `{}`)
	id := field(th, "thread_id").(string)

	// A dynamic interrupt: the run stops, the thread shows it.
	_, _, out := s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"agent","input":{"messages":"foo","interrupt":true}}`)
	ints, _ := field(out, "__interrupt__").([]any)
	if len(ints) != 1 || field(ints[0], "value") != "i want to interrupt" {
		t.Fatalf("interrupt: %v", out)
	}
	_, _, th = s.call(t, "GET", "/threads/"+id, "")
	if field(th, "status") != "interrupted" || len(field(th, "interrupts").(map[string]any)) != 1 {
		t.Fatalf("thread after interrupt: %v", th)
	}
	// Resume with a command.
	_, _, out = s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"agent","command":{"resume":"ok"}}`)
	if texts(out) != "foo,begin,tool_call__begin,end" {
		t.Fatalf("resume: %v", out)
	}
	// Nothing to resume: refused before anything is appended.
	code, _, bad := s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"agent","command":{"resume":"again"}}`)
	if code != 422 || !strings.Contains(fmt.Sprint(bad), "no pending interrupt") {
		t.Fatalf("resume without interrupt: %d %v", code, bad)
	}

	// Update the state as a node, then fork from an older checkpoint.
	code, _, upd := s.call(t, "POST", "/threads/"+id+"/state", `{"values":{"messages":[{"role":"user","content":"edited"}]},"as_node":"tool"}`)
	if code != 200 || field(upd, "checkpoint", "checkpoint_id") == nil {
		t.Fatalf("update: %d %v", code, upd)
	}
	_, _, st := s.call(t, "GET", "/threads/"+id+"/state", "")
	if field(st, "metadata", "source") != "update" || field(st, "next").([]any)[0] != "agent" {
		t.Fatalf("after update: %v", st)
	}
	_, _, hist := s.call(t, "POST", "/threads/"+id+"/history", `{"limit":20}`)
	first := hist.([]any)[len(hist.([]any))-1]
	code, _, fork := s.call(t, "POST", "/threads/"+id+"/state", `{"checkpoint_id":"`+field(first, "checkpoint_id").(string)+`","values":{"messages":"forked"},"as_node":"__input__"}`)
	if code != 200 {
		t.Fatalf("fork: %d %v", code, fork)
	}
	_, _, st = s.call(t, "GET", "/threads/"+id+"/state", "")
	if field(st, "parent_checkpoint_id") != field(first, "checkpoint_id") {
		t.Fatalf("fork parent: %v", st)
	}

	for _, tc := range []struct{ body, want string }{
		{`{"values":{},"as_node":"nope"}`, "Node nope does not exist"},
		{`{"values":{},"checkpoint_id":"00000000-0000-7000-8000-000000000000"}`, "Checkpoint 00000000-0000-7000-8000-000000000000 not found"},
	} {
		code, _, e := s.call(t, "POST", "/threads/"+id+"/state", tc.body)
		if code < 400 || code >= 500 || field(e, "detail") != tc.want {
			t.Errorf("%s: %d %v", tc.body, code, e)
		}
	}
}

func TestSubgraphStateThroughTaskCheckpoint(t *testing.T) {
	s := startStackWith(t, graphs.Examples())
	_, _, th := s.call(t, "POST", "/threads", `{}`)
	id := field(th, "thread_id").(string)
	s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"weather","input":{"messages":"what's the weather in sf"}}`)
	// The waiting subgraph task names its checkpoint ({checkpoint_ns, thread_id}, exactly) and
	// has no state; asked for subgraphs, it carries the subgraph's state instead, as on the
	// reference servers.
	_, _, st := s.call(t, "GET", "/threads/"+id+"/state", "")
	tasks := field(st, "tasks").([]any)
	if field(st, "next").([]any)[0] != "weather_graph" || len(tasks) != 1 {
		t.Fatalf("state: %v", st)
	}
	subNS, _ := field(tasks[0], "checkpoint", "checkpoint_ns").(string)
	want := `{"checkpoint":{"checkpoint_ns":"` + subNS + `","thread_id":"` + id + `"},"error":null,"id":"` + field(tasks[0], "id").(string) +
		`","interrupts":[],"name":"weather_graph","path":["__pregel_pull","weather_graph"],"result":null,"state":null}`
	if got, _ := json.Marshal(tasks[0]); !strings.HasPrefix(subNS, "weather_graph:") || string(got) != want {
		t.Fatalf("task:\n%s\nwant\n%s", got, want)
	}
	_, _, st = s.call(t, "GET", "/threads/"+id+"/state?subgraphs=true", "")
	tasks = field(st, "tasks").([]any)
	if field(tasks[0], "checkpoint") != nil || field(tasks[0], "state", "next").([]any)[0] != "weather_node" {
		t.Fatalf("subgraph state: %v", tasks[0])
	}
	_, _, th = s.call(t, "GET", "/threads/"+id, "")
	if field(th, "status") != "interrupted" {
		t.Fatalf("thread status after a static interrupt inside a subgraph: %v", field(th, "status"))
	}
	code, _, upd := s.call(t, "POST", "/threads/"+id+"/state", `{"checkpoint":{"checkpoint_ns":"`+subNS+`"},"values":{"city":"LA"},"as_node":"model_node"}`)
	if code != 200 {
		t.Fatalf("subgraph update: %d %v", code, upd)
	}
	_, _, out := s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"weather","input":null}`)
	ms := field(out, "messages").([]any)
	if field(ms[len(ms)-1], "content") != "It's sunny in LA!" {
		t.Fatalf("resume: %v", out)
	}
	// An AI message always carries its tool call lists, empty when it calls nothing.
	if calls, ok := field(ms[len(ms)-1], "tool_calls").([]any); !ok || len(calls) != 0 {
		t.Fatalf("tool_calls of the AI message: %v", ms[len(ms)-1])
	}
	if invalid, ok := field(ms[len(ms)-1], "invalid_tool_calls").([]any); !ok || len(invalid) != 0 {
		t.Fatalf("invalid_tool_calls of the AI message: %v", ms[len(ms)-1])
	}
}

func TestRunErrorsAndStatelessRuns(t *testing.T) {
	s := startStackWith(t, graphs.Examples())
	_, _, out := s.call(t, "POST", "/runs/wait", `{"assistant_id":"echo","input":{"messages":"hi"}}`)
	if texts(out) != "hi,echo: hi" {
		t.Fatalf("stateless: %v", out)
	}
	_, _, th := s.call(t, "POST", "/threads", `{}`)
	id := field(th, "thread_id").(string)
	_, _, out = s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"error","input":{}}`)
	if field(out, "__error__", "error") != "CustomError" || field(out, "__error__", "message") != "Boo!" {
		t.Fatalf("error run: %v", out)
	}
	code, _, e := s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"nope","input":{}}`)
	if code != 404 || field(e, "detail") != `No assistant found for "nope". Make sure the assistant ID is for a valid assistant or a valid graph ID.` {
		t.Fatalf("unknown assistant: %d %v", code, e)
	}
	code, _, e = s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"input":{},"interrupt_before":"some"}`)
	if code != 422 || len(field(e, "detail").([]any)) != 2 {
		t.Fatalf("validation: %d %v", code, e)
	}
}

func TestCopyPatchStateAndSupersteps(t *testing.T) {
	s := startStackWith(t, graphs.Examples())
	_, _, th := s.call(t, "POST", "/threads", `{"metadata":{"owner":"a"}}`)
	id := field(th, "thread_id").(string)
	s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"agent","input":{"messages":"foo"}}`)

	code, _, cp := s.call(t, "POST", "/threads/"+id+"/copy", "")
	cid, _ := field(cp, "thread_id").(string)
	if code != 200 || cid == "" || cid == id || field(cp, "metadata", "owner") != "a" || texts(field(cp, "values")) != "foo,begin,tool_call__begin,end" {
		t.Fatalf("copy: %d %v", code, cp)
	}
	_, _, h1 := s.call(t, "POST", "/threads/"+id+"/history", `{"limit":50}`)
	_, _, h2 := s.call(t, "POST", "/threads/"+cid+"/history", `{"limit":50}`)
	if len(h1.([]any)) != len(h2.([]any)) || field(h2.([]any)[0], "checkpoint", "thread_id") != cid {
		t.Fatalf("copied history: %d vs %d checkpoints", len(h1.([]any)), len(h2.([]any)))
	}

	if code, _, e := s.call(t, "PATCH", "/threads/"+id+"/state", `{"metadata":{"reviewed":true}}`); code != 204 {
		t.Fatalf("patch state: %d %v", code, e)
	}
	_, _, st := s.call(t, "GET", "/threads/"+id+"/state", "")
	if field(st, "metadata", "reviewed") != true || field(st, "metadata", "step") != 3.0 {
		t.Fatalf("patched metadata: %v", field(st, "metadata"))
	}

	code, _, nt := s.call(t, "POST", "/threads", `{"metadata":{"graph_id":"agent"},"supersteps":[
		{"updates":[{"values":{"messages":[{"role":"user","content":"hi"}]},"as_node":"__input__"}]},
		{"updates":[{"values":{"messages":[{"role":"user","content":"hi"}]},"as_node":"__start__"}]},
		{"updates":[{"values":{"messages":[{"role":"ai","content":"end"}]},"as_node":"agent"}]}]}`)
	if code != 200 || texts(field(nt, "values")) != "hi,end" {
		t.Fatalf("supersteps: %d %v", code, nt)
	}
	_, _, hist := s.call(t, "POST", "/threads/"+field(nt, "thread_id").(string)+"/history", `{}`)
	if len(hist.([]any)) != 3 {
		t.Fatalf("supersteps made %d checkpoints, want 3", len(hist.([]any)))
	}
	code, _, e := s.call(t, "POST", "/threads", `{"metadata":{"graph_id":"agent"},"supersteps":[{"updates":[{"values":{},"as_node":"nope"}]}]}`)
	if code != 422 || field(e, "detail") != "Node nope does not exist" {
		t.Fatalf("bad superstep: %d %v", code, e)
	}
}

func TestStateUpdateRefusedWhileARunIsActive(t *testing.T) {
	s := startStackWith(t, graphs.Examples())
	_, _, th := s.call(t, "POST", "/threads", `{}`)
	id := field(th, "thread_id").(string)
	s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"agent","input":{"messages":"foo"}}`)
	// A long run, then one queued behind it: the thread is busy while either is active.
	s.call(t, "POST", "/threads/"+id+"/runs", `{"assistant_id":"agent","input":{"messages":"a","sleep":{"steps":40,"ms":50}}}`)
	code, _, queued := s.call(t, "POST", "/threads/"+id+"/runs", `{"assistant_id":"agent","input":{"messages":"b"}}`)
	if code != 200 {
		t.Fatalf("queue a run: %d %v", code, queued)
	}
	code, _, e := s.call(t, "POST", "/threads/"+id+"/state", `{"values":{"messages":"x"},"as_node":"tool"}`)
	if code != 409 || field(e, "detail") != "Thread is busy" {
		t.Fatalf("update while busy: %d %v", code, e)
	}
	// Once the queue has run, updates go through again.
	s.call(t, "GET", "/threads/"+id+"/runs/"+field(queued, "run_id").(string)+"/join", "")
	if code, _, e := s.call(t, "POST", "/threads/"+id+"/state", `{"values":{"messages":"x"},"as_node":"tool"}`); code != 200 {
		t.Fatalf("update after the runs: %d %v", code, e)
	}
}

// TestForkThread: POST /threads/{id}/fork makes a new thread whose history is the forked one's
// up to the step asked for (same checkpoint ids), remembers where it came from, and takes an
// optional update; the forked thread is unchanged, and bad requests are refused naming each
// problem before anything is made.
func TestForkThread(t *testing.T) {
	s := startStackWith(t, graphs.Examples())
	_, _, th := s.call(t, "POST", "/threads", `{"metadata":{"user":"a"}}`)
	id := field(th, "thread_id").(string)
	s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"foo"}]}}`)
	_, _, hist := s.call(t, "POST", "/threads/"+id+"/history", `{"limit":10}`)
	ids := func(hist any) []string {
		var out []string
		for _, h := range hist.([]any) {
			out = append(out, fmt.Sprintf("%v@%v", field(h, "checkpoint_id"), field(h, "metadata", "step")))
		}
		return out
	}
	source := ids(hist) // steps 3 2 1 0 -1
	at1 := field(hist.([]any)[2], "checkpoint_id").(string)

	tests := []struct {
		name, body string
		history    []string // "" at the front: a new checkpoint of the update
		texts      string
	}{
		{"by step", `{"step": 1}`, source[2:], "foo,begin"},
		{"by checkpoint", `{"checkpoint_id": "` + at1 + `", "metadata": {"why": "retry"}}`, source[2:], "foo,begin"},
		{"with an update", `{"step": 0, "values": {"messages": [{"role": "user", "content": "bar"}]}, "as_node": "__start__"}`, append([]string{""}, source[3:]...), "foo,bar"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, forked := s.call(t, "POST", "/threads/"+id+"/fork", tc.body)
			if code != 200 || field(forked, "metadata", "forked_from", "thread_id") != id || field(forked, "metadata", "user") != "a" {
				t.Fatalf("fork: %d %v", code, forked)
			}
			fid := field(forked, "thread_id").(string)
			_, _, fh := s.call(t, "POST", "/threads/"+fid+"/history", `{"limit":10}`)
			got := ids(fh)
			if tc.history[0] == "" {
				got[0] = ""
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.history) {
				t.Fatalf("history = %v, want %v", got, tc.history)
			}
			_, _, st := s.call(t, "GET", "/threads/"+fid+"/state", "")
			if texts(field(st, "values")) != tc.texts || field(st, "metadata", "thread_id") != fid {
				t.Fatalf("state: %v", st)
			}
		})
	}
	_, _, after := s.call(t, "POST", "/threads/"+id+"/history", `{"limit":10}`)
	if fmt.Sprint(ids(after)) != fmt.Sprint(source) {
		t.Fatalf("the forked thread changed: %v", ids(after))
	}
	for _, c := range []struct {
		body    string
		code, n int // n: problems listed
	}{
		{`{}`, 422, 1},
		{`{"step": 1, "checkpoint_id": "` + at1 + `"}`, 422, 1},
		{`{"step": "x", "checkpoint_id": "nope"}`, 422, 2},
		{`{"step": 9}`, 404, 0},
		{`{"checkpoint_id": "` + uuid.NewString() + `"}`, 404, 0},
	} {
		code, _, body := s.call(t, "POST", "/threads/"+id+"/fork", c.body)
		if detail, _ := field(body, "detail").([]any); code != c.code || len(detail) != c.n {
			t.Errorf("%s: %d %v", c.body, code, body)
		}
	}
	if code, _, _ := s.call(t, "POST", "/threads/"+uuid.NewString()+"/fork", `{"step": 1}`); code != 404 {
		t.Errorf("unknown thread: %d", code)
	}
	_, _, all := s.call(t, "POST", "/threads/count", `{}`)
	if all != 4.0 {
		t.Errorf("threads = %v, want the forked one and 3 forks", all)
	}
}

// TestImportThread: POST /threads/import makes a thread from an export of another (its state
// and history), refuses a second one under the same id, and names what is wrong in a bad file.
func TestImportThread(t *testing.T) {
	s := startStackWith(t, graphs.Examples())
	_, _, th := s.call(t, "POST", "/threads", `{}`)
	id := field(th, "thread_id").(string)
	s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"foo"}]}}`)
	resp, err := http.Get(s.URL + "/threads/" + id + "/events")
	if err != nil {
		t.Fatal(err)
	}
	var events []json.RawMessage
	for dec := json.NewDecoder(resp.Body); dec.More(); {
		var e json.RawMessage
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	resp.Body.Close()
	file, _ := json.Marshal(map[string]any{"jgx": 1, "thread_id": id, "metadata": map[string]any{"graph_id": "agent"}, "events": events})
	code, _, imported := s.call(t, "POST", "/threads/import", string(file))
	if code != 200 || field(imported, "thread_id") == id || texts(field(imported, "values")) != "foo,begin,tool_call__begin,end" {
		t.Fatalf("import: %d %v", code, imported)
	}
	if code, _, body := s.call(t, "POST", "/threads/import?keep_id=true", string(file)); code != 409 {
		t.Fatalf("import under an existing id: %d %v", code, body)
	}
	for _, c := range []struct{ body, want string }{
		{`{"jgx": 2, "thread_id": "` + id + `", "events": []}`, "version 2"},
		{`{"jgx": 1, "thread_id": "` + uuid.NewString() + `", "events": ` + string(mustJSON(events)) + `}`, "is not of thread"},
		{`{"jgx": 1, "thread_id": "` + id + `"}`, "Field required"},
	} {
		if code, _, body := s.call(t, "POST", "/threads/import", c.body); code != 422 || !strings.Contains(fmt.Sprint(body), c.want) {
			t.Errorf("%.60s: %d %v", c.body, code, body)
		}
	}
}

func mustJSON(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return raw
}

// The reference server (langgraph-api 0.16.7, langgraph 1.2.24), asked for a thread's state with
// subgraphs while a subgraph task waits, gives the task a state with exactly the keys of a
// thread state, whose checkpoint and parent checkpoint name their checkpoint_map: the root's
// checkpoint under "" and the subgraph's own under its namespace. The root's checkpoint has no
// checkpoint_map.
func TestNestedTaskStateNamesItsCheckpointMapAsTheReference(t *testing.T) {
	s := startStackWith(t, graphs.Examples())
	_, _, th := s.call(t, "POST", "/threads", `{}`)
	id := field(th, "thread_id").(string)
	s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"weather","input":{"messages":"what's the weather in sf"}}`)
	_, _, st := s.call(t, "GET", "/threads/"+id+"/state?subgraphs=true", "")
	root := field(st, "checkpoint").(map[string]any)
	if _, ok := root["checkpoint_map"]; ok {
		t.Errorf("the root checkpoint has a checkpoint_map: %v", root)
	}
	sub := field(st, "tasks").([]any)[0].(map[string]any)["state"].(map[string]any)
	keys := slices.Sorted(maps.Keys(sub))
	want := []string{"checkpoint", "checkpoint_id", "created_at", "interrupts", "metadata", "next",
		"parent_checkpoint", "parent_checkpoint_id", "tasks", "values"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys of the task's state = %v, want %v", keys, want)
	}
	for _, name := range []string{"checkpoint", "parent_checkpoint"} {
		cp := sub[name].(map[string]any)
		ns := cp["checkpoint_ns"].(string)
		wantMap := map[string]any{"": root["checkpoint_id"], ns: cp["checkpoint_id"]}
		if got := cp["checkpoint_map"]; !strings.HasPrefix(ns, "weather_graph:") || !reflect.DeepEqual(got, wantMap) {
			t.Errorf("the task state's %s: checkpoint_map %v, want %v", name, got, wantMap)
		}
	}
}
