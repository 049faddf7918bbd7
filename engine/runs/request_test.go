package runs

import (
	"reflect"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
)

// TestCommandOf: a recorded command becomes the graph command its JSON would decode to.
func TestCommandOf(t *testing.T) {
	update := map[string]any{"messages": []any{"x"}}
	for _, tt := range []struct {
		name string
		in   map[string]any
		want *graph.Command
	}{
		{"none", nil, nil},
		{"resume", map[string]any{"resume": "go", "goto": nil}, &graph.Command{Resume: "go"}},
		{"update and goto", map[string]any{"update": update, "goto": []any{"a", "b"}}, &graph.Command{Update: update, Goto: []any{"a", "b"}}},
		{"an update that is no object", map[string]any{"update": "x", "resume": 1.0}, nil},
		{"empty", map[string]any{}, &graph.Command{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := commandOf(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("commandOf(%v) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// TestRequestOfKwargs: the runner request of a run is what its typed kwargs say.
func TestRequestOfKwargs(t *testing.T) {
	rec := engine.RunRecord{Run: engine.Run{RunID: "r", ThreadID: "t", AssistantID: "a", Metadata: map[string]any{"m": 1.0},
		Kwargs: engine.RunKwargs{Input: map[string]any{"q": "hi"}, Command: map[string]any{"resume": "yes"},
			Config: map[string]any{"tags": []any{"x"}}, Context: map[string]any{"user": "u"}, CheckpointID: "c1",
			InterruptBefore: []string{"*"}, InterruptAfter: []string{"n"}}}}
	got := (&Service{}).request(rec)
	want := struct {
		input, config, context, metadata any
		cmd                              *graph.Command
		checkpoint                       string
		before, after                    []string
	}{rec.Kwargs.Input, rec.Kwargs.Config, rec.Kwargs.Context, rec.Metadata, &graph.Command{Resume: "yes"}, "c1", []string{"*"}, []string{"n"}}
	if got.RunID != "r" || got.ThreadID != "t" || got.AssistantID != "a" ||
		!reflect.DeepEqual(got.Input, want.input) || !reflect.DeepEqual(got.Config, want.config) ||
		!reflect.DeepEqual(got.Context, want.context) || !reflect.DeepEqual(got.Metadata, want.metadata) ||
		!reflect.DeepEqual(got.Command, want.cmd) || got.CheckpointID != want.checkpoint ||
		!reflect.DeepEqual(got.InterruptBefore, want.before) || !reflect.DeepEqual(got.InterruptAfter, want.after) {
		t.Errorf("request = %+v", got)
	}
}
