package httpapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine/graphs"
)

func TestPruneThreads(t *testing.T) {
	s := startStackWith(t, graphs.Examples())
	newThread := func() string {
		_, _, th := s.call(t, "POST", "/threads", `{}`)
		return field(th, "thread_id").(string)
	}
	const absent = "0190b6a5-6b6a-7b6a-9b6a-6b6a6b6a6b6a"

	t.Run("bad input lists every problem", func(t *testing.T) {
		many, _ := json.Marshal(make([]string, 1001))
		for _, c := range []struct{ body, want string }{
			{`{}`, `missing`},
			{`{"thread_ids":["nope","` + absent + `"],"strategy":"all"}`, `uuid_parsing`},
			{`{"thread_ids":["nope"],"strategy":"all"}`, `literal_error`},
			{`{"thread_ids":` + string(many) + `}`, `at most 1000`},
		} {
			code, _, out := s.call(t, "POST", "/threads/prune", c.body)
			if code != 422 || !strings.Contains(fmt.Sprint(out), c.want) {
				t.Errorf("%s: %d %v, want 422 naming %s", c.body, code, out, c.want)
			}
		}
	})

	t.Run("delete", func(t *testing.T) {
		a, b, kept := newThread(), newThread(), newThread()
		code, _, out := s.call(t, "POST", "/threads/prune", `{"thread_ids":["`+a+`","`+b+`","`+absent+`"]}`)
		if code != 200 || fmt.Sprint(out) != "map[pruned_count:2]" {
			t.Fatalf("prune: %d %v", code, out)
		}
		for _, id := range []string{a, b} {
			if code, _, _ := s.call(t, "GET", "/threads/"+id, ""); code != 404 {
				t.Errorf("pruned thread %s: %d", id, code)
			}
		}
		if code, _, _ := s.call(t, "GET", "/threads/"+kept, ""); code != 200 {
			t.Errorf("thread not named: %d", code)
		}
	})

	t.Run("keep_latest", func(t *testing.T) {
		id := newThread()
		for _, m := range []string{"one", "two"} {
			if code, _, out := s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"`+m+`"}]}}`); code != 200 {
				t.Fatalf("run: %d %v", code, out)
			}
		}
		_, _, before := s.call(t, "GET", "/threads/"+id+"/state", "")
		_, _, hist := s.call(t, "POST", "/threads/"+id+"/history", `{"limit":100}`)
		if len(hist.([]any)) < 5 {
			t.Fatalf("history before: %d checkpoints", len(hist.([]any)))
		}
		code, _, out := s.call(t, "POST", "/threads/prune", `{"thread_ids":["`+id+`"],"strategy":"keep_latest"}`)
		if code != 200 || fmt.Sprint(out) != "map[pruned_count:1]" {
			t.Fatalf("prune: %d %v", code, out)
		}
		_, _, hist = s.call(t, "POST", "/threads/"+id+"/history", `{"limit":100}`)
		_, _, after := s.call(t, "GET", "/threads/"+id+"/state", "")
		if len(hist.([]any)) != 1 || fmt.Sprint(field(after, "values")) != fmt.Sprint(field(before, "values")) ||
			field(after, "checkpoint_id") != field(before, "checkpoint_id") {
			t.Fatalf("after keep_latest: %d checkpoints, state %v, want %v", len(hist.([]any)), after, before)
		}
		// The thread goes on from its latest state.
		code, _, out = s.call(t, "POST", "/threads/"+id+"/runs/wait", `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"three"}]}}`)
		if code != 200 || !strings.HasPrefix(texts(out), "one,") || !strings.Contains(texts(out), "three") {
			t.Fatalf("run after the prune: %d %v", code, out)
		}
	})
}
