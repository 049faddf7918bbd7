package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

// Snapshot is a thread's state at a checkpoint, in the shape of the API's thread state.
type Snapshot struct {
	Values     State            `json:"values"`
	Next       []string         `json:"next"`
	Tasks      []TaskInfo       `json:"tasks"`
	Metadata   map[string]any   `json:"metadata"`
	CreatedAt  time.Time        `json:"created_at"`
	Ref        Ref              `json:"checkpoint"`
	Parent     *Ref             `json:"parent_checkpoint"`
	Interrupts []InterruptValue `json:"interrupts"`
}

// TaskInfo is a task waiting at a checkpoint: what the next step will run.
type TaskInfo struct {
	ID         string           `json:"id"`
	Name       string           `json:"name"`
	Path       []any            `json:"path"`
	Error      any              `json:"error"`
	Interrupts []InterruptValue `json:"interrupts"`
	// State names the subgraph's checkpoint namespace for a subgraph task.
	State *Ref `json:"checkpoint"`
	// SubState is the subgraph's own snapshot, when asked for.
	SubState *Snapshot `json:"state"`
	Result   any       `json:"result"`
}

// ForNS returns the graph that runs in namespace ns ("" is g itself; "node:task|node:task" are
// nested subgraphs).
func (g *Graph) ForNS(ns string) (*Graph, error) {
	cur := g
	if ns == "" {
		return cur, nil
	}
	for _, part := range strings.Split(ns, "|") {
		name, _, _ := strings.Cut(part, ":")
		n, ok := cur.nodes[name]
		if !ok || n.sub == nil {
			return nil, engine.E(engine.Op("graph.state"), engine.NotFound, fmt.Sprintf("Subgraph %s not found", name))
		}
		cur = n.sub
	}
	return cur, nil
}

// State returns the snapshot at ref (the newest of its namespace when ref.ID is ""). With
// subgraphs, waiting subgraph tasks carry their own snapshots. It returns nil when the thread
// has no checkpoint.
func (g *Graph) State(ctx context.Context, saver Saver, ref Ref, subgraphs bool) (*Snapshot, error) {
	sg, err := g.ForNS(ref.NS)
	if err != nil {
		return nil, err
	}
	t, err := saver.Get(ctx, ref)
	if err != nil {
		return nil, err
	}
	if t == nil {
		if ref.ID != "" {
			return nil, engine.E(engine.Op("graph.state"), engine.NotFound, fmt.Sprintf("Checkpoint %s not found", ref.ID))
		}
		return nil, nil
	}
	return sg.snapshot(ctx, saver, t, subgraphs)
}

// History returns the snapshots of ref's namespace, newest first.
func (g *Graph) History(ctx context.Context, saver Saver, ref Ref, opts ListOptions) ([]Snapshot, error) {
	sg, err := g.ForNS(ref.NS)
	if err != nil {
		return nil, err
	}
	ts, err := saver.List(ctx, ref, opts)
	if err != nil {
		return nil, err
	}
	out := make([]Snapshot, 0, len(ts))
	for i := range ts {
		s, err := sg.snapshot(ctx, saver, &ts[i], false)
		if err != nil {
			return nil, err
		}
		out = append(out, *s)
	}
	return out, nil
}

func (g *Graph) snapshot(ctx context.Context, saver Saver, t *Tuple, subgraphs bool) (*Snapshot, error) {
	ch := g.newChannels()
	if err := restore(ch, t.Checkpoint); err != nil {
		return nil, err
	}
	step := 0
	if s, ok := t.Metadata["step"].(float64); ok {
		step = int(s)
	} else if s, ok := t.Metadata["step"].(int); ok {
		step = s
	}
	tasks, err := g.prepareTasks(ch, t.Ref.ID, step+1, t.Ref.NS)
	if err != nil {
		return nil, err
	}
	byTask := map[string][]PendingWrite{}
	for _, w := range t.Writes {
		byTask[w.TaskID] = append(byTask[w.TaskID], w)
	}
	s := &Snapshot{
		Values: State{}, Next: []string{}, Tasks: []TaskInfo{}, Metadata: t.Metadata,
		CreatedAt: t.Checkpoint.TS, Ref: t.Ref, Parent: t.Parent, Interrupts: []InterruptValue{},
	}
	for _, k := range g.keys {
		if v, ok := ch[k].Get(); ok {
			s.Values[k] = v
		}
	}
	for _, tk := range tasks {
		info := TaskInfo{ID: tk.id, Name: tk.name, Path: tk.path, Interrupts: []InterruptValue{}}
		for _, w := range byTask[tk.id] {
			switch w.Channel {
			case Interrupt:
				var ivs []InterruptValue
				_ = json.Unmarshal(w.Value, &ivs)
				info.Interrupts = append(info.Interrupts, ivs...)
			case errorKey:
				_ = json.Unmarshal(w.Value, &info.Error)
			case doneKey:
				_ = json.Unmarshal(w.Value, &info.Result)
			}
		}
		if tk.node != nil && tk.node.sub != nil {
			sub := Ref{ThreadID: t.Ref.ThreadID, NS: joinNS([]string{t.Ref.NS, tk.name + ":" + tk.id})}
			if t.Ref.NS == "" {
				sub.NS = tk.name + ":" + tk.id
			}
			info.State = &sub
			if subgraphs {
				st, err := tk.node.sub.subState(ctx, saver, sub)
				if err != nil {
					return nil, err
				}
				info.SubState = st
			}
		}
		s.Next = append(s.Next, tk.name)
		s.Tasks = append(s.Tasks, info)
		s.Interrupts = append(s.Interrupts, info.Interrupts...)
	}
	return s, nil
}

func (g *Graph) subState(ctx context.Context, saver Saver, ref Ref) (*Snapshot, error) {
	t, err := saver.Get(ctx, ref)
	if err != nil || t == nil {
		return nil, err
	}
	return g.snapshot(ctx, saver, t, true)
}

// Update is one state update: values written as if node AsNode had returned them ("" for the
// node that ran last, Input for new input, Start for the start of the graph), or a Command.
type Update struct {
	Values  any      `json:"values"`
	Command *Command `json:"command,omitempty"`
	AsNode  string   `json:"as_node,omitempty"`
}

// UpdateState writes updates on the checkpoint ref (the newest when ref.ID is "") as one new
// checkpoint, and returns it. On an older checkpoint it starts a new branch (source "fork").
// metadata is added to the new checkpoint's metadata.
func (g *Graph) UpdateState(ctx context.Context, saver Saver, ref Ref, supersteps [][]Update, metadata map[string]any) (Ref, error) {
	const op = "graph.update_state"
	sg, err := g.ForNS(ref.NS)
	if err != nil {
		return Ref{}, err
	}
	l := &loop{g: sg, o: &RunOptions{ThreadID: ref.ThreadID, CheckpointID: ref.ID, Saver: saver, Metadata: metadata}, ns: ref.NS}
	if err := l.load(ctx); err != nil {
		return Ref{}, err
	}
	source := "update"
	if ref.ID != "" {
		if latest, err := saver.Get(ctx, Ref{ThreadID: ref.ThreadID, NS: ref.NS}); err == nil && latest != nil && latest.Ref.ID != ref.ID {
			source = "fork"
		}
	}
	for _, step := range supersteps {
		var writes []write
		meta := map[string]any{}
		src := source
		for _, u := range step {
			as := u.AsNode
			if as == "" && u.Command == nil {
				if as, err = l.lastNode(); err != nil {
					return Ref{}, err
				}
			}
			switch {
			case as == Input:
				src = "input"
				writes = append(writes, write{Start, u.Values})
				meta[Start] = u.Values
				continue
			case as != Start && as != "" && !sg.HasNode(as):
				return Ref{}, engine.E(engine.Op(op), engine.Invalid, fmt.Sprintf("Node %s does not exist", as))
			}
			var out any = u.Values
			if u.Command != nil {
				out = *u.Command
			}
			if m, ok := out.(map[string]any); ok && as == Start {
				out = filterKeys(State(m), sg.input)
			}
			upd, ws, err := sg.writesFor(ctx, l, as, out)
			if err != nil {
				return Ref{}, engine.E(engine.Op(op), engine.Invalid, err.Error(), err)
			}
			writes = append(writes, ws...)
			if as != "" {
				meta[as] = upd
			}
		}
		if err := l.apply(writes); err != nil {
			return Ref{}, engine.E(engine.Op(op), engine.Invalid, err.Error(), err)
		}
		if err := l.save(ctx, src, meta); err != nil {
			return Ref{}, err
		}
		source = "update"
	}
	return l.ref, nil
}

// lastNode is the node an update without as_node is attributed to: the one whose writes the
// current checkpoint records, when there is exactly one.
func (l *loop) lastNode() (string, error) {
	if len(l.g.order) == 1 {
		return l.g.order[0], nil
	}
	t, err := l.o.Saver.Get(context.Background(), l.ref)
	if err == nil && t != nil {
		if w, ok := t.Metadata["writes"].(map[string]any); ok && len(w) == 1 {
			for k := range maps.Keys(w) {
				if l.g.HasNode(k) {
					return k, nil
				}
			}
		}
	}
	if l.ref.ID == "" {
		return Start, nil
	}
	return "", engine.E(engine.Op("graph.update_state"), engine.Invalid, "Ambiguous update, specify as_node")
}
