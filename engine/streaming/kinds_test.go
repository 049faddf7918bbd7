package streaming

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
)

// A task's start and its result are told apart by the kind the runtime gives them, never by
// their payload: a graph whose state has a key named "result" (which a task's start carries in
// its input) streams its task's start as a start in every mode that shows tasks.
func TestTasksOfAStateWithAResultKey(t *testing.T) {
	_, s := openBus(t, 0, nil)
	ctx := context.Background()
	g := graph.NewBuilder("g").Channel("result", graph.LastValue()).
		Node("answer", func(context.Context, any, *graph.Runtime) (any, error) {
			return map[string]any{"result": "done"}, nil
		}).
		Edge(graph.Start, "answer").MustCompile(graph.CompileOptions{})
	modes := []engine.StreamMode{engine.StreamTasks, engine.StreamDebug, engine.StreamEvents}
	rec := testRun(modes...)
	sink := s.Begin(ctx, rec)
	if _, err := g.Run(ctx, graph.RunOptions{ThreadID: rec.ThreadID, Input: map[string]any{"result": "pending"}, Sink: sink}); err != nil {
		t.Fatal(err)
	}
	s.End(ctx, rec, engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunSuccess})
	got := follow(t, s, RunRequest{ThreadID: rec.ThreadID, RunID: rec.RunID, Modes: modes})

	var tasks, debug, events []string
	for _, f := range got.frames {
		var d struct {
			Input  map[string]any `json:"input"`
			Result map[string]any `json:"result"`
			Type   string         `json:"type"`
			Event  string         `json:"event"`
			Name   string         `json:"name"`
		}
		if err := json.Unmarshal(f.Data, &d); err != nil {
			continue
		}
		switch f.Event {
		case "tasks":
			if d.Input != nil {
				tasks = append(tasks, "start input.result="+d.Input["result"].(string))
			} else {
				tasks = append(tasks, "result result="+d.Result["result"].(string))
			}
		case "debug":
			if strings.HasPrefix(d.Type, "task") {
				debug = append(debug, d.Type)
			}
		case "events":
			if d.Name == "answer" {
				events = append(events, d.Event)
			}
		}
	}
	if want := []string{"start input.result=pending", "result result=done"}; !slices.Equal(tasks, want) {
		t.Errorf("tasks = %q, want %q", tasks, want)
	}
	if want := []string{"task", "task_result"}; !slices.Equal(debug, want) {
		t.Errorf("debug task types = %q, want %q", debug, want)
	}
	if want := []string{"on_chain_start", "on_chain_end"}; !slices.Equal(events, want) {
		t.Errorf("events of the task = %q, want %q", events, want)
	}
}

// Records written before the task kinds existed name a task's start and its result "tasks";
// they are read by their fields: a result has a "result" field, even null, a start never has
// one, whatever its input holds.
func TestLegacyTaskRecords(t *testing.T) {
	for _, c := range []struct {
		data string
		want graph.Kind
	}{
		{`{"id":"t","name":"n","input":{"result":1},"triggers":["x"],"interrupts":[]}`, graph.KindTaskStart},
		{`{"id":"t","name":"n","input":"\"result\":","triggers":[]}`, graph.KindTaskStart},
		{`{"error":null,"id":"t","interrupts":[],"name":"n","result":null}`, graph.KindTaskResult},
		{`{"id":"t","name":"n","result":{"result":2},"error":null}`, graph.KindTaskResult},
		{`not json`, graph.KindTaskStart},
	} {
		var m Msg
		if err := decodeRecord([]byte(wireVersion+"\ntasks\n\n\n\n"+c.data), &m); err != nil {
			t.Fatal(err)
		}
		if m.Event != c.want {
			t.Errorf("%s read as %q, want %q", c.data, m.Event, c.want)
		}
	}
}

// FuzzDecodeRecord feeds any record to the reader: it never panics, and a record in the
// single-event form reads back with the kind on its event line (a legacy "tasks" as one of the
// task kinds).
func FuzzDecodeRecord(f *testing.F) {
	f.Add("task_start", `{"id":"t","name":"n","input":{"result":1}}`)
	f.Add("tasks", `{"id":"t","name":"n","result":null}`)
	f.Add("values", `{"a":1}`)
	f.Fuzz(func(t *testing.T, kind, data string) {
		var m Msg
		_ = decodeRecord([]byte(data), &m) // anything at all
		if strings.ContainsAny(kind, "\n") {
			return
		}
		if err := decodeRecord([]byte(wireVersion+"\n"+kind+"\n\n\n\n"+data), &m); err != nil {
			t.Fatalf("a record of kind %q: %v", kind, err)
		}
		want := graph.Kind(kind)
		if want == legacyTasks {
			if m.Event != graph.KindTaskStart && m.Event != graph.KindTaskResult {
				t.Fatalf("legacy tasks read as %q", m.Event)
			}
		} else if m.Event != want {
			t.Fatalf("kind %q read as %q", kind, m.Event)
		}
	})
}
