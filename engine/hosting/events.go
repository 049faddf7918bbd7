package hosting

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/jetgraph/jetgraph/engine/graph"
)

// The library stream modes a host's event frames name (PROTOCOL.md, "event").
const (
	hostValues   = "values"
	hostUpdates  = "updates"
	hostCustom   = "custom"
	hostMessages = "messages"
	hostTasks    = "tasks"
)

// typedEvents turns one event frame of a host into the runtime's typed events, so that
// streaming, self-tracing and the publisher see a hosted graph's events exactly as a Go graph's
// (graph.Kind with its payload type). This is the one place a host's payload is decoded to learn
// what it holds: a tasks payload is a start when it names its triggers (the library's task
// start), a result otherwise; an updates payload of several nodes is one event per node. A
// frame of a mode the runtime does not know is dropped: a newer host's additions are never
// mistaken for another kind.
func typedEvents(mode string, ns []string, raw json.RawMessage) []graph.Event {
	switch mode {
	case hostValues:
		v, _ := decodeAny(raw).(map[string]any)
		return []graph.Event{{Kind: graph.KindValues, NS: ns, Data: graph.State(v)}}
	case hostUpdates:
		u, ok := decodeAny(raw).(map[string]any)
		if !ok {
			return nil
		}
		out := make([]graph.Event, 0, len(u))
		for _, node := range slices.Sorted(maps.Keys(u)) {
			out = append(out, graph.Event{Kind: graph.KindUpdates, NS: ns, Data: graph.NodeUpdate{Node: node, Values: u[node]}})
		}
		return out
	case hostCustom:
		return []graph.Event{{Kind: graph.KindCustom, NS: ns, Data: decodeAny(raw)}}
	case hostMessages:
		var pair []json.RawMessage
		if json.Unmarshal(raw, &pair) != nil || len(pair) != 2 {
			return nil
		}
		var chunk struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(pair[0], &chunk)
		return []graph.Event{{Kind: graph.KindMessages, NS: ns, Data: graph.EncodedMessageChunk{ID: chunk.ID, Pair: raw}}}
	case hostTasks:
		var t struct {
			ID         string                 `json:"id"`
			Name       string                 `json:"name"`
			Input      json.RawMessage        `json:"input"`
			Triggers   []string               `json:"triggers"`
			Error      *graph.TaskError       `json:"error"`
			Result     json.RawMessage        `json:"result"`
			Interrupts []graph.InterruptValue `json:"interrupts"`
		}
		if json.Unmarshal(raw, &t) != nil {
			return nil
		}
		if t.Triggers != nil {
			start := graph.TaskStart{ID: t.ID, Name: t.Name, Input: decodeAny(t.Input), Triggers: t.Triggers, Interrupts: t.Interrupts}
			return []graph.Event{{Kind: graph.KindTaskStart, NS: ns, Data: start}}
		}
		res := graph.TaskResult{ID: t.ID, Name: t.Name, Error: t.Error, Result: decodeAny(t.Result), Interrupts: t.Interrupts}
		return []graph.Event{{Kind: graph.KindTaskResult, NS: ns, Data: res}}
	}
	return nil
}
