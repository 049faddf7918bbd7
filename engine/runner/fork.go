package runner

import (
	"context"
	"fmt"
	"maps"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/eventlog"
)

// ForkedFromKey is the metadata key of a forked thread naming where it came from:
// {"thread_id", "checkpoint_id", "step"}.
const ForkedFromKey = "forked_from"

// Fork asks for a new thread made from a step of another.
type Fork struct {
	ThreadID string // the thread forked
	// CheckpointID is the checkpoint forked; when empty, Step names it instead: the checkpoint
	// of that step (metadata.step) on the branch of the thread's newest checkpoint.
	CheckpointID string
	Step         *int
	// Update, when set, is written on the forked checkpoint as the new thread's first change
	// (values with as_node, as POST /threads/{id}/state).
	Update *graph.Update
	// Metadata is merged over the forked thread's metadata.
	Metadata map[string]any
}

// Fork makes a new thread whose history is the forked thread's up to the checkpoint asked for
// (then the update, when given), and whose metadata remembers where it came from
// (ForkedFromKey). The update is tried first on a scratch saver holding that checkpoint alone,
// so a bad update refuses the request and creates nothing.
func (r *Runner) Fork(ctx context.Context, f Fork) (engine.Thread, error) {
	const op = "threads.fork"
	th, g, err := r.threadGraph(ctx, f.ThreadID)
	if err != nil {
		return engine.Thread{}, err
	}
	if g == nil {
		return engine.Thread{}, engine.E(engine.Op(op), engine.NotFound, fmt.Sprintf("Thread %s has no checkpoint to fork", f.ThreadID))
	}
	snap, err := r.forkPoint(ctx, g, f)
	if err != nil {
		return engine.Thread{}, err
	}
	if f.Update != nil {
		scratch := graph.NewMemorySaver()
		ref := graph.Ref{ThreadID: "scratch"}
		if ref, err = g.UpdateState(ctx, scratch, ref, [][]graph.Update{{{Values: snap.Values}}}, nil); err != nil {
			return engine.Thread{}, engine.E(engine.Op(op), err)
		}
		if _, err := g.UpdateState(ctx, scratch, ref, [][]graph.Update{{*f.Update}}, nil); err != nil {
			return engine.Thread{}, err
		}
	}
	md := maps.Clone(th.Metadata)
	if md == nil {
		md = map[string]any{}
	}
	maps.Copy(md, f.Metadata)
	md[ForkedFromKey] = map[string]any{"thread_id": f.ThreadID, "checkpoint_id": snap.Ref.ID, "step": snap.Metadata["step"]}
	forked, err := r.threads.Create(ctx, threads.Create{Metadata: md})
	if err != nil {
		return engine.Thread{}, err
	}
	ctx = engine.Asked(ctx) // read and create asked: the fork's own steps are the user's

	if err := r.saver.Fork(ctx, f.ThreadID, forked.ThreadID, snap.Ref.ID); err != nil {
		return engine.Thread{}, engine.E(engine.Op(op), err)
	}
	if f.Update != nil {
		ref := graph.Ref{ThreadID: forked.ThreadID, ID: snap.Ref.ID}
		if _, err := r.UpdateState(ctx, ref, [][]graph.Update{{*f.Update}}); err != nil {
			return engine.Thread{}, err
		}
	}
	return r.threads.Get(ctx, forked.ThreadID)
}

// forkPoint is the snapshot f names, in the root namespace.
func (r *Runner) forkPoint(ctx context.Context, g graphs.Runnable, f Fork) (*graph.Snapshot, error) {
	const op = "threads.fork"
	if f.CheckpointID != "" {
		snap, err := g.State(ctx, r.saver, graph.Ref{ThreadID: f.ThreadID, ID: f.CheckpointID}, false)
		if err != nil {
			return nil, err
		}
		if snap == nil {
			return nil, engine.E(engine.Op(op), engine.NotFound, fmt.Sprintf("Checkpoint %s not found", f.CheckpointID))
		}
		return snap, nil
	}
	if f.Step == nil {
		return nil, engine.E(engine.Op(op), engine.Invalid, "A fork names its checkpoint_id or its step")
	}
	history, err := g.History(ctx, r.saver, graph.Ref{ThreadID: f.ThreadID}, graph.ListOptions{})
	if err != nil {
		return nil, err
	}
	if len(history) == 0 {
		return nil, engine.E(engine.Op(op), engine.NotFound, fmt.Sprintf("Thread %s has no checkpoint to fork", f.ThreadID))
	}
	byID := map[string]*graph.Snapshot{}
	for i := range history {
		byID[history[i].Ref.ID] = &history[i]
	}
	for s := &history[0]; s != nil; {
		if fmt.Sprint(s.Metadata["step"]) == fmt.Sprint(*f.Step) {
			return s, nil
		}
		if s.Parent == nil {
			break
		}
		s = byID[s.Parent.ID]
	}
	return nil, engine.E(engine.Op(op), engine.NotFound, fmt.Sprintf("Thread %s has no step %d on its current branch", f.ThreadID, *f.Step))
}

// Import makes a thread from an exported one (replay.File): its metadata, checkpoints and
// pending writes, under threadID ("" for a new id). The runs of the file are not made again
// (they would be scheduled): `jetgraph replay --file` shows them from the file.
func (r *Runner) Import(ctx context.Context, threadID string, metadata map[string]any, events []eventlog.Event) (engine.Thread, error) {
	th, err := r.threads.Create(ctx, threads.Create{ThreadID: threadID, Metadata: metadata})
	if err != nil {
		return engine.Thread{}, err
	}
	ctx = engine.Asked(ctx)
	if err := r.saver.Import(ctx, th.ThreadID, events); err != nil {
		return engine.Thread{}, engine.E(engine.Op("threads.import"), err)
	}
	return r.threads.Get(ctx, th.ThreadID)
}
