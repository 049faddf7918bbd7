package a2a

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/runs"
)

// metaMessageID is the run metadata key that keeps the id of the A2A message a task began
// with: the same id as the human message it put on the thread, which is where the task's
// answer starts.
const metaMessageID = "a2a_message_id"

// Artifact names.
const (
	artifactResponse  = "Assistant Response"
	artifactInterrupt = "Interrupt"
)

// metaTaskID is the run metadata key that keeps the task a run continues: a message on a task
// waiting for input makes a run of the same task, whose id stays the id of the run it began with.
const metaTaskID = "a2a_task_id"

// taskRuns are the runs of one task: the run it began with (its id, and the message its span
// of the thread starts at) and its latest (its state).
type taskRuns struct {
	head, last engine.RunRecord
	// superseded says a later run on the thread (another task's) came after the task's last.
	superseded bool
}

// taskIDOf is the task run rec belongs to: the task it continues, else its own.
func taskIDOf(rec engine.RunRecord) string {
	if id, _ := rec.Metadata[metaTaskID].(string); id != "" {
		return id
	}
	return rec.RunID
}

// start checks a send (p, decoded from either wire) and creates its run: on the context's
// thread (made on its first message; a new one without contextId), with the message as the
// graph's input; or, on a task waiting for input, as the continuation of that task (the answer
// to its interrupt, or a plain continue past a static breakpoint); or with the command the
// metadata carries (on a task named, as a run of that task). await says the caller waits for
// the run's end (runs.Create.Await).
func (h *Handlers) start(ctx context.Context, a engine.Assistant, p sendParams, v version, await bool) (taskRuns, *RPCError) {
	problems := checkMessage(p.Message, v)
	if p.Configuration != nil {
		problems = append(problems, checkHistoryLength(p.Configuration.HistoryLength, "params", "configuration", "historyLength")...)
	}
	command, cp := commandOf(p)
	problems = append(problems, cp...)
	if len(problems) > 0 {
		return taskRuns{}, invalidParams(problems)
	}
	m := p.Message
	if rerr := checkModes(m, p.Configuration); rerr != nil {
		return taskRuns{}, rerr
	}
	thread := m.ContextID
	meta := map[string]any{metaMessageID: m.MessageID}
	var head *engine.RunRecord
	continued := false
	if m.TaskID != "" {
		tr, rerr := h.findTask(ctx, a, m.TaskID)
		if rerr != nil {
			return taskRuns{}, rerr
		}
		if thread != "" && thread != tr.head.ThreadID {
			return taskRuns{}, invalidParams([]Problem{{Loc: []any{"params", "message", "contextId"},
				Msg: "the task " + m.TaskID + " is not in this context"}})
		}
		thread = tr.head.ThreadID
		state := stateOf(tr.last)
		switch {
		case state == StateSubmitted || state == StateWorking:
			return taskRuns{}, &RPCError{Code: CodeUnsupportedOperation, Message: "Task " + m.TaskID +
				" is still " + wireState(state, v) + ": wait for it to end (or cancel it) before sending it a message"}
		case command == nil && state != StateInputRequired:
			return taskRuns{}, &RPCError{Code: CodeUnsupportedOperation, Message: "Task " + m.TaskID + " is " +
				wireState(state, v) + ": a task that has ended takes no more messages; send the message with its contextId alone to start a new task there"}
		case command == nil && tr.superseded:
			return taskRuns{}, &RPCError{Code: CodeUnsupportedOperation, Message: "Task " + m.TaskID +
				" waits for input, but a later task in its context ran since: its interrupt can no longer be answered"}
		case command == nil:
			cmd, rerr := h.continuation(ctx, thread, m)
			if rerr != nil {
				return taskRuns{}, rerr
			}
			command, continued = cmd, true
		}
		meta[metaTaskID] = tr.head.RunID
		head = &tr.head
	}
	if thread == "" {
		thread = newID()
	}
	c := runs.Create{ThreadID: thread, IfNotExists: engine.IfNotExistsCreate, AssistantID: a.AssistantID,
		Metadata: meta, Await: await}
	switch {
	case command != nil:
		c.Command = command
	case !continued:
		c.Input = inputOf(m)
	}
	rec, err := h.d.Runs.Create(ctx, c)
	if err != nil {
		return taskRuns{}, h.serviceError(ctx, "a2a.send", err)
	}
	if head == nil {
		head = &rec
	}
	return taskRuns{head: *head, last: rec}, nil
}

// continuation is the command that continues a task waiting for input on thread: the answer
// to its pending interrupts (the message's data, else its text); nil, a run without input,
// for a graph paused at a static breakpoint (interrupt_before / interrupt_after), which has
// no interrupt to answer and goes on where it stopped.
func (h *Handlers) continuation(ctx context.Context, thread string, m *Message) (map[string]any, *RPCError) {
	snap, err := h.d.States.State(ctx, graph.Ref{ThreadID: thread}, false)
	if err != nil {
		return nil, h.serviceError(ctx, "a2a.send", err)
	}
	if snap != nil && len(pendingInterrupts(snap)) > 0 {
		return map[string]any{"resume": resumeValue(m.Parts)}, nil
	}
	return nil, nil
}

// pendingInterrupts are the interrupt values a snapshot waits on: its own, else those of its
// tasks (an interrupt raised in a subgraph).
func pendingInterrupts(snap *graph.Snapshot) []graph.InterruptValue {
	if len(snap.Interrupts) > 0 {
		return snap.Interrupts
	}
	var out []graph.InterruptValue
	for _, t := range snap.Tasks {
		out = append(out, t.Interrupts...)
	}
	return out
}

// pausedAt names the nodes a graph paused at a static breakpoint runs next, a subgraph's as
// "subgraph/node".
func pausedAt(snap *graph.Snapshot) []string {
	var out []string
	for _, t := range snap.Tasks {
		if t.SubState != nil && len(t.SubState.Tasks) > 0 {
			for _, inner := range pausedAt(t.SubState) {
				out = append(out, t.Name+"/"+inner)
			}
			continue
		}
		out = append(out, t.Name)
	}
	if len(out) == 0 {
		out = append(out, snap.Next...)
	}
	return out
}

// commandOf is the command a send carries ({"resume": ...}, {"update": ...}, {"goto": ...}), in
// the params' metadata or the message's, as LangGraph's A2A endpoint takes it; nil when none.
func commandOf(p sendParams) (map[string]any, []Problem) {
	for _, src := range []struct {
		meta map[string]any
		loc  []any
	}{{p.Metadata, []any{"params", "metadata", "command"}}, {messageMeta(p.Message), []any{"params", "message", "metadata", "command"}}} {
		v, ok := src.meta["command"]
		if !ok || v == nil {
			continue
		}
		cmd, ok := v.(map[string]any)
		if !ok || len(cmd) == 0 {
			return nil, []Problem{{Loc: src.loc, Msg: `command must be an object such as {"resume": ...}`}}
		}
		for k := range cmd {
			if k != "resume" && k != "update" && k != "goto" {
				return nil, []Problem{{Loc: append(src.loc, k), Msg: `a command has only "resume", "update" and "goto"`}}
			}
		}
		return cmd, nil
	}
	return nil, nil
}

// messageMeta is the metadata of m, nil when there is no message.
func messageMeta(m *Message) map[string]any {
	if m == nil {
		return nil
	}
	return m.Metadata
}

// checkModes refuses what the endpoint cannot take or give: file parts (LangGraph's A2A takes
// text and data only), push notifications, and output modes without text or JSON.
func checkModes(m *Message, cfg *sendConfiguration) *RPCError {
	for _, p := range m.Parts {
		if p.Kind == KindFile {
			return &RPCError{Code: CodeContentTypeNotSupport, Message: "Incompatible content types: file parts are not supported; send text or data parts"}
		}
	}
	if cfg == nil {
		return nil
	}
	if len(cfg.PushNotificationConfig) > 0 && string(cfg.PushNotificationConfig) != "null" {
		return &RPCError{Code: CodePushNotSupported, Message: "Push notifications are not supported: read the task with its get method or stream it"}
	}
	if len(cfg.AcceptedOutputModes) == 0 {
		return nil
	}
	for _, mode := range cfg.AcceptedOutputModes {
		mode = strings.ToLower(strings.TrimSpace(mode))
		if mode == "*/*" || mode == "text/*" || mode == "application/*" || mode == "text" || mode == "data" ||
			mode == "text/plain" || mode == "application/json" {
			return nil
		}
	}
	return &RPCError{Code: CodeContentTypeNotSupport, Message: "Incompatible content types: this agent answers text/plain and application/json"}
}

// textOf joins the text parts of parts.
func textOf(parts []Part) string {
	var texts []string
	for _, p := range parts {
		if p.Kind == KindText {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// dataOf merges the data parts of parts (later keys win); nil when there are none.
func dataOf(parts []Part) map[string]any {
	var data map[string]any
	for _, p := range parts {
		if p.Kind == KindData {
			if data == nil {
				data = map[string]any{}
			}
			for k, v := range p.Data {
				data[k] = v
			}
		}
	}
	return data
}

// inputOf is the graph input a message makes, as LangGraph builds it: the fields of its data
// parts, and its text as one message of the messages list, whose id is the message's.
func inputOf(m *Message) map[string]any {
	in := map[string]any{}
	for k, v := range dataOf(m.Parts) {
		in[k] = v
	}
	if text := textOf(m.Parts); text != "" {
		role := "user"
		if m.Role == RoleAgent {
			role = "assistant"
		}
		in["messages"] = []any{map[string]any{"role": role, "content": text, "id": m.MessageID}}
	}
	return in
}

// resumeValue is the answer to an interrupt a message gives: its data, or else its text.
func resumeValue(parts []Part) any {
	if data := dataOf(parts); data != nil {
		return data
	}
	return textOf(parts)
}

// stateOf is the task state of a run.
func stateOf(rec engine.RunRecord) TaskState {
	switch rec.Status {
	case engine.RunPending:
		return StateSubmitted
	case engine.RunRunning:
		return StateWorking
	case engine.RunSuccess:
		return StateCompleted
	case engine.RunInterrupted:
		// A cancelled run that had started records the cancellation; one cancelled while
		// pending never started. A graph's interrupt is neither.
		if rec.Cancel != "" || rec.StartedAt.IsZero() {
			return StateCanceled
		}
		return StateInputRequired
	}
	return StateFailed
}

// taskOptions say what a task's answer holds.
type taskOptions struct {
	history   *int // nil: the whole history of the task; 0: none
	artifacts bool
}

// task is the A2A task of runs tr: its state (its latest run's), its status message and
// artifacts from the thread's messages (what the task answered after the message it began
// with) or what it waits for, and its history.
func (h *Handlers) task(ctx context.Context, tr taskRuns, o taskOptions) (Task, error) {
	rec := tr.last
	state := stateOf(rec)
	t := Task{Kind: KindTask, ID: taskIDOf(tr.head), ContextID: rec.ThreadID,
		Status:   TaskStatus{State: state, Timestamp: timestamp(rec.UpdatedAt)},
		Metadata: map[string]any{"assistant_id": rec.AssistantID}}
	if state == StateFailed {
		text := "The run failed"
		if rec.Error != nil {
			text = Sanitize(rec.Error.Class + ": " + rec.Error.Message)
		}
		t.Status.Message = h.agentMessage(t, rec, "status", []Part{{Kind: KindText, Text: text}})
	}
	if state == StateSubmitted || state == StateWorking || state == StateCanceled && o.history != nil && *o.history == 0 {
		return t, nil
	}
	snap, err := h.d.States.State(ctx, graph.Ref{ThreadID: rec.ThreadID}, false)
	if err != nil {
		if engine.Is(engine.NotFound, err) {
			return t, nil // the thread was deleted: the run's record is all there is
		}
		return Task{}, err
	}
	if snap == nil {
		return t, nil
	}
	msgs, start := spanOf(snap.Values, tr.head)
	switch state {
	case StateCompleted:
		if parts := answerParts(snap.Values, msgs, start); len(parts) > 0 {
			t.Status.Message = h.agentMessage(t, rec, "response", parts)
			if o.artifacts {
				t.Artifacts = []Artifact{{ArtifactID: rec.RunID + "-response", Name: artifactResponse, Parts: parts}}
			}
		}
	case StateInputRequired:
		parts := interruptParts(pendingInterrupts(snap))
		if len(parts) == 0 {
			if parts, err = h.breakpointParts(ctx, rec); err != nil {
				return Task{}, err
			}
		}
		t.Status.Message = h.agentMessage(t, rec, "interrupt", parts)
		if o.artifacts {
			t.Artifacts = []Artifact{interruptArtifact(rec, parts)}
		}
	}
	t.History = historyOf(t, msgs, start, o.history)
	return t, nil
}

// breakpointParts say what a graph paused at a static breakpoint waits for: a message on the
// task to go on, and where it goes on (the subgraphs' own snapshots name the inner node).
func (h *Handlers) breakpointParts(ctx context.Context, rec engine.RunRecord) ([]Part, error) {
	snap, err := h.d.States.State(ctx, graph.Ref{ThreadID: rec.ThreadID}, true)
	if err != nil && !engine.Is(engine.NotFound, err) {
		return nil, err
	}
	var next []string
	if snap != nil {
		next = pausedAt(snap)
	}
	text := "The graph paused at a breakpoint"
	if len(next) > 0 {
		text += " before " + strings.Join(next, ", ")
	}
	text += ": send a message on this task to continue"
	nodes := make([]any, len(next))
	for i, n := range next {
		nodes[i] = n
	}
	return []Part{{Kind: KindText, Text: text, Metadata: map[string]any{"breakpoint": true, "next": nodes}}}, nil
}

// interruptArtifact is the artifact of a task's interrupt.
func interruptArtifact(rec engine.RunRecord, parts []Part) Artifact {
	return Artifact{ArtifactID: rec.RunID + "-interrupt", Name: artifactInterrupt,
		Description: "The graph is waiting for input: answer with a message on this task", Parts: parts}
}

// timestamp is t in RFC 3339, "" for the zero time.
func timestamp(t engine.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// agentMessage is a message of the agent about task t, from its run rec.
func (h *Handlers) agentMessage(t Task, rec engine.RunRecord, what string, parts []Part) *Message {
	return &Message{Kind: KindMessage, MessageID: rec.RunID + "-" + what, Role: RoleAgent, Parts: parts,
		ContextID: t.ContextID, TaskID: t.ID}
}

// spanOf returns the thread's messages and where the task's own begin: at the message its A2A
// message put on the thread; -1 when that message is not there (a resume, a command, a graph
// without messages).
func spanOf(values graph.State, rec engine.RunRecord) ([]engine.Message, int) {
	msgs := messagesOf(values["messages"])
	id, _ := rec.Metadata[metaMessageID].(string)
	for i, m := range msgs {
		if id != "" && m.ID == id {
			return msgs, i
		}
	}
	return msgs, -1
}

// messagesOf is a messages channel's value as messages: the runner keeps them typed, a state
// read back from the log as JSON.
func messagesOf(v any) []engine.Message {
	switch list := v.(type) {
	case nil:
		return nil
	case []engine.Message:
		return list
	case []any:
		msgs := make([]engine.Message, 0, len(list))
		for _, v := range list {
			if m, err := engine.CoerceMessage(v); err == nil {
				msgs = append(msgs, m)
			}
		}
		return msgs
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var list []any
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	return messagesOf(list)
}

// end is where the task's span ends: before the next human message after start.
func end(msgs []engine.Message, start int) int {
	for i := start + 1; i < len(msgs); i++ {
		if msgs[i].Type == engine.MessageHuman {
			return i
		}
	}
	return len(msgs)
}

// answerParts is what a completed task answered: the text of the last AI message of its span
// (of the thread when it has none: a resume), or, for a graph without messages, its values as
// a data part.
func answerParts(values graph.State, msgs []engine.Message, start int) []Part {
	if _, has := values["messages"]; !has {
		if len(values) == 0 {
			return nil
		}
		return []Part{{Kind: KindData, Data: engine.MaskMap(map[string]any(values))}}
	}
	from, to := start+1, end(msgs, start)
	if start < 0 {
		from, to = 0, len(msgs)
	}
	for i := to - 1; i >= from; i-- {
		if msgs[i].Type == engine.MessageAI {
			return contentParts(msgs[i].Content)
		}
	}
	return nil
}

// contentParts are the A2A parts of a message's content: a string, or LangChain's blocks.
func contentParts(content any) []Part {
	switch c := content.(type) {
	case string:
		if c == "" {
			return nil
		}
		return []Part{{Kind: KindText, Text: c}}
	case []any:
		var parts []Part
		for _, b := range c {
			block, ok := b.(map[string]any)
			if !ok {
				continue
			}
			if text, ok := block["text"].(string); ok && text != "" {
				parts = append(parts, Part{Kind: KindText, Text: text})
			} else {
				parts = append(parts, Part{Kind: KindData, Data: block})
			}
		}
		return parts
	}
	return nil
}

// interruptParts describe the pending interrupts: a text part for a string value, a data part
// otherwise.
func interruptParts(interrupts []graph.InterruptValue) []Part {
	var parts []Part
	for _, in := range interrupts {
		if s, ok := in.Value.(string); ok {
			parts = append(parts, Part{Kind: KindText, Text: s, Metadata: map[string]any{"interrupt_id": in.ID}})
			continue
		}
		parts = append(parts, Part{Kind: KindData, Data: map[string]any{"value": in.Value}, Metadata: map[string]any{"interrupt_id": in.ID}})
	}
	return parts
}

// historyOf is the task's messages as A2A messages (human: user, AI: agent; others left
// out), the last n of them when n is set.
func historyOf(t Task, msgs []engine.Message, start int, n *int) []Message {
	if start < 0 || (n != nil && *n == 0) {
		return nil
	}
	var out []Message
	for _, m := range msgs[start:end(msgs, start)] {
		role := RoleUser
		switch m.Type {
		case engine.MessageHuman:
		case engine.MessageAI:
			role = RoleAgent
		default:
			continue
		}
		parts := contentParts(m.Content)
		if len(parts) == 0 {
			continue
		}
		out = append(out, Message{Kind: KindMessage, MessageID: m.ID, Role: role, Parts: parts,
			ContextID: t.ContextID, TaskID: t.ID})
	}
	if n != nil && len(out) > *n {
		out = out[len(out)-*n:]
	}
	return out
}
