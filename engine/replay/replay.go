// Package replay reads a thread's event log back as what happened, super-step by super-step:
// the runs, their attempts (which process ran them), and for every checkpoint the nodes that
// wrote, their writes, the state diff against the parent checkpoint, what runs next, the model
// calls (model, tokens) and tool calls (arguments, results) found in the writes, interrupts and
// errors. It is pure: it folds events it is handed (from the log, a server or an export file),
// so `jetgraph replay` shows a run the same way wherever its events come from.
package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Thread is a thread's log as runs and steps.
type Thread struct {
	ThreadID string `json:"thread_id"`
	Runs     []*Run `json:"runs"`
	// Updates are the checkpoints no run wrote (state updates, forks' first steps).
	Updates []Step `json:"updates,omitempty"`
}

// Run is one run of the thread, in the order runs were created.
type Run struct {
	RunID       string           `json:"run_id"`
	AssistantID string           `json:"assistant_id"`
	GraphID     string           `json:"graph_id,omitempty"`
	Status      string           `json:"status"`
	Error       *engine.RunError `json:"error,omitempty"`
	Input       any              `json:"input,omitempty"`
	Resume      any              `json:"resume,omitempty"` // Command.resume: the run resumed an interrupt
	// Config and Context are the run's, as it was created: a re-execution runs with them.
	Config     map[string]any `json:"config,omitempty"`
	Context    map[string]any `json:"context,omitempty"`
	CreatedAt  time.Time      `json:"created_at"`
	FinishedAt *time.Time     `json:"finished_at,omitempty"`
	Attempts   []Attempt      `json:"attempts"`
	Steps      []Step         `json:"steps"`
	// Trace is whether the run's trace was joined (TraceJoined), missing (TraceAbsent), or not
	// looked up ("": an export file).
	Trace string `json:"trace,omitempty"`
}

// Attempt is one start of a run: the first, or a takeover after its process died.
type Attempt struct {
	N      int       `json:"attempt"`
	Worker string    `json:"worker"` // the process
	At     time.Time `json:"at"`
	// Checkpoint is where the thread stood when the attempt began.
	Checkpoint string `json:"checkpoint,omitempty"`
}

// Step is one checkpoint: a super-step of a run (or a state update).
type Step struct {
	Step         int            `json:"step"`
	Source       string         `json:"source"` // input, loop, update, fork
	NS           string         `json:"ns,omitempty"`
	CheckpointID string         `json:"checkpoint_id"`
	Parent       string         `json:"parent_checkpoint_id,omitempty"`
	At           time.Time      `json:"at"`
	DurationMS   float64        `json:"duration_ms"` // since the parent checkpoint
	Attempt      int            `json:"attempt,omitempty"`
	Worker       string         `json:"worker,omitempty"`
	Nodes        []string       `json:"nodes"`
	Writes       map[string]any `json:"writes,omitempty"`
	Diff         []Change       `json:"diff"`
	Next         []string       `json:"next"`
	ModelCalls   []ModelCall    `json:"model_calls,omitempty"`
	ToolCalls    []ToolCall     `json:"tool_calls,omitempty"`
	Interrupts   []any          `json:"interrupts,omitempty"`
	Errors       []any          `json:"errors,omitempty"`
}

// Change is the change of one channel from the parent checkpoint.
type Change struct {
	Channel string `json:"channel"`
	// Op is added, removed, appended (New holds the items added at the end) or changed.
	Op  string `json:"op"`
	Old any    `json:"old,omitempty"`
	New any    `json:"new,omitempty"`
}

// Change ops.
const (
	OpAdded    = "added"
	OpRemoved  = "removed"
	OpAppended = "appended"
	OpChanged  = "changed"
)

// ModelCall is an AI message a node wrote: the model's answer, with its usage.
type ModelCall struct {
	Node         string            `json:"node"`
	Model        string            `json:"model,omitempty"`
	Provider     string            `json:"provider,omitempty"`
	FinishReason string            `json:"finish_reason,omitempty"`
	InputTokens  int               `json:"input_tokens"`
	OutputTokens int               `json:"output_tokens"`
	Content      any               `json:"content"`
	ToolCalls    []engine.ToolCall `json:"tool_calls,omitempty"`
	// LatencyMS, FirstTokenMS and Cost (USD) come from the run's trace (JoinTraces): nil when
	// not traced, or not recorded (no first token time, no price for the model).
	LatencyMS    *float64 `json:"latency_ms,omitempty"`
	FirstTokenMS *float64 `json:"first_token_ms,omitempty"`
	Cost         *float64 `json:"cost,omitempty"`
}

// ToolCall is a tool message a node wrote, with the call it answers.
type ToolCall struct {
	Node   string         `json:"node"`
	Name   string         `json:"name"`
	ID     string         `json:"id"`
	Args   map[string]any `json:"args,omitempty"`
	Result any            `json:"result"`
	Status string         `json:"status,omitempty"`
}

// checkpointMeta is what a step reads of a checkpoint's metadata.
type checkpointMeta struct {
	Step   int                        `json:"step"`
	Source string                     `json:"source"`
	RunID  string                     `json:"run_id"`
	Writes map[string]json.RawMessage `json:"writes"`
}

// reader folds events into a Thread.
type reader struct {
	t      *Thread
	runs   map[string]*Run
	states map[string]map[string]json.RawMessage // by checkpoint id: channel values
	times  map[string]time.Time
	steps  map[string]*Step // by checkpoint id, for the writes events that follow
	calls  map[string]engine.ToolCall
}

// Read folds a thread's events (in log order) into its runs and steps.
func Read(threadID string, events []eventlog.Event) (*Thread, error) {
	r := &reader{t: &Thread{ThreadID: threadID, Runs: []*Run{}}, runs: map[string]*Run{},
		states: map[string]map[string]json.RawMessage{},
		times:  map[string]time.Time{}, steps: map[string]*Step{}, calls: map[string]engine.ToolCall{}}
	for _, e := range events {
		e, err := eventlog.Upcasts.Upcast(e)
		if err != nil {
			return nil, err
		}
		if err := r.apply(e); err != nil {
			return nil, fmt.Errorf("replay: event %s (%s): %w", e.ID, e.Type, err)
		}
	}
	return r.t, nil
}

func (r *reader) apply(e eventlog.Event) error {
	switch e.Type {
	case engine.RunCreatedEvent:
		var d engine.RunCreatedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		run := &Run{RunID: d.Run.RunID, AssistantID: d.Run.AssistantID, Status: string(d.Run.Status),
			CreatedAt: e.Time, Attempts: []Attempt{}, Steps: []Step{}}
		kw := d.Run.Kwargs
		run.Input, run.Resume, run.GraphID = kw.Input, kw.Command["resume"], kw.GraphID()
		run.Config, run.Context = kw.Config, kw.Context
		r.runs[run.RunID] = run
		r.t.Runs = append(r.t.Runs, run)
	case engine.RunStartedEvent:
		var d engine.RunStartedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		if run := r.runs[d.RunID]; run != nil {
			run.Status = engine.RunRunning
			run.Attempts = append(run.Attempts, Attempt{N: d.Attempt, Worker: d.Worker, At: e.Time, Checkpoint: d.Checkpoint})
		}
	case engine.RunFinishedEvent:
		var d engine.RunFinishedData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		if run := r.runs[d.RunID]; run != nil {
			at := e.Time
			run.Status, run.Error, run.FinishedAt = d.Status, d.Error, &at
		}
	case engine.ThreadCheckpoint:
		var d engine.CheckpointData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		return r.checkpoint(d)
	case engine.ThreadWrites:
		var d engine.WritesData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		r.writes(d)
	}
	return nil
}

func (r *reader) checkpoint(d engine.CheckpointData) error {
	var md checkpointMeta
	if err := json.Unmarshal(d.Metadata, &md); err != nil {
		return err
	}
	id := d.Checkpoint.ID
	var parent string
	if d.Parent != nil {
		parent = d.Parent.ID
	}
	old := r.states[parent]
	state := map[string]json.RawMessage{}
	if !d.Full {
		for k, v := range old {
			state[k] = v
		}
	}
	for ch, b := range d.Blobs {
		switch {
		case b.Ref != "":
			state[ch], _ = json.Marshal("<" + b.Ref + ">") // in the object store
		case b.Value != nil:
			state[ch] = b.Value
		default:
			delete(state, ch)
		}
	}
	r.states[id], r.times[id] = state, d.Checkpoint.TS
	s := Step{Step: md.Step, Source: md.Source, NS: d.NS, CheckpointID: id, Parent: parent,
		At: d.Checkpoint.TS, Nodes: []string{}, Diff: diff(old, state), Next: []string{}}
	if t, ok := r.times[parent]; ok && parent != "" {
		s.DurationMS = float64(d.Checkpoint.TS.Sub(t).Microseconds()) / 1000
	}
	for ch := range state { // a branch channel holding a value triggers its node next
		if node, ok := strings.CutPrefix(ch, "branch:to:"); ok {
			s.Next = append(s.Next, node)
		}
	}
	slices.Sort(s.Next)
	if len(md.Writes) > 0 {
		s.Writes = map[string]any{}
	}
	for node, raw := range md.Writes {
		s.Nodes = append(s.Nodes, node)
		var v any
		_ = json.Unmarshal(raw, &v)
		s.Writes[node] = v
	}
	slices.Sort(s.Nodes)
	for _, node := range s.Nodes {
		r.calls1(&s, node, md.Writes[node])
	}
	run := r.runs[md.RunID]
	if run == nil {
		r.t.Updates = append(r.t.Updates, s)
		r.steps[id] = &r.t.Updates[len(r.t.Updates)-1]
		return nil
	}
	if n := len(run.Attempts); n > 0 {
		s.Attempt, s.Worker = run.Attempts[n-1].N, run.Attempts[n-1].Worker
	}
	run.Steps = append(run.Steps, s)
	r.steps[id] = &run.Steps[len(run.Steps)-1]
	return nil
}

// calls1 finds the model and tool calls in a node's writes: AI messages and tool messages.
func (r *reader) calls1(s *Step, node string, raw json.RawMessage) {
	var w struct {
		Messages json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(raw, &w) != nil || w.Messages == nil {
		return
	}
	for _, m := range parseMessages(w.Messages) {
		switch m.Type {
		case engine.MessageAI:
			c := ModelCall{Node: node, Content: m.Content, ToolCalls: m.ToolCalls}
			c.Model, _ = m.ResponseMetadata["model_name"].(string)
			c.Provider, _ = m.ResponseMetadata["model_provider"].(string)
			c.FinishReason, _ = m.ResponseMetadata["finish_reason"].(string)
			if u := m.UsageMetadata; u != nil {
				c.InputTokens, c.OutputTokens = u.InputTokens, u.OutputTokens
			}
			for _, tc := range m.ToolCalls {
				r.calls[tc.ID] = tc
			}
			s.ModelCalls = append(s.ModelCalls, c)
		case engine.MessageTool:
			tc := ToolCall{Node: node, ID: m.ToolCallID, Result: m.Content, Status: m.Status}
			if m.Name != nil {
				tc.Name = *m.Name
			}
			if call, ok := r.calls[m.ToolCallID]; ok {
				tc.Name, tc.Args = call.Name, call.Args
			}
			s.ToolCalls = append(s.ToolCalls, tc)
		}
	}
}

// writes records the interrupts and errors among the pending writes on a checkpoint: what the
// next step left when it stopped.
func (r *reader) writes(d engine.WritesData) {
	s := r.steps[d.CheckpointID]
	if s == nil {
		return
	}
	for _, w := range d.Writes {
		var v any
		_ = json.Unmarshal(w.Value, &v)
		switch w.Channel {
		case "__interrupt__":
			s.Interrupts = append(s.Interrupts, v)
		case "__error__":
			s.Errors = append(s.Errors, v)
		}
	}
}

// internal reports whether a channel is the runtime's own (triggers, branches), not state.
func internal(ch string) bool {
	return strings.HasPrefix(ch, "__") || strings.HasPrefix(ch, "branch:")
}

// diff lists the state channels that differ between old and new, in channel order.
func diff(old, new map[string]json.RawMessage) []Change {
	var out []Change
	chans := map[string]bool{}
	for ch := range old {
		chans[ch] = true
	}
	for ch := range new {
		chans[ch] = true
	}
	for _, ch := range slices.Sorted(func(yield func(string) bool) {
		for ch := range chans {
			if !yield(ch) {
				return
			}
		}
	}) {
		if internal(ch) {
			continue
		}
		o, inOld := old[ch]
		n, inNew := new[ch]
		switch {
		case !inOld:
			out = append(out, Change{Channel: ch, Op: OpAdded, New: decode(n)})
		case !inNew:
			out = append(out, Change{Channel: ch, Op: OpRemoved, Old: decode(o)})
		case bytes.Equal(o, n):
		default:
			if added, ok := appended(o, n); ok {
				out = append(out, Change{Channel: ch, Op: OpAppended, New: added})
			} else {
				out = append(out, Change{Channel: ch, Op: OpChanged, Old: decode(o), New: decode(n)})
			}
		}
	}
	if out == nil {
		out = []Change{}
	}
	return out
}

// appended returns the items n adds at the end of o when both are lists and o is n's prefix.
func appended(o, n json.RawMessage) ([]any, bool) {
	// A message list grows by a few items a step: when n's text starts with o's without its
	// closing bracket, only the tail is decoded (a long thread is not parsed twice a step).
	o, n = bytes.TrimSpace(o), bytes.TrimSpace(n)
	if len(o) >= 2 && o[0] == '[' && o[len(o)-1] == ']' && len(n) > len(o) && bytes.HasPrefix(n, o[:len(o)-1]) {
		tail := n[len(o)-1:]
		if len(o) == 2 || tail[0] == ',' {
			var added []any
			if json.Unmarshal(append([]byte{'['}, bytes.TrimPrefix(tail, []byte{','})...), &added) == nil {
				return added, true
			}
		}
	}
	var a, b []json.RawMessage
	if json.Unmarshal(o, &a) != nil || json.Unmarshal(n, &b) != nil || len(b) < len(a) {
		return nil, false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return nil, false
		}
	}
	added := make([]any, 0, len(b)-len(a))
	for _, x := range b[len(a):] {
		added = append(added, decode(x))
	}
	return added, true
}

func decode(raw json.RawMessage) any {
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}
