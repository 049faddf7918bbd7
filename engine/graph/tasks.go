package graph

import (
	"context"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
)

// task is one node's execution in a step.
type task struct {
	id       string
	name     string
	node     *node // nil for the start task
	input    any
	step     int
	triggers []string
	path     []any

	resume []any // resume values for its interrupts, in call order

	// results
	writes     []write
	update     any // what the node returned, for checkpoint metadata and the updates stream
	interrupts []InterruptValue
	interrupt  bool
	err        error
	done       bool // finished in an earlier attempt of this step: writes come from pending writes
}

// doneKey marks, in pending writes, a task that finished; its value is the task's update.
const doneKey = "__done__"

var taskNamespace = uuid.MustParse("4c8f5a56-8e52-4c3b-9d55-3f7f0e1a9b21")

// taskID is a task's deterministic id: uuid.NewSHA1(taskNamespace, "<checkpoint>|<step>|<ns>|
// <name>|<path>"), hashed from a buffer on the stack, since every step of every run names its
// tasks. The ids must stay what they were: a resumed step finds its tasks' writes by them.
func taskID(checkpointID string, step int, ns, name string, path string) string {
	var space [256]byte
	b := append(space[:0], taskNamespace[:]...)
	b = append(append(b, checkpointID...), '|')
	b = append(strconv.AppendInt(b, int64(step), 10), '|')
	b = append(append(b, ns...), '|')
	b = append(append(b, name...), '|')
	b = append(b, path...)
	sum := sha1.Sum(b)
	var id uuid.UUID
	copy(id[:], sum[:])
	id[6] = (id[6] & 0x0f) | 0x50 // version 5 (name-based, SHA-1)
	id[8] = (id[8] & 0x3f) | 0x80 // RFC 4122 variant
	return id.String()
}

// prepare returns the tasks of the next step: nodes whose trigger channel has a value, then the
// Sends waiting in the tasks channel.
func (l *loop) prepare() ([]*task, error) {
	return l.g.prepareTasks(l.ch, l.ref.ID, l.step+1, l.ns)
}

func (g *Graph) prepareTasks(ch map[string]Channel, checkpointID string, step int, ns string) ([]*task, error) {
	var tasks []*task
	state := func() State {
		s := make(State, len(g.keys))
		for _, k := range g.keys {
			if v, ok := ch[k].Get(); ok {
				s[k] = v
			}
		}
		return s
	}
	for i := -1; i < len(g.order); i++ { // the start task, then the nodes in order
		name := Start
		if i >= 0 {
			name = g.order[i]
		}
		trig := trigger(name)
		v, ok := ch[trig].Get()
		if !ok {
			continue
		}
		t := &task{name: name, node: g.nodes[name], step: step, triggers: []string{trig},
			path: []any{"__pregel_pull", name}, id: taskID(checkpointID, step, ns, name, "pull")}
		if name == Start {
			t.input = v
		} else {
			t.input = state()
		}
		tasks = append(tasks, t)
	}
	if v, ok := ch[tasksKey].Get(); ok {
		for i, s := range v.([]Send) {
			n, ok := g.nodes[s.Node]
			if !ok {
				return nil, &InvalidUpdateError{Msg: fmt.Sprintf("Send to unknown node %q", s.Node)}
			}
			tasks = append(tasks, &task{name: s.Node, node: n, step: step, input: s.Arg,
				triggers: []string{tasksKey}, path: []any{"__pregel_push", i},
				id: taskID(checkpointID, step, ns, s.Node, "push"+strconv.Itoa(i))})
		}
	}
	return tasks, nil
}

// execute runs a step's tasks concurrently, then either applies their writes and saves a
// checkpoint, or saves what finished as pending writes and reports the interrupts or the error.
func (l *loop) execute(ctx context.Context, tasks []*task) ([]InterruptValue, error) {
	l.restorePending(tasks)
	pending := 0
	for _, t := range tasks {
		if !t.done {
			pending++
		}
	}
	var wg sync.WaitGroup
	for _, t := range tasks {
		switch {
		case t.done:
		case pending == 1:
			// A lone task runs on the loop's goroutine: a new one would grow its stack again
			// for every step of every run (issue 28: about 1% of the server's CPU).
			l.runTask(ctx, t)
		default:
			wg.Go(func() { l.runTask(ctx, t) })
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	var interrupts []InterruptValue
	var failed error
	interrupted := false
	for _, t := range tasks {
		switch {
		case t.interrupt:
			interrupted = true
			interrupts = append(interrupts, t.interrupts...)
		case t.err != nil && failed == nil:
			failed = t.err
		}
	}
	if interrupted || failed != nil {
		if err := l.savePending(ctx, tasks); err != nil {
			return nil, err
		}
		if failed != nil {
			return nil, failed
		}
		if interrupts == nil {
			interrupts = []InterruptValue{}
		}
		return interrupts, nil
	}

	var writes []write
	meta := map[string]any{}
	for _, t := range tasks {
		writes = append(writes, t.writes...)
		if t.name != Start {
			meta[t.name] = t.update
		}
		if l.seen[t.name] == nil {
			l.seen[t.name] = map[string]int64{}
		}
		for _, trig := range t.triggers {
			l.seen[t.name][trig] = l.versions[trig]
		}
	}
	if err := l.apply(writes); err != nil {
		return nil, err
	}
	if err := l.save(ctx, "loop", meta); err != nil {
		return nil, err
	}
	for _, t := range tasks {
		if t.name != Start {
			l.emit(KindUpdates, NodeUpdate{Node: t.name, Values: t.update})
		}
	}
	// A step that wrote no state key shows no new values, as LangGraph's loop emits values only
	// for writes to the channels it streams (a run whose input is {} starts with none).
	if slices.ContainsFunc(writes, func(w write) bool { return slices.Contains(l.g.keys, w.channel) }) {
		l.emit(KindValues, l.values(l.g.keys))
	}
	return nil, nil
}

// run executes one task and records its writes, interrupt or error on it.
func (l *loop) run(ctx context.Context, t *task) {
	var out any
	var err error
	switch {
	case t.name == Start:
		out = l.startUpdate(t.input)
	case t.node.sub != nil:
		out, err = l.runSubgraph(ctx, t)
	default:
		rt := &Runtime{Config: l.o.Config, Context: l.o.Context, Store: l.o.Store, ThreadID: l.o.ThreadID,
			task: t, sink: l.o.Sink, ns: l.o.ns}
		out, err = safeCall(ctx, t.node, t.input, rt)
	}
	var ie *interruptError
	if errors.As(err, &ie) {
		t.interrupt, t.interrupts = true, ie.interrupts
		return
	}
	if err != nil {
		var ne *NodeError
		if errors.As(err, &ne) && ne.Node == "" {
			ne.Node = t.name
		}
		t.err = l.failed(t, err)
		return
	}
	t.update, t.writes, err = l.g.writesFor(ctx, l, t.name, out)
	if err != nil {
		t.err = l.failed(t, err)
	}
}

// startUpdate is the input, restricted to the graph's input keys.
func (l *loop) startUpdate(input any) any {
	m, _ := input.(map[string]any)
	out := make(map[string]any, len(m))
	for k, v := range m {
		for _, key := range l.g.input {
			if k == key {
				out[k] = v
			}
		}
	}
	return out
}

// writesFor turns what a node returned into channel writes, adding the edges out of the node.
// update is what the checkpoint metadata and the updates stream show for the node.
func (g *Graph) writesFor(ctx context.Context, l *loop, name string, out any) (update any, writes []write, err error) {
	var gotos []any
	switch v := out.(type) {
	case nil:
	case State:
		update, writes = map[string]any(v), stateWrites(v)
	case map[string]any:
		update, writes = v, stateWrites(v)
	case Command:
		update, writes, gotos = v.Update, stateWrites(v.Update), flatten(v.Goto)
	case *Command:
		update, writes, gotos = v.Update, stateWrites(v.Update), flatten(v.Goto)
	default:
		return nil, nil, &InvalidUpdateError{Msg: fmt.Sprintf("Expected dict, got %T", out)}
	}
	for _, w := range writes {
		if _, ok := g.channels[w.channel]; !ok {
			return nil, nil, &InvalidUpdateError{Msg: fmt.Sprintf("Invalid update for channel %s: no such key in the graph's state", w.channel)}
		}
	}
	for _, to := range g.edges[name] {
		if to != End {
			writes = append(writes, write{trigger(to), nil})
		}
	}
	if len(g.branches[name]) > 0 {
		state, err := l.localState(writes)
		if err != nil {
			return nil, nil, err
		}
		rt := &Runtime{Config: l.o.Config, Context: l.o.Context, Store: l.o.Store, ThreadID: l.o.ThreadID, sink: l.o.Sink, ns: l.o.ns}
		for _, br := range g.branches[name] {
			dest, err := br.route(ctx, state, rt)
			if err != nil {
				return nil, nil, err
			}
			gotos = append(gotos, flatten(dest)...)
		}
	}
	for _, d := range gotos {
		w, err := g.gotoWrite(d)
		if err != nil {
			return nil, nil, err
		}
		if w != nil {
			writes = append(writes, *w)
		}
	}
	return update, writes, nil
}

func stateWrites(m map[string]any) []write {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	ws := make([]write, len(keys))
	for i, k := range keys {
		ws[i] = write{k, m[k]}
	}
	return ws
}

// flatten turns a route's answer into a list of destinations.
func flatten(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	case []Send:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	}
	return []any{v}
}

func (g *Graph) gotoWrite(d any) (*write, error) {
	switch x := d.(type) {
	case string:
		if x == End {
			return nil, nil
		}
		if !g.HasNode(x) {
			return nil, engine.E(engine.Op("graph.goto"), engine.Invalid, fmt.Sprintf("Node %s does not exist", x))
		}
		return &write{trigger(x), nil}, nil
	case Send:
		if !g.HasNode(x.Node) {
			return nil, engine.E(engine.Op("graph.send"), engine.Invalid, fmt.Sprintf("Node %s does not exist", x.Node))
		}
		return &write{tasksKey, x}, nil
	case *Send:
		return g.gotoWrite(*x)
	case map[string]any: // a Send as JSON: {"node": ..., "arg": ...}
		n, _ := x["node"].(string)
		return g.gotoWrite(Send{Node: n, Arg: x["arg"]})
	}
	return nil, &InvalidUpdateError{Msg: fmt.Sprintf("Invalid destination %v (%T)", d, d)}
}

// localState is the state as a node's own writes leave it, for its conditional edges.
func (l *loop) localState(writes []write) (State, error) {
	s := l.values(l.g.keys)
	by := map[string][]any{}
	for _, w := range writes {
		if _, ok := l.g.channels[w.channel]; ok {
			by[w.channel] = append(by[w.channel], w.value)
		}
	}
	for k, ws := range by {
		c, err := copyChannel(l.g.channels[k], l.ch[k])
		if err != nil {
			return nil, err
		}
		if _, err := c.Update(ws); err != nil {
			return nil, err
		}
		v, _ := c.Get()
		s[k] = v
	}
	return s, nil
}

// copyChannel returns an independent copy of c (made by spec).
func copyChannel(spec Spec, c Channel) (Channel, error) {
	if cl, ok := c.(cloner); ok {
		return cl.clone(), nil
	}
	d := spec.New()
	raw, ok, err := c.Snapshot()
	if err != nil || !ok {
		return d, err
	}
	return d, d.Restore(raw)
}

// runSubgraph runs a subgraph node in its own namespace. A subgraph that already has a checkpoint
// there is being resumed; otherwise it starts from the parent's state.
func (l *loop) runSubgraph(ctx context.Context, t *task) (any, error) {
	sub := t.node.sub
	o := RunOptions{
		ThreadID: l.o.ThreadID, Config: l.o.Config, Context: l.o.Context, Saver: l.o.Saver, Store: l.o.Store,
		Sink: l.o.Sink, Metadata: l.o.Metadata,
		ns:      append(append([]string(nil), l.o.ns...), t.name+":"+t.id),
		parents: maps.Clone(orEmptyMap(l.o.parents)),
	}
	o.parents[l.ns] = l.ref.ID
	existing, err := l.o.Saver.Get(ctx, Ref{ThreadID: l.o.ThreadID, NS: joinNS(o.ns)})
	if err != nil {
		return nil, err
	}
	if existing == nil {
		in, _ := t.input.(State)
		o.Input = filterKeys(in, sub.input)
	} else if len(t.resume) > 0 {
		o.Command = &Command{Resume: t.resume[len(t.resume)-1]}
	}
	res, err := sub.Run(ctx, o)
	if err != nil {
		return nil, err
	}
	if res.Interrupted {
		return nil, &interruptError{interrupts: res.Interrupts}
	}
	return filterKeys(res.Output, l.g.keys), nil
}

func filterKeys(s State, keys []string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := s[k]; ok {
			out[k] = v
		}
	}
	return out
}

func joinNS(ns []string) string {
	out := ""
	for i, p := range ns {
		if i > 0 {
			out += "|"
		}
		out += p
	}
	return out
}

// restorePending marks the tasks that finished in an earlier attempt of this step and gives
// interrupted tasks their resume values.
func (l *loop) restorePending(tasks []*task) {
	byTask := map[string][]PendingWrite{}
	for _, w := range l.pending {
		byTask[w.TaskID] = append(byTask[w.TaskID], w)
	}
	for _, t := range tasks {
		for _, w := range byTask[t.id] {
			switch w.Channel {
			case doneKey:
				t.done = true
				_ = json.Unmarshal(w.Value, &t.update)
			case resumeKey:
				_ = json.Unmarshal(w.Value, &t.resume)
			case Interrupt, errorKey:
			default:
				t.writes = append(t.writes, write{w.Channel, decodeWrite(w.Channel, w.Value)})
			}
		}
		if !t.done {
			t.writes = nil
		}
	}
}

func decodeWrite(channel string, raw json.RawMessage) any {
	if channel == tasksKey {
		var s Send
		_ = json.Unmarshal(raw, &s)
		return s
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}

// savePending stores what an interrupted or failed step leaves: the writes of finished tasks,
// and the interrupts and errors of the others.
func (l *loop) savePending(ctx context.Context, tasks []*task) error {
	var ws []PendingWrite
	add := func(taskID, channel string, v any) error {
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		ws = append(ws, PendingWrite{TaskID: taskID, Channel: channel, Value: raw})
		return nil
	}
	for _, t := range tasks {
		var err error
		switch {
		case t.done:
			continue
		case t.interrupt:
			err = add(t.id, Interrupt, t.interrupts)
		case t.err != nil:
			class, msg := ClassOf(t.err)
			err = add(t.id, errorKey, map[string]any{"error": class, "message": msg})
		default:
			for _, w := range t.writes {
				if err = add(t.id, w.channel, w.value); err != nil {
					break
				}
			}
			if err == nil {
				err = add(t.id, doneKey, t.update)
			}
		}
		if err != nil {
			return fmt.Errorf("graph: pending writes: %w", err)
		}
	}
	if l.ref.ID == "" || len(ws) == 0 {
		return nil
	}
	l.pending = MergeWrites(l.pending, ws)
	return l.o.Saver.PutWrites(ctx, l.ref, ws)
}

// command applies a Command given as a run's input: resume values for pending interrupts, and an
// update and goto applied before the next step.
func (l *loop) command(ctx context.Context, c *Command) error {
	if c.Resume != nil {
		if err := l.resume(ctx, c.Resume); err != nil {
			return err
		}
	}
	var writes []write
	writes = append(writes, stateWrites(c.Update)...)
	for _, d := range flatten(c.Goto) {
		w, err := l.g.gotoWrite(d)
		if err != nil {
			return err
		}
		if w != nil {
			writes = append(writes, *w)
		}
	}
	if len(writes) == 0 {
		return nil
	}
	// Applied to the channels now, not as a step of their own: the next step sees them.
	by := map[string][]any{}
	for _, w := range writes {
		if _, ok := l.ch[w.channel]; !ok {
			return engine.E(engine.Op("graph.command"), engine.Invalid, fmt.Sprintf("Invalid update for channel %s", w.channel))
		}
		by[w.channel] = append(by[w.channel], w.value)
	}
	for k, ws := range by {
		if changed, err := l.ch[k].Update(ws); err != nil {
			return err
		} else if changed {
			l.versions[k]++
		}
	}
	return nil
}

// resume records resume values for the interrupted tasks of the current checkpoint. value is a
// map of interrupt id to value, or one value for every pending interrupt; it is dropped after a
// static interrupt, which has no value to receive it.
func (l *loop) resume(ctx context.Context, value any) error {
	type pendingInterrupt struct {
		taskID string
		ids    []string
	}
	var pend []*pendingInterrupt
	resumes := map[string][]any{}
	for _, w := range l.pending {
		switch w.Channel {
		case Interrupt:
			var ivs []InterruptValue
			_ = json.Unmarshal(w.Value, &ivs)
			p := &pendingInterrupt{taskID: w.TaskID}
			for _, iv := range ivs {
				p.ids = append(p.ids, iv.ID)
			}
			pend = append(pend, p)
		case resumeKey:
			var rs []any
			_ = json.Unmarshal(w.Value, &rs)
			resumes[w.TaskID] = rs
		}
	}
	if len(pend) == 0 {
		// A thread stopped by a static interrupt (interrupt_before/after) has tasks to run and
		// no interrupt to answer: as in LangGraph, the resume value is dropped and the run
		// continues as one without input does.
		if next, err := l.prepare(); err == nil && len(next) > 0 {
			return nil
		}
		return engine.E(engine.Op("graph.resume"), engine.Invalid, "Cannot resume: the thread has no pending interrupt")
	}
	byID, isMap := value.(map[string]any)
	if isMap {
		matched := false
		for _, p := range pend {
			for _, id := range p.ids {
				if _, ok := byID[id]; ok {
					matched = true
				}
			}
		}
		isMap = matched
	}
	var ws []PendingWrite
	for _, p := range pend {
		rs := resumes[p.taskID]
		if isMap {
			found := false
			for _, id := range p.ids {
				if v, ok := byID[id]; ok {
					rs, found = append(rs, v), true
				}
			}
			if !found {
				continue
			}
		} else {
			rs = append(rs, value)
		}
		raw, err := json.Marshal(rs)
		if err != nil {
			return err
		}
		ws = append(ws, PendingWrite{TaskID: p.taskID, Channel: resumeKey, Value: raw})
	}
	l.pending = MergeWrites(l.pending, ws)
	return l.o.Saver.PutWrites(ctx, l.ref, ws)
}

// runTask runs t between its task_start and task_result events.
func (l *loop) runTask(ctx context.Context, t *task) {
	l.emit(KindTaskStart, TaskStart{ID: t.id, Name: t.name, Input: t.input, Triggers: t.triggers, Interrupts: []InterruptValue{}})
	l.run(ctx, t)
	if t.interrupt {
		return
	}
	res := TaskResult{ID: t.id, Name: t.name, Result: t.update, Interrupts: []InterruptValue{}}
	if t.err != nil {
		class, msg := ClassOf(t.err)
		res.Error = &TaskError{Error: class, Message: msg}
	}
	l.emit(KindTaskResult, res)
}
