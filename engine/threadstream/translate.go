package threadstream

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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

// StaticInterruptPayload is the payload of the input.requested that announces a static interrupt
// (interrupt_before or interrupt_after): no node asked anything; Next are the nodes the thread
// runs when it is resumed (empty when the run did not stream its checkpoints).
type StaticInterruptPayload struct {
	Type string   `json:"type"`
	Next []string `json:"next"`
}

// StaticInterruptType is StaticInterruptPayload.Type.
const StaticInterruptType = "static"

// StaticInterruptID is the interrupt id a run stopped by a static interrupt is announced with.
// Such a stop has no interrupt of its own (LangGraph gives it no id), but a client answers an
// interrupt by id, so the id derives from the run: the same on every read, and what
// input.respond accepts for the thread's latest run.
func StaticInterruptID(runID string) string {
	sum := sha256.Sum256([]byte("jetgraph static interrupt|" + runID))
	return hex.EncodeToString(sum[:16])
}

// ToolMessage is a tool-finished event's output: the tool message the call gave, as LangGraph's
// tools stream mode has it.
type ToolMessage struct {
	Content          any            `json:"content"`
	AdditionalKwargs map[string]any `json:"additional_kwargs"`
	ResponseMetadata map[string]any `json:"response_metadata"`
	Type             string         `json:"type"`
	Name             string         `json:"name"`
	ID               *string        `json:"id"`
	ToolCallID       string         `json:"tool_call_id"`
	Artifact         any            `json:"artifact"`
	Status           string         `json:"status"`
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
	calls       map[string]toolCall     // tool invocation id -> the call its events go by
	asked       map[string]bool         // interrupt ids announced
	next        []string                // the nodes after the run's latest root checkpoint
	interrupted bool
	failure     string
	failed      bool
}

// toolCall is a tool call under way: the id its events go by and the tool's name.
type toolCall struct {
	id, name string
}

// openMessage is an AI message whose chunks are being streamed.
type openMessage struct {
	ns   []string
	node string
	text strings.Builder
}

// NewTranslator returns a translator for a run from its first message.
func NewTranslator() *Translator {
	return &Translator{open: map[string]*openMessage{}, calls: map[string]toolCall{}, asked: map[string]bool{}}
}

// Translate appends to out the events m gives (without their seq and id: Number sets them).
func (t *Translator) Translate(m streaming.Msg, out []Event) []Event {
	ns := m.NS
	if ns == nil {
		ns = []string{}
	}
	evAt := func(ns []string, method Method, node string, data any) {
		out = append(out, Event{Type: TypeEvent, Method: method,
			Params: EventParams{Namespace: ns, Timestamp: m.Time.UnixMilli(), RunID: m.RunID, Node: node, Data: data}})
	}
	ev := func(method Method, node string, data any) { evAt(ns, method, node, data) }
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
		t.asked, t.next = map[string]bool{}, nil
		ev(EventLifecycle, "", LifecycleData{Event: StatusRunning, GraphName: t.graphID, RunID: m.RunID, Attempt: md.Attempt})
	case "values":
		ev(EventValues, "", withoutInterrupts(m.Data))
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
					if !t.asked[iv.ID] {
						t.asked[iv.ID] = true
						ev(EventInputRequested, "", InputRequestedData{InterruptID: iv.ID, Payload: iv.Value})
					}
				}
				// No interrupt value at the root: the run stopped on a static interrupt. It is
				// announced as a dynamic one is, so that a client sees the thread wait and can
				// answer it (see StaticInterruptID).
				if len(ivs) == 0 && len(ns) == 0 && !t.interrupted {
					t.interrupted = true
					id := StaticInterruptID(m.RunID)
					t.asked[id] = true
					next := t.next
					if next == nil {
						next = []string{}
					}
					ev(EventInputRequested, "", InputRequestedData{InterruptID: id,
						Payload: StaticInterruptPayload{Type: StaticInterruptType, Next: next}})
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
		if len(ns) == 0 {
			var cp struct {
				Next []string `json:"next"`
			}
			_ = json.Unmarshal(m.Data, &cp)
			t.next = cp.Next
		}
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
		call := toolCall{id: callID(d.ID, d.Invocation), name: d.Name}
		t.calls[d.Invocation] = call
		tns, node := toolScope(ns)
		evAt(tns, EventTools, node, map[string]any{"event": "tool-started", "tool_call_id": call.id,
			"tool_name": d.Name, "input": d.Input})
	case graphs.TraceToolEnd:
		var d struct {
			Invocation string  `json:"id"`
			Output     any     `json:"output"`
			Error      *string `json:"error"`
		}
		_ = json.Unmarshal(m.Data, &d)
		call := t.calls[d.Invocation]
		call.id = callID(call.id, d.Invocation)
		delete(t.calls, d.Invocation)
		tns, node := toolScope(ns)
		if d.Error != nil {
			evAt(tns, EventTools, node, map[string]any{"event": "tool-error", "tool_call_id": call.id, "message": *d.Error})
		} else {
			evAt(tns, EventTools, node, map[string]any{"event": "tool-finished", "tool_call_id": call.id,
				"output": ToolMessage{Content: d.Output, AdditionalKwargs: map[string]any{}, ResponseMetadata: map[string]any{},
					Type: "tool", Name: call.name, ToolCallID: call.id, Status: "success"}})
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

// toolScope is where a tool call's events go: the namespace of the graph whose node ran the
// tool (a tool call's output message ends with its task's "node:task_id" segment, which LangGraph
// leaves out: a root-level tool node's calls are at []), and that node.
func toolScope(ns []string) ([]string, string) {
	if len(ns) == 0 {
		return ns, ""
	}
	node, _, _ := strings.Cut(ns[len(ns)-1], ":")
	return slices.Clip(ns[:len(ns)-1]), node
}

// withoutInterrupts is a values message's state without "__interrupt__", which the input
// channel carries.
func withoutInterrupts(raw json.RawMessage) any {
	if !bytes.Contains(raw, []byte(`"`+graph.Interrupt+`"`)) {
		return decode(raw)
	}
	var state map[string]json.RawMessage
	if json.Unmarshal(raw, &state) != nil {
		return decode(raw)
	}
	delete(state, graph.Interrupt)
	return state
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
