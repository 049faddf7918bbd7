package httpapi_test

import (
	"fmt"
	"testing"

	"github.com/jetgraph/jetgraph/engine/graphs"
)

// TestThreadConfigFollowsTheRuns: a run's config (the assistant's, then the request's) is kept on
// its thread, shown as the thread's config, and a state update with as_node builds the graph from
// it, so the nodes of a graph a factory builds from config can be named (LangGraph's "dynamic
// graph" test).
func TestThreadConfigFollowsTheRuns(t *testing.T) {
	s := startStackWith(t, graphs.Examples())
	_, _, a := s.call(t, "POST", "/assistants", `{"graph_id":"dynamic","config":{"configurable":{"nodeName":"assistant"}}}`)
	aid := field(a, "assistant_id").(string)
	_, _, th := s.call(t, "POST", "/threads", `{}`)
	id := field(th, "thread_id").(string)

	code, _, out := s.call(t, "POST", "/threads/"+id+"/runs/wait",
		`{"assistant_id":"`+aid+`","input":{"messages":["input"]},"config":{"configurable":{"user_setting":"u","authorization":"secret"},"tags":["t"]}}`)
	if code != 200 || fmt.Sprint(field(out, "messages")) != "[input assistant]" {
		t.Fatalf("run: %d %v", code, out)
	}
	_, _, th = s.call(t, "GET", "/threads/"+id, "")
	want := `map[configurable:map[nodeName:assistant user_setting:u] tags:[t]]`
	if got := fmt.Sprint(field(th, "config")); got != want {
		t.Fatalf("thread config %s, want %s (no run ids, no secrets)", got, want)
	}

	code, _, up := s.call(t, "POST", "/threads/"+id+"/state", `{"values":{"messages":["update"]},"as_node":"assistant"}`)
	if code != 200 {
		t.Fatalf("update as the config-built node: %d %v", code, up)
	}
	_, _, st := s.call(t, "GET", "/threads/"+id+"/state", "")
	if got := fmt.Sprint(field(st, "values", "messages")); got != "[input assistant update]" {
		t.Fatalf("state after the update: %s", got)
	}

	// A later run's request config is merged over what the thread keeps.
	code, _, out = s.call(t, "POST", "/threads/"+id+"/runs/wait",
		`{"assistant_id":"dynamic","input":{"messages":["again"]},"config":{"configurable":{"nodeName":"runtime"}}}`)
	if code != 200 || fmt.Sprint(field(out, "messages")) != "[input assistant update again runtime]" {
		t.Fatalf("second run: %d %v", code, out)
	}
	_, _, th = s.call(t, "GET", "/threads/"+id, "")
	if got := fmt.Sprint(field(th, "config", "configurable")); got != "map[nodeName:runtime user_setting:u]" {
		t.Fatalf("thread config after the second run: %s", got)
	}
}
