package runner

import (
	"context"
	"fmt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/threads"
)

// threadGraph returns the thread and the graph it runs (nil when no run has named one yet).
func (r *Runner) threadGraph(ctx context.Context, threadID string) (engine.Thread, graphs.Runnable, error) {
	th, err := r.threads.Info(ctx, threadID)
	if err != nil {
		return th, nil, err
	}
	graphID, _ := th.Metadata["graph_id"].(string)
	if graphID == "" {
		return th, nil, nil
	}
	cfg := graph.Config{Configurable: map[string]any{}}
	if c, ok := th.Config["configurable"].(map[string]any); ok {
		cfg.Configurable = c
	}
	g, err := r.graphs.Runnable(graphID, cfg)
	if err != nil {
		return th, nil, engine.E(engine.Op("threads.state"), engine.Invalid, fmt.Sprintf("Graph %s of thread %s: %v", graphID, threadID, err), err)
	}
	return th, g, nil
}

// State returns the thread's state at ref (its newest checkpoint when ref.ID is ""), or nil
// when the thread has none yet.
func (r *Runner) State(ctx context.Context, ref graph.Ref, subgraphs bool) (*graph.Snapshot, error) {
	_, g, err := r.threadGraph(ctx, ref.ThreadID)
	if err != nil || g == nil {
		if err == nil && ref.ID != "" {
			return nil, engine.E(engine.Op("threads.state"), engine.NotFound, fmt.Sprintf("Checkpoint %s not found", ref.ID))
		}
		return nil, err
	}
	return g.State(ctx, r.saver, ref, subgraphs)
}

// History returns the thread's checkpoints in ref's namespace, newest first.
func (r *Runner) History(ctx context.Context, ref graph.Ref, opts graph.ListOptions) ([]graph.Snapshot, error) {
	_, g, err := r.threadGraph(ctx, ref.ThreadID)
	if err != nil || g == nil {
		return []graph.Snapshot{}, err
	}
	return g.History(ctx, r.saver, ref, opts)
}

// UpdateState writes supersteps of updates on the thread at ref and returns the new checkpoint.
// It is refused while a run is pending or running on the thread (its status is busy), on any
// process.
func (r *Runner) UpdateState(ctx context.Context, ref graph.Ref, supersteps [][]graph.Update) (graph.Ref, error) {
	const op = "threads.update_state"
	ctx, _, err := r.threads.Access(ctx, engine.ActionUpdate, ref.ThreadID, nil)
	if err != nil {
		return graph.Ref{}, err
	}
	th, g, err := r.threadGraph(ctx, ref.ThreadID)
	if err != nil {
		return graph.Ref{}, err
	}
	if th.Status == engine.ThreadBusy {
		if th, err = r.threads.InfoCaughtUp(ctx, ref.ThreadID); err != nil {
			return graph.Ref{}, err
		}
		if th.Status == engine.ThreadBusy {
			return graph.Ref{}, engine.E(engine.Op(op), engine.Conflict, "Thread is busy")
		}
	}
	if g == nil {
		return graph.Ref{}, engine.E(engine.Op(op), engine.Invalid,
			fmt.Sprintf("Thread %s has no graph yet: run an assistant on it first, or create it with metadata.graph_id", ref.ThreadID))
	}
	md := map[string]any{"thread_id": ref.ThreadID}
	for _, k := range []string{"graph_id", "assistant_id"} {
		if v, ok := th.Metadata[k]; ok {
			md[k] = v
		}
	}
	return g.UpdateState(ctx, r.saver, ref, supersteps, md)
}

// PatchState merges metadata into the metadata of the checkpoint ref (the newest when ref.ID is "").
func (r *Runner) PatchState(ctx context.Context, ref graph.Ref, metadata map[string]any) error {
	ctx, _, err := r.threads.Access(ctx, engine.ActionUpdate, ref.ThreadID, nil)
	if err != nil {
		return err
	}
	if _, err := r.threads.Info(ctx, ref.ThreadID); err != nil {
		return err
	}
	return r.saver.PatchMetadata(ctx, ref, metadata)
}

// Copy makes a new thread with the metadata and every checkpoint of threadID. The user's rules
// are asked to read the source and to create the copy, which carries the metadata the create
// rule left (its owner: the user).
func (r *Runner) Copy(ctx context.Context, threadID string) (engine.Thread, error) {
	th, err := r.threads.Info(ctx, threadID)
	if err != nil {
		return engine.Thread{}, err
	}
	cp, err := r.threads.Create(ctx, threads.Create{Metadata: th.Metadata})
	if err != nil {
		return engine.Thread{}, err
	}
	ctx = engine.Asked(ctx)
	if err := r.saver.Copy(ctx, threadID, cp.ThreadID); err != nil {
		return engine.Thread{}, engine.E(engine.Op("threads.copy"), err)
	}
	return r.threads.Get(ctx, cp.ThreadID)
}

// CreateWithSupersteps creates a thread and writes supersteps of state updates on it with the
// graph its metadata names (graph_id). The updates are tried first on a scratch saver, so a bad
// update refuses the whole request and creates nothing.
func (r *Runner) CreateWithSupersteps(ctx context.Context, c threads.Create, supersteps [][]graph.Update) (engine.Thread, error) {
	const op = "threads.create"
	graphID, _ := c.Metadata["graph_id"].(string)
	if graphID == "" {
		return engine.Thread{}, engine.E(engine.Op(op), engine.Invalid, "supersteps need metadata.graph_id: the graph the updates are written with")
	}
	g, err := r.graphs.Runnable(graphID, graph.Config{Configurable: map[string]any{}})
	if err != nil {
		return engine.Thread{}, engine.E(engine.Op(op), engine.Invalid, fmt.Sprintf("metadata.graph_id: %v", err))
	}
	scratch := graph.Ref{ThreadID: "scratch"}
	if _, err := g.UpdateState(ctx, graph.NewMemorySaver(), scratch, supersteps, nil); err != nil {
		return engine.Thread{}, err
	}
	th, err := r.threads.Create(ctx, c)
	if err != nil {
		return engine.Thread{}, err
	}
	ctx = engine.Asked(ctx)
	if _, err := r.UpdateState(ctx, graph.Ref{ThreadID: th.ThreadID}, supersteps); err != nil {
		return engine.Thread{}, err
	}
	return r.threads.Get(ctx, th.ThreadID)
}
