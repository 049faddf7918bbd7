package httpapi_test

import (
	"fmt"
	"strings"
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

// TestLongNodeNameFailsTheRun: a graph factory naming a node after a client's 40 KB string
// (over MaxNameBytes; bbolt keys stop at 32 KiB) fails that run, before any checkpoint is
// appended, and the server goes on (no projection halted on a key it could not store).
func TestLongNodeNameFailsTheRun(t *testing.T) {
	s := startStackWith(t, graphs.Examples())
	_, _, a := s.call(t, "POST", "/assistants", `{"graph_id":"dynamic","config":{"configurable":{"nodeName":"`+strings.Repeat("x", 40000)+`"}}}`)
	aid := field(a, "assistant_id").(string)
	_, _, th := s.call(t, "POST", "/threads", `{}`)
	id := field(th, "thread_id").(string)
	code, _, out := s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"`+aid+`","input":{"messages":["input"]}}`)
	if !strings.Contains(fmt.Sprint(out), "MaxNameBytes") {
		t.Fatalf("run: %d %.300v, want the run failed naming MaxNameBytes", code, out)
	}
	_, _, th = s.call(t, "POST", "/threads", `{}`)
	code, _, out = s.call(t, "POST", "/threads/"+field(th, "thread_id").(string)+"/runs/wait", `{"assistant_id":"dynamic","input":{"messages":["input"]}}`)
	if code != 200 || fmt.Sprint(field(out, "messages")) != "[input default]" {
		t.Fatalf("next run: %d %v", code, out)
	}
	if code, _, out := s.call(t, "GET", "/ok", ""); code != 200 {
		t.Fatalf("/ok: %d %v", code, out)
	}
}
