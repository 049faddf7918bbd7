package streaming

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"sync"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/jsoncount"
)

// The wire form of an output message: five lines, then the event's data as JSON. Only the data
// is JSON to parse, and only when a mode needs to look inside it: what an event holds is its
// kind, on its own line.
//
//	jg1
//	<kind: a graph.Kind (values, updates, messages, task_start, task_result, checkpoints, custom,
//	 trace/tool_start, trace/tool_end), or the run's own: metadata, error, end>
//	<subgraph namespace as a JSON list of "node:task_id", empty for the root graph>
//	<the message id of a "messages" chunk as a JSON string, else empty>
//	<the run's RunInfo as JSON on "metadata" messages, else empty>
//	<data>
//
// Kinds are only ever added: a reader skips a kind it does not know. Records written before the
// task kinds existed name both a task's start and its result "tasks" (legacyTasks).
const wireVersion = "jg1"

// The kinds of the events a run's streamer adds around its graph's events.
const (
	// KindMetadata starts an attempt of the run: {run_id, attempt}, with the run's RunInfo.
	KindMetadata graph.Kind = "metadata"
	// KindError: {error, message}, why the run failed or an event of it could not be streamed.
	KindError graph.Kind = "error"
	// KindEnd ends the run's stream (data null).
	KindEnd graph.Kind = "end"
)

// RunInfo is what a "metadata" message tells readers about its run besides {run_id, attempt}:
// enough to shape derived events (events, messages) and to filter a thread stream by each
// run's own modes.
type RunInfo struct {
	ThreadID    string              `json:"thread_id"`
	AssistantID string              `json:"assistant_id"`
	GraphID     string              `json:"graph_id,omitempty"`
	StreamMode  []engine.StreamMode `json:"stream_mode"`
	Input       any                 `json:"input,omitempty"`
	Metadata    map[string]any      `json:"metadata,omitempty"`
}

// attemptData is the data of a "metadata" message: {attempt, run_id}, in the order clients
// have always been sent (a map's, sorted).
type attemptData struct {
	Attempt int    `json:"attempt"`
	RunID   string `json:"run_id"`
}

// ackWait bounds how long End waits for the acknowledgement of a run's last message.
const ackWait = 5 * time.Second

// runPub publishes the output of one executing run attempt.
type runPub struct {
	s       *Streamer
	ctx     context.Context // the worker's: it carries the tenant
	rec     engine.RunRecord
	subject string
	tags    []string // the run config's tags, for the metadata of model chunks
	// full: the run's modes want checkpoints in their history-entry shape (values, next,
	// tasks), which costs a state read per checkpoint.
	full bool
	// carried are the graph events the run's modes are shaped from (nil: all of them); the
	// others are not published.
	carried map[graph.Kind]bool

	q *sender

	mu  sync.Mutex // guards the encoder and its buffer
	buf bytes.Buffer
	enc *json.Encoder
}

// Begin is runs.Streamer.Begin: it publishes the attempt's "metadata" message and returns the
// sink that publishes the run's graph events.
func (s *Streamer) Begin(ctx context.Context, rec engine.RunRecord) graph.Sink {
	p := s.newPub(ctx, rec)
	s.mu.Lock()
	s.runs[rec.RunID] = p
	s.mu.Unlock()
	info := &RunInfo{ThreadID: rec.ThreadID, AssistantID: rec.AssistantID, GraphID: rec.Kwargs.GraphID(),
		StreamMode: rec.Kwargs.StreamMode, Input: rec.Kwargs.Input, Metadata: rec.Metadata}
	p.publish(KindMetadata, nil, attemptData{RunID: rec.RunID, Attempt: max(rec.Attempt, 1)}, info)
	return p.sink
}

// Flush is runs.Streamer.Flush: it waits until the run's events published so far are stored.
func (s *Streamer) Flush(_ context.Context, rec engine.RunRecord) {
	s.mu.Lock()
	p := s.runs[rec.RunID]
	s.mu.Unlock()
	if p != nil {
		p.flush()
	}
}

// End is runs.Streamer.End: it publishes what the run's end adds (the interrupts of an
// interrupted run, the error of a failed one) and "end". It does not wait for them to be
// stored: a follower that learns of the run's end before its "end" message waits for it
// (EndGrace), and Wait drains what is still being sent at shutdown.
func (s *Streamer) End(ctx context.Context, rec engine.RunRecord, fin engine.RunFinishedData) {
	s.mu.Lock()
	p := s.runs[rec.RunID]
	delete(s.runs, rec.RunID)
	s.mu.Unlock()
	if p == nil {
		p = s.newPub(ctx, rec)
	}
	if fin.Status == engine.RunInterrupted && !s.cancelled(ctx, rec) {
		p.interrupts(ctx)
	}
	if fin.Error != nil {
		p.publish(KindError, nil, errorData(fin.Error), nil)
	}
	p.publish(KindEnd, nil, nil, nil)
	if p.s.bus != nil {
		p.q.hurry() // stored in the background: Wait drains it at shutdown
	}
}

func (s *Streamer) newPub(ctx context.Context, rec engine.RunRecord) *runPub {
	p := &runPub{s: s, ctx: context.WithoutCancel(ctx), rec: rec, subject: Subject(tenantOf(ctx), rec.ThreadID, rec.RunID)}
	p.q = newSender(s, p.subject, rec.RunID)
	p.full = rec.Kwargs.Streams(engine.StreamCheckpoints, engine.StreamDebug)
	p.carried = carriedEvents(rec.Kwargs.StreamMode)
	p.tags = []string{}
	if t := engine.StringList(rec.Kwargs.Config["tags"]); t != nil {
		p.tags = t
	}
	p.enc = json.NewEncoder(&p.buf)
	p.enc.SetEscapeHTML(false)
	return p
}

// cancelled reports whether the run ended because a client cancelled it, or was rolled back
// (deleted): then its end says nothing of interrupts.
func (s *Streamer) cancelled(ctx context.Context, rec engine.RunRecord) bool {
	if rec.Cancel != "" {
		return true // the worker that ended it says so, whatever the projection shows yet
	}
	if s.cfg.Runs == nil {
		return false
	}
	cur, ok, err := s.cfg.Runs.Get(tenantOf(ctx), rec.ThreadID, rec.RunID)
	return err == nil && (!ok || cur.Cancel != "")
}

// carriedEvents returns the graph events the Shaper needs to shape a run's stream modes (nil:
// every event). As in LangGraph, a run streams in the modes it was created with, and a client
// joining it can have those or fewer: what no mode of the run needs is not published.
func carriedEvents(modes []engine.StreamMode) map[graph.Kind]bool {
	carried := map[graph.Kind]bool{}
	for _, m := range modes {
		switch m {
		case engine.StreamValues, engine.StreamUpdates, engine.StreamCheckpoints, engine.StreamCustom:
			carried[graph.Kind(m)] = true
		case engine.StreamTasks:
			carried[graph.KindTaskStart], carried[graph.KindTaskResult] = true, true
		case engine.StreamDebug:
			carried[graph.KindTaskStart], carried[graph.KindTaskResult], carried[graph.KindCheckpoint] = true, true, true
		case engine.StreamTools:
			// The tool calls of the react template (the thread protocol's tools channel).
			carried[graphs.TraceToolStart], carried[graphs.TraceToolEnd] = true, true
		case engine.StreamMessages, engine.StreamMessagesTuple:
			// Chunks, the messages of states and updates (not to repeat them), and the task and
			// step of each message's metadata.
			for _, e := range []graph.Kind{graph.KindMessages, graph.KindValues, graph.KindUpdates,
				graph.KindTaskStart, graph.KindTaskResult, graph.KindCheckpoint} {
				carried[e] = true
			}
		case engine.StreamEvents:
			return nil
		}
	}
	return carried
}

// sink publishes one graph event.
func (p *runPub) sink(e graph.Event) {
	if p.carried != nil && !p.carried[e.Kind] {
		return
	}
	data := e.Data
	switch d := e.Data.(type) {
	case graph.CheckpointSaved:
		data = p.checkpoint(d)
	case graph.MessageChunk:
		// Clients index the metadata's tags; the runtime leaves them out.
		if d.Metadata != nil && d.Metadata["tags"] == nil {
			d.Metadata["tags"] = p.tags
		}
	}
	p.publish(e.Kind, e.NS, data, nil)
}

// checkpoint shapes a checkpoints event ({checkpoint, metadata, parent}) as a history entry with
// the checkpoint's and its parent's config (the SDKs' checkpoint payload): read back in full
// when the run's modes want it, otherwise with what the event says.
func (p *runPub) checkpoint(cp graph.CheckpointSaved) any {
	ref, parent, md := cp.Checkpoint, cp.Parent, cp.Metadata
	var out map[string]any
	if p.full && p.s.cfg.Runner != nil && ref.ID != "" {
		if snap, err := p.s.cfg.Runner.State(p.ctx, ref, false); err == nil && snap != nil {
			out = CheckpointJSON(ref.ThreadID, snap)
		}
	}
	if out == nil {
		out = CheckpointJSON(ref.ThreadID, &graph.Snapshot{Values: graph.State{}, Next: []string{}, Metadata: md, Ref: ref,
			Parent: parent, CreatedAt: time.Now()})
	}
	out["config"], out["parent_config"] = configJSON(&ref), configJSON(parent)
	return out
}

// configJSON is the config that names checkpoint r ({"configurable": {thread_id, checkpoint_ns,
// checkpoint_id}}), nil for none.
func configJSON(r *graph.Ref) any {
	if r == nil || r.ID == "" {
		return nil
	}
	return map[string]any{"configurable": map[string]any{"thread_id": r.ThreadID, "checkpoint_ns": r.NS, "checkpoint_id": r.ID}}
}

// interrupts publishes what an interrupted run stopped on: a task result for each interrupted
// task, {"__interrupt__": [...]} as an update, and the state with "__interrupt__" as values.
func (p *runPub) interrupts(ctx context.Context) {
	if p.s.cfg.Runner == nil {
		return
	}
	snap, err := p.s.cfg.Runner.State(ctx, graph.Ref{ThreadID: p.rec.ThreadID}, false)
	if err != nil || snap == nil {
		return
	}
	ivs := snap.Interrupts
	if ivs == nil {
		ivs = []graph.InterruptValue{}
	}
	for _, t := range snap.Tasks {
		if len(t.Interrupts) > 0 {
			p.publish(graph.KindTaskResult, nil, graph.TaskResult{ID: t.ID, Name: t.Name, Interrupts: t.Interrupts}, nil)
		}
	}
	p.publish(graph.KindUpdates, nil, graph.NodeUpdate{Node: graph.Interrupt, Values: ivs}, nil)
	values := maps.Clone(map[string]any(snap.Values))
	if values == nil {
		values = map[string]any{}
	}
	values[graph.Interrupt] = ivs
	p.publish(graph.KindValues, nil, values, nil)
}

// publish sends one event, in order after the previous ones of the run (see sender). An event
// too large for a message is stored apart and sent by reference (see storeLarge); one that
// cannot be encoded is replaced by an "error" event saying so.
func (p *runPub) publish(event graph.Kind, ns []string, data any, run *RunInfo) {
	if p.s.bus == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf.Reset()
	p.buf.WriteString(wireVersion + "\n" + string(event) + "\n")
	if len(ns) > 0 {
		_ = p.encode(ns)
	}
	p.buf.WriteByte('\n')
	if id := chunkID(data); id != "" {
		_ = p.encode(id)
	}
	p.buf.WriteByte('\n')
	if run != nil {
		if err := p.encode(run); err != nil {
			p.s.log.Warn("streaming: run info not encodable; sent without it", "run_id", p.rec.RunID, "err", err)
		}
	}
	p.buf.WriteByte('\n')
	if err := p.encode(data); err != nil {
		p.s.log.Warn("streaming: event not encodable; the stream says so", "run_id", p.rec.RunID, "event", event, "err", err)
		p.q.add(lostRecord(event, "it could not be encoded: "+err.Error()))
		return
	}
	var body []byte
	if p.s.bus.Oversized(p.buf.Bytes()) {
		// Handed over rather than copied, and the buffer is not kept at this size.
		body = p.storeLarge(event, p.buf.Bytes())
		p.buf = bytes.Buffer{}
	} else {
		body = bytes.Clone(p.buf.Bytes())
		if p.buf.Cap() > maxKeptBuffer {
			p.buf = bytes.Buffer{} // one large event does not keep a large buffer for the run
		}
	}
	p.q.add(body)
}

// maxKeptBuffer is the largest encoding buffer a run's publisher keeps between events.
const maxKeptBuffer = 1 << 20

// chunkID is the message id of a messages event's chunk, "" for any other data.
func chunkID(data any) string {
	switch c := data.(type) {
	case graph.MessageChunk:
		return c.Chunk.ID
	case graph.EncodedMessageChunk:
		return c.ID
	}
	return ""
}

// encode appends v's JSON to the buffer, without the encoder's trailing newline.
func (p *runPub) encode(v any) error {
	jsoncount.Encoded()
	if err := p.enc.Encode(v); err != nil {
		return err
	}
	p.buf.Truncate(p.buf.Len() - 1)
	return nil
}

// flush waits until the run's messages published so far are stored (or ackWait passes).
func (p *runPub) flush() {
	if p.s.bus != nil {
		p.q.flush()
	}
}

// Patterns of what an error message sent to clients must not reveal.
var (
	secretURL  = regexp.MustCompile(`(?i)\b(postgres(ql)?|mysql|mongodb(\+srv)?|rediss?|nats|amqps?|tls|tcp)://[^\s'"]+`)
	userinfoRE = regexp.MustCompile(`://[^\s/@'"]+@`)
)

// Sanitize removes connection strings and credentials from an error message before it is sent
// to a client.
func Sanitize(msg string) string {
	msg = secretURL.ReplaceAllString(msg, "<redacted>")
	return userinfoRE.ReplaceAllString(msg, "://<redacted>@")
}

// CheckpointJSON shapes a snapshot as a thread-history entry, the shape of the checkpoints
// stream mode and of debug checkpoint payloads (httpapi's thread state has the same shape).
func CheckpointJSON(threadID string, s *graph.Snapshot) map[string]any {
	ref := func(r *graph.Ref) any {
		if r == nil {
			return nil
		}
		var id any
		if r.ID != "" {
			id = r.ID
		}
		return map[string]any{"thread_id": threadID, "checkpoint_ns": r.NS, "checkpoint_id": id, "checkpoint_map": nil}
	}
	tasks := make([]any, len(s.Tasks))
	for i, t := range s.Tasks {
		var checkpoint any
		if t.State != nil {
			checkpoint = TaskCheckpointJSON(t.State)
		}
		tasks[i] = map[string]any{"id": t.ID, "name": t.Name, "path": t.Path, "error": t.Error,
			"interrupts": orEmptyList(t.Interrupts), "checkpoint": checkpoint, "state": nil, "result": t.Result}
	}
	var parentID, created any
	if s.Parent != nil {
		parentID = s.Parent.ID
	}
	if !s.CreatedAt.IsZero() {
		created = engine.At(s.CreatedAt)
	}
	next := s.Next
	if next == nil {
		next = []string{}
	}
	return map[string]any{
		"values": s.Values, "next": next, "tasks": tasks, "metadata": s.Metadata,
		"created_at": created, "checkpoint": ref(&s.Ref), "parent_checkpoint": ref(s.Parent),
		"interrupts": orEmptyList(s.Interrupts), "checkpoint_id": s.Ref.ID, "parent_checkpoint_id": parentID,
	}
}

// TaskCheckpointJSON is the checkpoint a subgraph task of a thread state names: its thread and
// namespace, and the ids that are set, as LangGraph gives it ({checkpoint_ns, thread_id}).
func TaskCheckpointJSON(r *graph.Ref) map[string]any {
	m := map[string]any{"thread_id": r.ThreadID, "checkpoint_ns": r.NS}
	if r.ID != "" {
		m["checkpoint_id"] = r.ID
	}
	return m
}

func orEmptyList(l []graph.InterruptValue) []graph.InterruptValue {
	if l == nil {
		return []graph.InterruptValue{}
	}
	return l
}

// errorData is the data of the error event that ends a failed run's stream.
func errorData(e *engine.RunError) map[string]any {
	return map[string]any{"error": e.Class, "message": Sanitize(e.Message)}
}
