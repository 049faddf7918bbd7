package selftrace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/jsoncount"
	"github.com/jetgraph/jetgraph/engine/tracing"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
)

// span is one traced run (a "span", not to be confused with the graph run it belongs to), as
// it will be posted: fields in the wire terms of contract/tracing.md.
type span struct {
	id, parent, dotted, name, runType string
	start                             time.Time
	end                               *time.Time
	inputs, outputs                   json.RawMessage // JSON objects
	err                               *string
	events                            []map[string]any
	extra                             map[string]any
	tags                              []string
	// dirty: changed since it was last posted.
	dirty bool
}

// runTrace turns the graph events of one run attempt into spans. Its methods are safe for
// concurrent use: the tasks of a step run, and emit, in parallel.
type runTrace struct {
	mu      sync.Mutex
	traceID string
	project string
	root    *span
	open    map[string]*span  // spans not yet posted in their final state, by id
	order   []string          // ids of open, in creation order
	dotted  map[string]string // span id -> dotted_order, for children
	tasks   map[string]string // graph task id -> its span id
	values  any               // the root graph's last values
	// delegated: another tracer traces the run's steps (graphs.TraceDelegate); only the root
	// is traced here.
	delegated bool
}

// newRunTrace starts the trace of a run attempt with its root chain span.
func newRunTrace(project string, root *span) *runTrace {
	rt := &runTrace{traceID: root.id, project: project, root: root,
		open: map[string]*span{}, dotted: map[string]string{}, tasks: map[string]string{}}
	root.dotted = trace.FormatSegment(root.start, root.id)
	rt.add(root)
	return rt
}

// add registers a new span (its parent and dotted_order set).
func (r *runTrace) add(s *span) {
	s.dirty = true
	r.open[s.id] = s
	r.order = append(r.order, s.id)
	r.dotted[s.id] = s.dotted
}

// child returns a new span under the span an event's namespace names: the task of its last
// element ("node:task_id"), or the root.
func (r *runTrace) child(id string, ns []string, name, runType string, start time.Time) *span {
	parent := r.root.id
	if len(ns) > 0 {
		last := ns[len(ns)-1]
		if _, task, ok := strings.Cut(last, ":"); ok {
			if sid, ok := r.tasks[task]; ok {
				parent = sid
			}
		}
	}
	s := &span{id: id, parent: parent, name: name, runType: runType, start: start,
		extra: map[string]any{"metadata": map[string]any{}}}
	s.dotted = r.dotted[parent] + "." + trace.FormatSegment(start, id)
	r.add(s)
	return s
}

// handle folds one graph event into the trace.
func (r *runTrace) handle(e graph.Event) {
	switch e.Kind {
	case graph.KindValues, graph.KindTaskStart, graph.KindTaskResult, graphs.TraceDelegate,
		graphs.TraceLLMStart, graphs.TraceLLMEnd, graphs.TraceToolStart, graphs.TraceToolEnd:
	default:
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Kind == graphs.TraceDelegate {
		if p, ok := e.Data.(*graphs.TraceParent); ok && p != nil {
			r.delegated = true
			p.DottedOrder, p.Project = r.root.dotted, r.project
		}
		return
	}
	if r.delegated && e.Kind != graph.KindValues {
		return // the other tracer has the run's steps and calls
	}
	switch d := e.Data.(type) {
	case graph.State:
		if len(e.NS) == 0 {
			r.values = d
		}
	case graph.TaskStart:
		r.taskStart(e.NS, d, now)
	case graph.TaskResult:
		r.taskResult(d, now)
	case graphs.LLMStart:
		if !trace.IsUUID(d.ID) {
			return
		}
		name := d.Model
		if name == "" {
			name = "ChatModel"
		}
		s := r.child(strings.ToLower(d.ID), e.NS, name, trace.RunLLM, timeOr(d.Time, now))
		s.inputs = encoded(map[string]any{"messages": nativeMessages(d.Messages)})
		md := s.extra["metadata"].(map[string]any)
		md["ls_provider"], md["ls_model_name"], md["ls_model_type"] = d.Provider, d.Model, "chat"
		s.extra["invocation_params"] = map[string]any{"model": d.Model, "tools": plain(d.Tools)}
	case graphs.LLMEnd:
		s := r.open[strings.ToLower(d.ID)] // (ids as ingestion keeps them)
		if s == nil {
			return
		}
		end := timeOr(d.Time, now)
		s.end, s.err, s.dirty = &end, strPtr(d.Error), true
		if m := d.Message; m.ID != "" || m.Content != nil {
			s.outputs = encoded(map[string]any{"messages": nativeMessages([]engine.Message{m})})
		}
		if ft := d.FirstTokenTime; ft != nil {
			s.events = append(s.events, map[string]any{"name": "new_token", "time": timeText(*ft)})
		}
	case graphs.ToolStart:
		if !trace.IsUUID(d.ID) {
			return
		}
		s := r.child(strings.ToLower(d.ID), e.NS, d.Name, trace.RunTool, timeOr(d.Time, now))
		s.inputs = object(d.Input, "input")
		if d.ToolCallID != "" {
			s.extra["metadata"].(map[string]any)["tool_call_id"] = d.ToolCallID
		}
	case graphs.ToolEnd:
		s := r.open[strings.ToLower(d.ID)] // (ids as ingestion keeps them)
		if s == nil {
			return
		}
		end := timeOr(d.Time, now)
		s.end, s.err, s.dirty = &end, strPtr(d.Error), true
		s.outputs = wrapped("output", encoded(d.Output))
	}
}

// taskStart opens a chain span for a task that started. The graph's own start task is not
// traced.
func (r *runTrace) taskStart(ns []string, t graph.TaskStart, now time.Time) {
	if t.ID == "" || t.Name == graph.Start {
		return
	}
	s := r.child(uuid.Must(uuid.NewV7()).String(), ns, t.Name, trace.RunChain, now)
	s.inputs = object(t.Input, "input")
	md := s.extra["metadata"].(map[string]any)
	md["langgraph_node"], md["langgraph_task_id"], md["langgraph_triggers"] = t.Name, t.ID, anyList(t.Triggers)
	md["langgraph_checkpoint_ns"] = strings.Join(append(append([]string(nil), ns...), t.Name+":"+t.ID), "|")
	r.tasks[t.ID] = s.id
}

// taskResult ends the chain span of a task that finished, with its writes or its error.
func (r *runTrace) taskResult(t graph.TaskResult, now time.Time) {
	s := r.open[r.tasks[t.ID]]
	if t.ID == "" || s == nil {
		return
	}
	s.end, s.dirty = &now, true
	s.outputs = object(t.Result, "output")
	if t.Error != nil {
		msg := fmt.Sprintf("%s: %s", t.Error.Error, t.Error.Message)
		s.err = &msg
	}
}

// closeOpen ends every span but the root that is still open, with error msg.
func (r *runTrace) closeOpen(msg string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range r.order {
		if s := r.open[id]; s != nil && s.end == nil && s != r.root {
			s.end, s.err, s.dirty = &now, &msg, true
		}
	}
}

// finish ends the root span (and any span still open) at the run's end.
func (r *runTrace) finish(fin engine.RunFinishedData, now time.Time) {
	// A task that was interrupted, or cut short by a cancellation, never reported back.
	msg := "GraphInterrupt"
	if fin.Status != engine.RunInterrupted {
		msg = "run ended (" + fin.Status + ") before this step did"
	}
	r.closeOpen(msg, now)
	r.mu.Lock()
	defer r.mu.Unlock()
	root := r.root
	root.end, root.dirty = &now, true
	root.outputs = object(r.values, "output")
	if fin.Error != nil {
		msg := fin.Error.Error()
		root.err = &msg
	}
	root.extra["metadata"].(map[string]any)["run_status"] = fin.Status
}

// take returns the posts of the spans that changed since the last call, and forgets the spans
// that ended (their dotted_order is kept for late children).
func (r *runTrace) take() []tracing.EncodedRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []tracing.EncodedRun
	keep := r.order[:0]
	for _, id := range r.order {
		s := r.open[id]
		if s.dirty {
			if raw, err := r.post(s); err == nil {
				out = append(out, tracing.EncodedRun{TraceID: r.traceID, JSON: raw})
			}
			s.dirty = false
		}
		if s.end != nil {
			delete(r.open, id)
			continue
		}
		keep = append(keep, id)
	}
	r.order = keep
	return out
}

// spanJSON is a span's post as the langsmith clients send it (contract/tracing.md): what
// ingestion stores of it is this text.
type spanJSON struct {
	ID          string           `json:"id"`
	TraceID     string           `json:"trace_id"`
	DottedOrder string           `json:"dotted_order"`
	ParentRunID string           `json:"parent_run_id,omitempty"`
	Name        string           `json:"name"`
	RunType     string           `json:"run_type"`
	StartTime   string           `json:"start_time"`
	EndTime     string           `json:"end_time,omitempty"`
	SessionName string           `json:"session_name"`
	Error       *string          `json:"error,omitempty"`
	Events      []map[string]any `json:"events,omitempty"`
	Tags        []string         `json:"tags,omitempty"`
	Extra       map[string]any   `json:"extra"`
	Inputs      json.RawMessage  `json:"inputs,omitempty"`
	Outputs     json.RawMessage  `json:"outputs,omitempty"`
}

// post is a span's post, encoded now (under r.mu: it shares nothing the run goes on changing
// once it is text). Its fields are those trace.Apply accepts (see tracing.EncodedRun): the ids
// are UUIDs (rootSpan and handle see to it), the dotted order is built from them, and inputs
// and outputs are JSON objects.
func (r *runTrace) post(s *span) ([]byte, error) {
	p := spanJSON{ID: s.id, TraceID: r.traceID, DottedOrder: s.dotted, ParentRunID: s.parent, Name: s.name,
		RunType: s.runType, StartTime: timeText(s.start), SessionName: r.project, Error: s.err, Events: s.events,
		Tags: s.tags, Extra: s.extra, Inputs: s.inputs, Outputs: s.outputs}
	if s.end != nil {
		p.EndTime = timeText(*s.end)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // (as ingestion writes a client's run: the text as sent)
	jsoncount.Encoded()
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// timeText is a time as the API writes it.
func timeText(t time.Time) string { return t.UTC().Format(engine.TimeLayout) }

// nativeMessages converts messages (LangChain dicts or engine.Message values) to the native
// message format of spec/3-trace-format.md; what does not convert is kept as it is. The problems
// Normalize notes are left to the read model, which derives them again.
func nativeMessages(v any) any {
	p := plain(v)
	if msgs, ok := trace.Normalize(map[string]any{"messages": p}); ok {
		for i := range msgs {
			msgs[i].Problem = ""
		}
		return plain(msgs)
	}
	return p
}

// object is v as a run's inputs or outputs, encoded: v itself when it is an object, else
// {key: v}; nil for nil.
//
// The values are kept encoded: a span's inputs and outputs are only ever encoded again, and a
// decoded copy of every value (then encoded for the post) cost more than the rest of the span.
func object(v any, key string) json.RawMessage {
	if v == nil {
		return nil
	}
	raw := encoded(v)
	if raw[0] == '{' {
		return raw
	}
	return wrapped(key, raw)
}

// wrapped is the JSON object {key: raw}.
func wrapped(key string, raw json.RawMessage) json.RawMessage {
	return encoded(map[string]json.RawMessage{key: raw})
}

// encoded is v's JSON, which shares no memory with v; null when it does not encode.
func encoded(v any) json.RawMessage {
	jsoncount.Encoded()
	raw, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return raw
}

// plain is v as decoded JSON (maps, lists, strings, numbers), so that what is stored does not
// share memory with the graph's values; nil when it does not encode.
func plain(v any) any {
	jsoncount.Encoded()
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	jsoncount.Decoded()
	if json.Unmarshal(raw, &out) != nil {
		return nil
	}
	return out
}

// anyList is l as decoded JSON gives a list of strings (nil for nil), sharing nothing with l:
// without the JSON round trip plain takes.
func anyList(l []string) []any {
	if l == nil {
		return nil
	}
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// strPtr is s as an error text: nil when it is nil or empty.
func strPtr(s *string) *string {
	if s != nil && *s != "" {
		return s
	}
	return nil
}

// timeOr is t, or def when t is not set.
func timeOr(t, def time.Time) time.Time {
	if !t.IsZero() {
		return t
	}
	return def
}
