package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
)

// DefaultRecursionLimit is the number of steps a run may take when its config sets none.
const DefaultRecursionLimit = 25

// RunOptions say what to run and where to keep it.
type RunOptions struct {
	ThreadID string
	// Input starts a new run on the thread (a map of state keys). Nil with no Command continues
	// from the latest checkpoint (after an interrupt, or to run what is next).
	Input   any
	Command *Command
	// CheckpointID runs from that checkpoint instead of the latest (time travel; a new branch).
	CheckpointID    string
	Config          Config
	Context         map[string]any
	InterruptBefore []string // added to the compiled ones; "*" is every node
	InterruptAfter  []string
	Saver           Saver
	Store           Store
	Sink            Sink
	// Metadata is copied into every checkpoint's metadata (run id, user, graph, ...).
	Metadata map[string]any
	// StreamModes are the API stream modes the run is streamed in: a graph hosted in another
	// process asks its library for only the events they need. nil: every mode.
	StreamModes []engine.StreamMode
	// Durability is the run's durability ("" for the default): a graph hosted in another
	// process hands it to its library, which then puts the checkpoints that mode keeps. Go
	// graphs get theirs from Saver.
	Durability engine.Durability

	ns      []string          // subgraph path, for runs of subgraphs
	parents map[string]string // parent namespaces' checkpoint ids
}

// Result is how a run ended.
type Result struct {
	// Values is every channel of the state, as the values stream mode gives it (and so the
	// API's /wait and join answers).
	Values State
	// Output is the output schema's keys of Values: what an in-process invoke returns (a
	// subgraph node's update to its parent). It is Values itself when the graph does not
	// narrow its output keys: neither is to be modified.
	Output      State
	Interrupted bool
	Interrupts  []InterruptValue
	Checkpoint  Ref
}

// loop is one run in progress.
type loop struct {
	g        *Graph
	o        *RunOptions
	ch       map[string]Channel
	versions map[string]int64
	seen     map[string]map[string]int64
	step     int
	ref      Ref            // the current (last saved) checkpoint
	parent   *Ref           // its parent
	meta     map[string]any // its metadata
	pending  []PendingWrite
	ns       string
	limit    int
	// snaps caches each channel's last snapshot with the version it was taken at, so a
	// checkpoint re-encodes only the channels that changed.
	snaps map[string]snap
}

type snap struct {
	version int64
	raw     json.RawMessage
	ok      bool
}

// Run executes the graph until it finishes, is interrupted or fails.
func (g *Graph) Run(ctx context.Context, o RunOptions) (Result, error) {
	if o.Saver == nil {
		o.Saver = NewMemorySaver()
	}
	l := &loop{g: g, o: &o, ns: strings.Join(o.ns, "|"), limit: o.Config.RecursionLimit}
	if l.limit <= 0 {
		l.limit = DefaultRecursionLimit
	}
	if err := l.load(ctx); err != nil {
		return Result{}, err
	}
	resuming := o.Input == nil
	if o.Input != nil {
		if err := l.input(ctx, o.Input); err != nil {
			return Result{}, err
		}
	} else if err := l.resumeFrom(ctx); err != nil {
		return Result{}, err
	}
	start := l.step
	skipBefore := resuming
	for {
		tasks, err := l.prepare()
		if err != nil {
			return Result{}, err
		}
		if len(tasks) == 0 {
			return l.result(false, nil), nil
		}
		if l.step+1 > start+l.limit {
			return Result{}, recursionError(l.limit)
		}
		if !skipBefore && l.matches(tasks, g.interruptBefore, o.InterruptBefore) {
			return l.result(true, nil), nil
		}
		skipBefore = false
		interrupts, err := l.execute(ctx, tasks)
		if err != nil {
			return Result{}, err
		}
		if interrupts != nil {
			return l.result(true, interrupts), nil
		}
		if l.matches(tasks, g.interruptAfter, o.InterruptAfter) {
			if next, err := l.prepare(); err == nil && len(next) > 0 {
				return l.result(true, nil), nil
			}
		}
	}
}

func (l *loop) result(interrupted bool, interrupts []InterruptValue) Result {
	values := l.values(l.g.keys)
	output := values // the output keys are the state keys unless the graph narrows them
	if len(l.g.output) != len(l.g.keys) || (len(l.g.keys) > 0 && &l.g.output[0] != &l.g.keys[0]) {
		output = l.values(l.g.output)
	}
	return Result{Values: values, Output: output, Interrupted: interrupted, Interrupts: interrupts, Checkpoint: l.ref}
}

// resumeFrom starts a run that continues from the loaded checkpoint (no input: after an
// interrupt, a time travel, a takeover, or with a Command), as LangGraph's loop does: a Command
// with an update or a goto and no resume value is saved as an "input" checkpoint of its own;
// otherwise (resume values, and any update that comes with them, are applied to the channels)
// the run first emits the state it resumes from and, to the checkpoints modes, its checkpoint.
func (l *loop) resumeFrom(ctx context.Context) error {
	c := l.o.Command
	if c != nil {
		if err := l.command(ctx, c); err != nil {
			return err
		}
		if c.Resume == nil && (len(c.Update) > 0 || c.Goto != nil) {
			if err := l.save(ctx, "input", nil); err != nil {
				return err
			}
			l.emit(KindValues, l.values(l.g.keys))
			return nil
		}
	}
	if l.ref.ID == "" {
		return nil // nothing to resume from
	}
	l.emit(KindValues, l.values(l.g.keys))
	l.emit(KindCheckpoint, CheckpointSaved{Checkpoint: l.ref, Metadata: l.meta, Parent: l.parent})
	return nil
}

// newChannels makes a fresh channel for every state key and the runtime's own channels.
func (g *Graph) newChannels() map[string]Channel {
	ch := make(map[string]Channel, len(g.channels)+len(g.order)+2)
	for k, s := range g.channels {
		ch[k] = s.New()
	}
	ch[Start] = &ephemeral{}
	for _, n := range g.order {
		ch[trigger(n)] = &ephemeral{}
	}
	ch[tasksKey] = &topic{}
	return ch
}

// load restores the channels from the checkpoint the run starts at.
func (l *loop) load(ctx context.Context) error {
	l.ch, l.versions, l.seen, l.step = l.g.newChannels(), map[string]int64{}, map[string]map[string]int64{}, -2
	l.ref = Ref{ThreadID: l.o.ThreadID, NS: l.ns, ID: l.o.CheckpointID}
	t, err := l.o.Saver.Get(ctx, l.ref)
	if err != nil {
		return fmt.Errorf("graph: load checkpoint: %w", err)
	}
	if t == nil {
		if l.o.CheckpointID != "" {
			return engine.E(engine.Op("graph.run"), engine.NotFound, fmt.Sprintf("Checkpoint %s not found", l.o.CheckpointID))
		}
		l.ref.ID = ""
		return nil
	}
	if err := restore(l.ch, t.Checkpoint); err != nil {
		return err
	}
	l.ref, l.parent, l.pending, l.meta = t.Ref, t.Parent, t.Writes, t.Metadata
	l.versions = maps.Clone(t.Checkpoint.ChannelVersions)
	l.seen = t.Checkpoint.VersionsSeen
	if l.seen == nil {
		l.seen = map[string]map[string]int64{}
	}
	if s, ok := t.Metadata["step"].(float64); ok {
		l.step = int(s)
	} else if s, ok := t.Metadata["step"].(int); ok {
		l.step = s
	}
	if l.o.CheckpointID != "" {
		// Running from an older checkpoint starts a new branch: its pending writes stay with it.
		l.pending = nil
	}
	return nil
}

func restore(ch map[string]Channel, cp Checkpoint) error {
	for k, raw := range cp.ChannelValues {
		c, ok := ch[k]
		if !ok {
			continue // a channel the graph no longer has
		}
		if err := c.Restore(raw); err != nil {
			return fmt.Errorf("graph: restore channel %s: %w", k, err)
		}
	}
	return nil
}

// input saves the input checkpoint: the input written to the start channel.
func (l *loop) input(ctx context.Context, input any) error {
	if _, ok := input.(map[string]any); !ok {
		if st, ok := input.(State); ok {
			input = map[string]any(st)
		} else {
			return engine.E(engine.Op("graph.run"), engine.Invalid, fmt.Sprintf("Input must be an object of state keys, not %T", input))
		}
	}
	if err := l.apply([]write{{Start, input}}); err != nil {
		return err
	}
	l.pending = nil
	return l.save(ctx, "input", map[string]any{Start: input})
}

// values returns the state keys that have values.
func (l *loop) values(keys []string) State {
	s := make(State, len(keys))
	for _, k := range keys {
		if v, ok := l.ch[k].Get(); ok {
			s[k] = v
		}
	}
	return s
}

// save writes a checkpoint of the channels as they are now, one step after the current one.
func (l *loop) save(ctx context.Context, source string, writes map[string]any) error {
	cp, err := l.snapshot()
	if err != nil {
		return err
	}
	l.step++
	md := make(map[string]any, len(l.o.Metadata)+4)
	maps.Copy(md, l.o.Metadata)
	md["source"], md["step"], md["parents"] = source, l.step, orEmptyMap(l.o.parents)
	if len(writes) == 0 {
		md["writes"] = nil
	} else {
		md["writes"] = writes
	}
	var parent *Ref
	if l.ref.ID != "" {
		p := l.ref
		parent = &p
	}
	ref := Ref{ThreadID: l.o.ThreadID, NS: l.ns, ID: cp.ID}
	if err := l.o.Saver.Put(ctx, ref, cp, md, parent); err != nil {
		return fmt.Errorf("graph: save checkpoint: %w", err)
	}
	l.ref, l.parent, l.pending, l.meta = ref, parent, nil, md
	l.emit(KindCheckpoint, CheckpointSaved{Checkpoint: ref, Metadata: md, Parent: parent})
	return nil
}

func orEmptyMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// snapshot encodes the channels for a checkpoint, reusing the encoding of unchanged ones.
func (l *loop) snapshot() (Checkpoint, error) {
	cp := Checkpoint{
		V: 1, ID: newCheckpointID(), TS: time.Now().UTC(),
		ChannelValues: make(map[string]json.RawMessage, len(l.ch)), ChannelVersions: maps.Clone(l.versions),
		VersionsSeen: l.seen,
	}
	if l.snaps == nil {
		l.snaps = make(map[string]snap, len(l.ch))
	}
	for k, c := range l.ch {
		s, cached := l.snaps[k]
		if !cached || s.version != l.versions[k] {
			raw, ok, err := c.Snapshot()
			if err != nil {
				return cp, fmt.Errorf("graph: snapshot channel %s: %w", k, err)
			}
			s = snap{version: l.versions[k], raw: raw, ok: ok}
			l.snaps[k] = s
		}
		if s.ok {
			cp.ChannelValues[k] = s.raw
		}
	}
	return cp, nil
}

var idMu sync.Mutex

// newCheckpointID returns a time-ordered UUID (v7): sorting ids orders checkpoints by creation.
func newCheckpointID() string {
	idMu.Lock()
	defer idMu.Unlock()
	return uuid.Must(uuid.NewV7()).String()
}

// write is a value for a channel.
type write struct {
	channel string
	value   any
}

// apply folds writes into the channels: each channel gets its writes in order, channels without
// writes are told a step passed (edge triggers and the input expire), and changed channels get a
// new version.
func (l *loop) apply(writes []write) error {
	by := map[string][]any{}
	for _, w := range writes {
		if _, ok := l.ch[w.channel]; !ok {
			return &InvalidUpdateError{Msg: fmt.Sprintf("Invalid update for channel %s: no such key in the graph's state", w.channel)}
		}
		by[w.channel] = append(by[w.channel], w.value)
	}
	for k, c := range l.ch {
		changed, err := c.Update(by[k])
		if err != nil {
			var iu *InvalidUpdateError
			if e, ok := err.(*InvalidUpdateError); ok {
				iu = &InvalidUpdateError{Msg: strings.Replace(e.Msg, "At key:", "At key '"+k+"':", 1)}
				return iu
			}
			return &InvalidUpdateError{Msg: fmt.Sprintf("At key '%s': %v", k, err)}
		}
		if changed {
			l.versions[k]++
		}
	}
	return nil
}

func (l *loop) emit(kind Kind, data any) {
	if l.o.Sink != nil {
		l.o.Sink(Event{Kind: kind, NS: l.o.ns, Data: data})
	}
}

// matches reports whether any task's node is named in one of the interrupt lists.
func (l *loop) matches(tasks []*task, lists ...[]string) bool {
	for _, t := range tasks {
		if t.name == Start {
			continue
		}
		for _, list := range lists {
			if slices.Contains(list, "*") || slices.Contains(list, t.name) {
				return true
			}
		}
	}
	return false
}

// safeCall runs a node, turning a panic into a NodeError.
func safeCall(ctx context.Context, n *node, input any, rt *Runtime) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &NodeError{Class: "Panic", Message: fmt.Sprint(r), Node: n.name}
		}
	}()
	return n.fn(ctx, input, rt)
}
