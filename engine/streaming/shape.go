package streaming

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// Msg is one message of the output stream, decoded.
type Msg struct {
	Seq   uint64
	Time  time.Time
	RunID string
	// Event is the event's kind: a graph.Kind, or one of the run's own (KindMetadata, KindError,
	// KindEnd). It says what Data holds, which is never searched to learn it.
	Event graph.Kind
	NS    []string
	Data  json.RawMessage
	Run   *RunInfo
	// ChunkID is the message id of a "messages" chunk.
	ChunkID string
}

// ID is the message's SSE event id.
func (m Msg) ID() string { return EventID(m.Time, m.Seq) }

// Shaper turns the messages of one run into the SSE frames of the modes a client asked for. It
// keeps what the derived shapes need (messages so far, steps, open tasks), so it must see a
// run's messages in order from the start; frames of messages a resumed client already has are
// computed and dropped by the caller.
type Shaper struct {
	modes     map[engine.StreamMode]bool
	subgraphs bool
	run       RunInfo
	runID     string

	accum    map[string]*chunkAcc // message id -> the streamed chunks so far (messages mode)
	streamed map[string]bool      // message ids streamed as chunks
	seen     map[string]bool      // message ids already in the state or sent complete
	steps    map[string]int       // namespace -> step of its last checkpoint
	tasks    map[string]taskInfo  // namespace|node -> its task of the current step
	ev       *eventsState
	values   json.RawMessage // the root state, for the events mode's last event
	needMsgs bool
}

// taskInfo is what the shaper remembers of a started task.
type taskInfo struct {
	id       string
	name     string
	step     int
	triggers json.RawMessage
	input    json.RawMessage
}

// NewShaper returns a shaper for the given modes; with subgraphs, events of subgraphs are sent
// too, named "<mode>|<ns>".
func NewShaper(modes []engine.StreamMode, subgraphs bool) *Shaper {
	s := &Shaper{modes: map[engine.StreamMode]bool{}, subgraphs: subgraphs, accum: map[string]*chunkAcc{},
		streamed: map[string]bool{}, seen: map[string]bool{}, steps: map[string]int{}, tasks: map[string]taskInfo{}}
	for _, m := range modes {
		s.modes[m] = true
	}
	s.needMsgs = s.modes[engine.StreamMessages] || s.modes[engine.StreamMessagesTuple] || s.modes[engine.StreamEvents]
	if s.modes[engine.StreamEvents] {
		s.ev = newEventsState()
	}
	return s
}

// Modes returns the modes the shaper sends.
func (s *Shaper) Modes() map[engine.StreamMode]bool { return s.modes }

// Shape appends to out the frames that m gives.
func (s *Shaper) Shape(m Msg, out []Frame) []Frame {
	id := m.ID()
	emit := func(event string, data []byte) {
		out = append(out, Frame{Event: event, Data: data, ID: id})
	}
	ns := strings.Join(m.NS, "|")
	suffix := ""
	if ns != "" {
		suffix = "|" + ns
	}
	visible := ns == "" || s.subgraphs
	switch m.Event {
	case KindMetadata:
		if s.runID != "" {
			// A new attempt (the run was taken over after a crash) streams again from its
			// last checkpoint: what was streamed of the lost step is dropped.
			s.accum, s.streamed = map[string]*chunkAcc{}, map[string]bool{}
			if s.ev != nil {
				s.ev.models = map[string]*chunkAcc{}
			}
		}
		s.runID = runIDOf(m)
		if m.Run != nil {
			s.run = *m.Run
		}
		emit("metadata", m.Data)
		if s.ev != nil {
			out = s.ev.start(s, m, out)
		}
		return out
	case KindError:
		if s.ev != nil {
			s.ev.failed = true
		}
		emit("error", m.Data)
		return out
	case graphs.TraceToolStart, graphs.TraceToolEnd:
		if s.ev != nil {
			out = s.ev.tool(s, m, m.Event == graphs.TraceToolStart, out)
		}
		return out
	case KindEnd:
		if s.ev != nil {
			out = s.ev.end(s, m, out)
		}
		emit("end", []byte("null"))
		return out
	case graph.KindValues:
		if ns == "" {
			s.values = m.Data
		}
		if s.needMsgs {
			s.markSeen(m.Data)
		}
		if visible && s.modes[engine.StreamValues] {
			emit("values"+suffix, m.Data)
		}
	case graph.KindUpdates:
		// The messages a node returned come before its update, as LangGraph's message handler
		// sends them when the node ends, before the loop sends the step's updates.
		if visible && (s.modes[engine.StreamMessages] || s.modes[engine.StreamMessagesTuple]) {
			out = s.completed(m, ns, suffix, out)
		}
		if visible && s.modes[engine.StreamUpdates] {
			emit("updates"+suffix, m.Data)
		}
	case graph.KindMessages:
		if visible {
			out = s.chunk(m, suffix, out)
		}
		if s.ev != nil {
			out = s.ev.chunk(s, m, out)
		}
	case graph.KindTaskStart, graph.KindTaskResult:
		var t struct {
			ID       string          `json:"id"`
			Name     string          `json:"name"`
			Input    json.RawMessage `json:"input"`
			Triggers json.RawMessage `json:"triggers"`
		}
		if json.Unmarshal(m.Data, &t) != nil || t.Name == graph.Start {
			return out // the start task is the runtime's own, as LangGraph hides it
		}
		start := m.Event == graph.KindTaskStart
		step := s.steps[ns] + 1
		if start {
			s.tasks[ns+"|"+t.Name] = taskInfo{id: t.ID, name: t.Name, step: step, triggers: t.Triggers, input: t.Input}
		}
		if visible && s.modes[engine.StreamTasks] {
			emit(string(engine.StreamTasks)+suffix, m.Data)
		}
		if visible && s.modes[engine.StreamDebug] {
			typ := "task_result"
			if start {
				typ = "task"
			}
			emit("debug"+suffix, debugJSON(typ, m.Time, step, m.Data))
		}
		if s.ev != nil {
			out = s.ev.task(s, m, ns, start, out)
		}
	case graph.KindCheckpoint:
		var cp struct {
			Metadata struct {
				Step *int `json:"step"`
			} `json:"metadata"`
		}
		if json.Unmarshal(m.Data, &cp) == nil && cp.Metadata.Step != nil {
			s.steps[ns] = *cp.Metadata.Step
		}
		if visible && s.modes[engine.StreamCheckpoints] {
			emit("checkpoints"+suffix, m.Data)
		}
		if visible && s.modes[engine.StreamDebug] {
			emit("debug"+suffix, debugJSON("checkpoint", m.Time, s.steps[ns], m.Data))
		}
	default:
		if visible && s.modes[m.Event.Mode()] {
			emit(string(m.Event)+suffix, m.Data)
		}
	}
	return out
}

// runIDOf reads the run id of a metadata message.
func runIDOf(m Msg) string {
	var md struct {
		RunID string `json:"run_id"`
	}
	_ = json.Unmarshal(m.Data, &md)
	if md.RunID == "" {
		return m.RunID
	}
	return md.RunID
}

// debugJSON is a debug event: {type, timestamp, step, payload}.
func debugJSON(typ string, t time.Time, step int, payload json.RawMessage) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "timestamp": engine.At(t), "step": step, "payload": payload})
	return b
}

// markSeen records the ids of the messages of a state, which the messages modes must not send
// again as new.
func (s *Shaper) markSeen(values json.RawMessage) {
	var st struct {
		Messages []struct {
			ID string `json:"id"`
		} `json:"messages"`
	}
	if json.Unmarshal(values, &st) != nil {
		return
	}
	for _, m := range st.Messages {
		if m.ID != "" {
			s.seen[m.ID] = true
		}
	}
}

// chunk handles a streamed model chunk ([chunk, metadata]): passed on in messages-tuple mode
// (tool-call chunks always with their args), accumulated into messages/partial in messages mode.
func (s *Shaper) chunk(m Msg, suffix string, out []Frame) []Frame {
	id := m.ID()
	if s.modes[engine.StreamMessagesTuple] {
		s.streamed[m.ChunkID] = true
		return append(out, Frame{Event: "messages" + suffix, Data: withArgs(m.Data), ID: id})
	}
	if !s.modes[engine.StreamMessages] {
		return out
	}
	var tuple []json.RawMessage
	if json.Unmarshal(m.Data, &tuple) != nil || len(tuple) == 0 {
		return out
	}
	var c map[string]any
	if json.Unmarshal(tuple[0], &c) != nil {
		return out
	}
	msgID, _ := c["id"].(string)
	s.streamed[msgID] = true
	acc := s.accum[msgID]
	if acc == nil {
		acc = &chunkAcc{}
		s.accum[msgID] = acc
		md := json.RawMessage("{}")
		if len(tuple) > 1 {
			md = tuple[1]
		}
		out = append(out, Frame{Event: "messages/metadata" + suffix, Data: mustJSON(map[string]any{msgID: map[string]any{"metadata": md}}), ID: id})
	}
	acc.add(c)
	return append(out, Frame{Event: "messages/partial" + suffix, Data: mustJSON([]any{acc.message()}), ID: id})
}

// completed sends the messages a node returned: complete in messages mode (after the chunks
// that streamed them), and as tuples in messages-tuple mode unless they were streamed.
func (s *Shaper) completed(m Msg, ns, suffix string, out []Frame) []Frame {
	var upd map[string]json.RawMessage
	if json.Unmarshal(m.Data, &upd) != nil {
		return out
	}
	id := m.ID()
	for node, raw := range upd {
		for _, msg := range messagesOf(raw) {
			msgID, _ := msg["id"].(string)
			if msgID != "" && s.seen[msgID] {
				continue
			}
			streamed := s.streamed[msgID]
			if msgID != "" {
				s.seen[msgID] = true
			}
			md := s.metadata(ns, node)
			if s.modes[engine.StreamMessagesTuple] {
				if !streamed {
					out = append(out, Frame{Event: "messages" + suffix, Data: mustJSON([]any{msg, md}), ID: id})
				}
				continue
			}
			if !streamed {
				out = append(out, Frame{Event: "messages/metadata" + suffix, Data: mustJSON(map[string]any{msgID: map[string]any{"metadata": md}}), ID: id})
			}
			out = append(out, Frame{Event: "messages/complete" + suffix, Data: mustJSON([]any{msg}), ID: id})
		}
	}
	return out
}

// metadata is the metadata of a message that node of namespace ns returned, as LangGraph gives
// it: the run's, and the node, step and triggers of its task.
func (s *Shaper) metadata(ns, node string) map[string]any {
	md := map[string]any{}
	for k, v := range s.run.Metadata {
		md[k] = v
	}
	md["run_id"], md["thread_id"], md["assistant_id"] = s.runID, s.run.ThreadID, s.run.AssistantID
	if s.run.GraphID != "" {
		md["graph_id"] = s.run.GraphID
	}
	md["tags"] = []string{}
	md["langgraph_node"], md["langgraph_path"] = node, []string{"__pregel_pull", node}
	if t, ok := s.tasks[ns+"|"+node]; ok {
		md["langgraph_step"], md["langgraph_triggers"] = t.step, t.triggers
		md["langgraph_checkpoint_ns"] = strings.TrimPrefix(ns+"|"+node+":"+t.id, "|")
	}
	return md
}

// messagesOf returns the messages (objects with a type) of a node's update.
func messagesOf(update json.RawMessage) []map[string]any {
	var u struct {
		Messages json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(update, &u) != nil || len(u.Messages) == 0 {
		return nil
	}
	var list []any
	if u.Messages[0] == '[' {
		_ = json.Unmarshal(u.Messages, &list)
	} else {
		var one any
		_ = json.Unmarshal(u.Messages, &one)
		list = []any{one}
	}
	var out []map[string]any
	for _, x := range list {
		if m, ok := x.(map[string]any); ok && m["type"] != nil {
			out = append(out, m)
		}
	}
	return out
}

// withArgs makes sure every tool call and tool-call chunk of a [chunk, metadata] tuple carries
// its args ({} for a call, "" for a chunk), which clients index without checking.
func withArgs(data json.RawMessage) json.RawMessage {
	if !bytes.Contains(data, []byte(`"type":"tool_call`)) {
		return data // no tool call nor tool-call chunk
	}
	var tuple []any
	if json.Unmarshal(data, &tuple) != nil || len(tuple) == 0 {
		return data
	}
	c, ok := tuple[0].(map[string]any)
	if !ok {
		return data
	}
	changed := false
	fix := func(key string, empty any) {
		list, _ := c[key].([]any)
		for _, x := range list {
			if tc, ok := x.(map[string]any); ok && tc["args"] == nil {
				tc["args"], changed = empty, true
			}
		}
	}
	fix("tool_calls", map[string]any{})
	fix("tool_call_chunks", "")
	if !changed {
		return data
	}
	return mustJSON(tuple)
}

// mustJSON encodes v, which holds only decoded JSON values.
func mustJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte("null")
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
