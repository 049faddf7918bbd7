package threadstream

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/streaming"
)

// LifecycleData is a lifecycle event's data.
type LifecycleData struct {
	Event     string `json:"event"`
	GraphName string `json:"graph_name,omitempty"`
	Error     string `json:"error,omitempty"`
	RunID     string `json:"run_id,omitempty"`
	Attempt   int    `json:"attempt,omitempty"`
}

// InputRequestedData is an input.requested event's data: an interrupt to answer.
type InputRequestedData struct {
	InterruptID string `json:"interrupt_id"`
	Payload     any    `json:"payload"`
}

// UpdatesData is an updates event's data: what one node wrote.
type UpdatesData struct {
	Node   string `json:"node"`
	Values any    `json:"values"`
}

// CustomData is a custom event's data.
type CustomData struct {
	Name    string `json:"name,omitempty"`
	Payload any    `json:"payload"`
}

// CheckpointData is a checkpoints event's data.
type CheckpointData struct {
	ID       string `json:"id"`
	ParentID string `json:"parent_id,omitempty"`
	Step     int    `json:"step"`
	Source   string `json:"source"`
}

// Translator turns the output of one run into protocol events. It keeps what spans events (the
// messages being streamed, whether the run stopped on an interrupt or failed), so it must see the
// run's output from its first message, in order: then the events it gives, and their number, are
// the same on every read.
type Translator struct {
	graphID     string
	open        map[string]*openMessage // message id -> the message being streamed
	order       []string                // ids of open, in the order they started
	calls       map[string]string       // tool invocation id -> the tool call id its events go by
	interrupted bool
	failure     string
	failed      bool
}

// openMessage is an AI message whose chunks are being streamed.
type openMessage struct {
	ns   []string
	node string
	text strings.Builder
}

// NewTranslator returns a translator for a run from its first message.
func NewTranslator() *Translator {
	return &Translator{open: map[string]*openMessage{}, calls: map[string]string{}}
}

// Translate appends to out the events m gives (without their seq and id: Number sets them).
func (t *Translator) Translate(m streaming.Msg, out []Event) []Event {
	ns := m.NS
	if ns == nil {
		ns = []string{}
	}
	ev := func(method Method, node string, data any) {
		out = append(out, Event{Type: TypeEvent, Method: method,
			Params: EventParams{Namespace: ns, Timestamp: m.Time.UnixMilli(), RunID: m.RunID, Node: node, Data: data}})
	}
	switch m.Event {
	case "metadata":
		var md struct {
			Attempt int `json:"attempt"`
		}
		_ = json.Unmarshal(m.Data, &md)
		if m.Run != nil {
			t.graphID = m.Run.GraphID
		}
		// A new attempt (a takeover) streams again from the last checkpoint.
		t.open, t.order, t.interrupted, t.failed = map[string]*openMessage{}, nil, false, false
		ev(EventLifecycle, "", LifecycleData{Event: StatusRunning, GraphName: t.graphID, RunID: m.RunID, Attempt: md.Attempt})
	case "values":
		ev(EventValues, "", decode(m.Data))
	case "updates":
		out = t.finish(m, ns, out)
		var upd map[string]json.RawMessage
		if json.Unmarshal(m.Data, &upd) != nil {
			return out
		}
		for _, node := range sortedKeys(upd) {
			if node == graph.Interrupt {
				var ivs []graph.InterruptValue
				_ = json.Unmarshal(upd[node], &ivs)
				for _, iv := range ivs {
					t.interrupted = true
					ev(EventInputRequested, "", InputRequestedData{InterruptID: iv.ID, Payload: iv.Value})
				}
				continue
			}
			ev(EventUpdates, node, UpdatesData{Node: node, Values: decode(upd[node])})
		}
	case "messages":
		out = t.chunk(m, ns, out)
	case graph.KindTaskStart, graph.KindTaskResult:
		var task struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(m.Data, &task) == nil && task.Name != graph.Start {
			ev(EventTasks, task.Name, decode(m.Data))
		}
	case "checkpoints":
		ev(EventCheckpoints, "", checkpointOf(m.Data))
	case "custom":
		ev(EventCustom, "", CustomData{Payload: decode(m.Data)})
	case graphs.TraceToolStart:
		var d struct {
			ID         string `json:"tool_call_id"`
			Name       string `json:"name"`
			Input      any    `json:"input"`
			Invocation string `json:"id"`
		}
		_ = json.Unmarshal(m.Data, &d)
		t.calls[d.Invocation] = callID(d.ID, d.Invocation)
		ev(EventTools, "", map[string]any{"event": "tool-started", "tool_call_id": t.calls[d.Invocation],
			"tool_name": d.Name, "input": d.Input})
	case graphs.TraceToolEnd:
		var d struct {
			Invocation string  `json:"id"`
			Output     any     `json:"output"`
			Error      *string `json:"error"`
		}
		_ = json.Unmarshal(m.Data, &d)
		id := callID(t.calls[d.Invocation], d.Invocation)
		delete(t.calls, d.Invocation)
		if d.Error != nil {
			ev(EventTools, "", map[string]any{"event": "tool-error", "tool_call_id": id, "message": *d.Error})
		} else {
			ev(EventTools, "", map[string]any{"event": "tool-finished", "tool_call_id": id, "output": d.Output})
		}
	case "error":
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(m.Data, &e)
		t.failed, t.failure = true, strings.TrimPrefix(e.Error+": "+e.Message, ": ")
	case "end":
		out = t.finish(m, nil, out)
		end := LifecycleData{Event: StatusCompleted, GraphName: t.graphID, RunID: m.RunID}
		switch {
		case t.failed:
			end.Event, end.Error = StatusFailed, t.failure
		case t.interrupted:
			end.Event = StatusInterrupted
		}
		ev(EventLifecycle, "", end)
	}
	return out
}

// callID is the id a tool call's events go by: the model's tool call id, or the invocation's.
func callID(toolCall, invocation string) string {
	if toolCall != "" {
		return toolCall
	}
	return invocation
}

// chunk translates one streamed model chunk ([chunk, metadata]): a message-start and the start
// of its text block on its first chunk, then a text delta for each chunk with text.
func (t *Translator) chunk(m streaming.Msg, ns []string, out []Event) []Event {
	var tuple []json.RawMessage
	if json.Unmarshal(m.Data, &tuple) != nil || len(tuple) == 0 {
		return out
	}
	var c struct {
		ID      string `json:"id"`
		Content any    `json:"content"`
	}
	var md struct {
		Node string `json:"langgraph_node"`
	}
	_ = json.Unmarshal(tuple[0], &c)
	if len(tuple) > 1 {
		_ = json.Unmarshal(tuple[1], &md)
	}
	id := c.ID
	if id == "" {
		id = m.ChunkID
	}
	ev := func(data map[string]any) {
		out = append(out, Event{Type: TypeEvent, Method: EventMessages,
			Params: EventParams{Namespace: ns, Timestamp: m.Time.UnixMilli(), RunID: m.RunID, Node: md.Node, Data: data}})
	}
	msg := t.open[id]
	if msg == nil {
		msg = &openMessage{ns: ns, node: md.Node}
		t.open[id] = msg
		t.order = append(t.order, id)
		ev(map[string]any{"event": "message-start", "role": "ai", "id": id})
		ev(map[string]any{"event": "content-block-start", "index": 0, "content": map[string]any{"type": "text", "text": ""}})
	}
	if text, ok := c.Content.(string); ok && text != "" {
		msg.text.WriteString(text)
		ev(map[string]any{"event": "content-block-delta", "index": 0, "delta": map[string]any{"type": "text-delta", "text": text}})
	}
	return out
}

// finish closes the messages being streamed in namespace ns (every one when ns is nil): their
// node's update or the run's end says they are complete.
func (t *Translator) finish(m streaming.Msg, ns []string, out []Event) []Event {
	kept := t.order[:0]
	for _, id := range t.order {
		msg := t.open[id]
		if ns != nil && !slices.Equal(msg.ns, ns) {
			kept = append(kept, id)
			continue
		}
		delete(t.open, id)
		for _, data := range []map[string]any{
			{"event": "content-block-finish", "index": 0, "content": map[string]any{"type": "text", "text": msg.text.String()}},
			{"event": "message-finish"},
		} {
			out = append(out, Event{Type: TypeEvent, Method: EventMessages,
				Params: EventParams{Namespace: msg.ns, Timestamp: m.Time.UnixMilli(), RunID: m.RunID, Node: msg.node, Data: data}})
		}
	}
	t.order = kept
	return out
}

// checkpointOf reads a checkpoints message (a history entry) into the protocol's checkpoint.
func checkpointOf(raw json.RawMessage) CheckpointData {
	var cp struct {
		ID       string  `json:"checkpoint_id"`
		ParentID *string `json:"parent_checkpoint_id"`
		Metadata struct {
			Step   int    `json:"step"`
			Source string `json:"source"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(raw, &cp)
	d := CheckpointData{ID: cp.ID, Step: cp.Metadata.Step, Source: cp.Metadata.Source}
	if cp.ParentID != nil {
		d.ParentID = *cp.ParentID
	}
	return d
}

// Number gives the events translated from the message at stream sequence seq their seq and
// event_id; first is the rank of the first of them among the message's events.
func Number(events []Event, seq uint64, first int) {
	for k := range events {
		events[k].Seq = streaming.Position(seq, first+k)
		events[k].EventID = strconv.FormatUint(events[k].Seq, 10)
	}
}

// decode is raw as a value for re-encoding (json.RawMessage keeps it as it is).
func decode(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return raw
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
