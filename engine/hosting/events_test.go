package hosting

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/jetgraph/jetgraph/engine/graph"
)

// A host's event frames become the runtime's typed events: a task start whose input holds a
// key named "result" stays a start (a byte search for "result" once took it for a result), a
// result is a result, updates are split per node, a chunk keeps the id streams read, and a mode
// the runtime does not know is dropped.
func TestTypedEvents(t *testing.T) {
	tests := []struct {
		name, mode, raw string
		kinds           []graph.Kind
		check           func(t *testing.T, es []graph.Event)
	}{
		{"task start with a result key", "tasks", `{"id":"a","name":"n","input":{"result":1},"triggers":["branch:to:n"]}`,
			[]graph.Kind{graph.KindTaskStart}, func(t *testing.T, es []graph.Event) {
				s := es[0].Data.(graph.TaskStart)
				if s.Name != "n" || !reflect.DeepEqual(s.Triggers, []string{"branch:to:n"}) {
					t.Errorf("start = %+v", s)
				}
			}},
		{"task result", "tasks", `{"id":"a","name":"n","error":null,"result":{"x":2},"interrupts":[]}`,
			[]graph.Kind{graph.KindTaskResult}, func(t *testing.T, es []graph.Event) {
				r := es[0].Data.(graph.TaskResult)
				if got, _ := json.Marshal(r.Result); string(got) != `{"x":2}` {
					t.Errorf("result = %s", got)
				}
			}},
		{"updates of two nodes", "updates", `{"b":{"y":1},"a":{"x":1}}`,
			[]graph.Kind{graph.KindUpdates, graph.KindUpdates}, func(t *testing.T, es []graph.Event) {
				if n := es[0].Data.(graph.NodeUpdate).Node; n != "a" {
					t.Errorf("first node = %q", n)
				}
			}},
		{"message chunk", "messages", `[{"id":"m1","content":[{"type":"text","text":"hi"}]},{"langgraph_node":"n"}]`,
			[]graph.Kind{graph.KindMessages}, func(t *testing.T, es []graph.Event) {
				c := es[0].Data.(graph.EncodedMessageChunk)
				got, _ := json.Marshal(c)
				if c.ID != "m1" || string(got) != `[{"id":"m1","content":[{"type":"text","text":"hi"}]},{"langgraph_node":"n"}]` {
					t.Errorf("chunk = %q %s", c.ID, got)
				}
			}},
		{"values", "values", `{"messages":[]}`, []graph.Kind{graph.KindValues}, nil},
		{"custom", "custom", `"anything"`, []graph.Kind{graph.KindCustom}, nil},
		{"unknown mode", "future", `{}`, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es := typedEvents(tt.mode, []string{"sub:1"}, json.RawMessage(tt.raw))
			var kinds []graph.Kind
			for _, e := range es {
				kinds = append(kinds, e.Kind)
				if !reflect.DeepEqual(e.NS, []string{"sub:1"}) {
					t.Errorf("ns = %v", e.NS)
				}
			}
			if !reflect.DeepEqual(kinds, tt.kinds) {
				t.Fatalf("kinds = %v, want %v", kinds, tt.kinds)
			}
			if tt.check != nil {
				tt.check(t, es)
			}
		})
	}
}
