// Package runner executes an assistant's graph on a thread: it resolves the assistant and its
// graph, merges config, context and metadata by the API's rules, runs the graph with the thread's
// checkpoints and the store, and answers the thread-state operations (state, history, update,
// copy) with the graph the thread runs. Scheduling, queueing and run records are the business of
// the caller.
package runner

import (
	"context"
	"fmt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/assistants"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/store"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Runner runs graphs on threads.
type Runner struct {
	assistants *assistants.Service
	threads    *threads.Service
	graphs     *graphs.Registry
	saver      Saver
	store      graph.Store
}

// Saver keeps the checkpoints of threads: a graph.Saver that can also copy a thread's
// checkpoints and patch a checkpoint's metadata (engine/checkpoints.Saver).
type Saver interface {
	graph.Saver
	Copy(ctx context.Context, fromThread, toThread string) error
	Fork(ctx context.Context, fromThread, toThread, checkpointID string) error
	Import(ctx context.Context, toThread string, events []eventlog.Event) error
	PatchMetadata(ctx context.Context, ref graph.Ref, metadata map[string]any) error
}

// New returns a runner.
func New(a *assistants.Service, t *threads.Service, reg *graphs.Registry, saver Saver, st *store.Service) *Runner {
	return &Runner{assistants: a, threads: t, graphs: reg, saver: saver, store: storeAdapter{st}}
}

// Request is one run.
type Request struct {
	RunID           string
	ThreadID        string // "" for a stateless run
	AssistantID     string // an assistant id or a graph id
	Input           any
	Command         *graph.Command
	CheckpointID    string
	Config          map[string]any // {configurable, tags, recursion_limit}
	Context         map[string]any
	Metadata        map[string]any
	InterruptBefore []string
	InterruptAfter  []string
	Sink            graph.Sink
	// Saver, when set, keeps the run's checkpoints instead of the runner's own (a run whose
	// durability defers them); ignored for a stateless run.
	Saver graph.Saver
	// StreamModes are the run's stream modes (graph.RunOptions.StreamModes); nil: every mode.
	StreamModes []engine.StreamMode
	// Durability is the run's durability (graph.RunOptions.Durability).
	Durability engine.Durability
}

// Outcome is how a run ended. Err is a graph failure (a node error, the recursion limit), which
// is a run result, not a failure of the runner.
type Outcome struct {
	Values      graph.State
	Interrupted bool
	Interrupts  []graph.InterruptValue
	Err         error
	Assistant   engine.Assistant
}

// Status is the run status the outcome means.
func (o Outcome) Status() string {
	switch {
	case o.Err != nil:
		return engine.RunFailed
	case o.Interrupted:
		return engine.RunInterrupted
	}
	return engine.RunSuccess
}

// Serves reports whether this process has the graph of the run's assistant. It is false only
// when the assistant resolves to a graph id this process's registry lacks: during a rollout,
// processes of two revisions share one log, and each runs only the runs of its own graphs.
func (r *Runner) Serves(ctx context.Context, assistantID string) bool {
	a, err := r.assistants.Resolve(ctx, assistantID)
	if err != nil {
		return true // the run fails with the reason when it executes
	}
	return r.graphs.Has(a.GraphID)
}

// Run executes req to its end (finished, interrupted or failed). When it fails after resolving
// the assistant, the outcome still names it (for the failure's log line).
func (r *Runner) Run(ctx context.Context, req Request) (Outcome, error) {
	const op = "runs.execute"
	a, err := r.assistants.Resolve(ctx, req.AssistantID)
	if err != nil {
		if engine.Is(engine.NotFound, err) {
			return Outcome{}, assistants.NoAssistant(op, req.AssistantID)
		}
		return Outcome{}, err
	}
	var thread engine.Thread
	if req.ThreadID != "" {
		if thread, err = r.threads.Info(ctx, req.ThreadID); err != nil {
			return Outcome{}, err
		}
		// The thread's metadata names the run's graph and assistant already: the run_created
		// fold records them (projections/threads_runs.go).
	}
	// The thread's configurable, as the reference servers merge it: its other keys (tags,
	// recursion_limit) came from earlier requests and belong to them.
	cfg := mergeConfig(a.Config, map[string]any{"configurable": thread.Config["configurable"]}, req.Config)
	configurable := cfg["configurable"].(map[string]any)
	// The user is the run's own (recorded from its request), never a layer's: mergeConfig drops
	// langgraph_auth_* with the secrets, so that no assistant or thread config carries one.
	if own, ok := req.Config["configurable"].(map[string]any); ok {
		engine.CopyAuthConfigurable(configurable, own)
	}
	configurable["run_id"], configurable["graph_id"], configurable["assistant_id"] = req.RunID, a.GraphID, a.AssistantID
	if req.ThreadID != "" {
		configurable["thread_id"] = req.ThreadID
	}
	gc := graph.Config{Configurable: configurable}
	if n, ok := cfg["recursion_limit"].(float64); ok {
		gc.RecursionLimit = int(n)
	}
	for _, t := range asList(cfg["tags"]) {
		if s, ok := t.(string); ok {
			gc.Tags = append(gc.Tags, s)
		}
	}
	g, err := r.graphs.Runnable(a.GraphID, gc)
	if err != nil {
		return Outcome{}, engine.E(engine.Op(op), engine.Invalid, fmt.Sprintf("Graph %s: %v", a.GraphID, err), err)
	}
	md := mergeMetadata(a.Metadata, thread.Metadata, req.Metadata)
	md["run_id"], md["graph_id"], md["assistant_id"], md["thread_id"] = req.RunID, a.GraphID, a.AssistantID, req.ThreadID
	gc.Metadata = md
	var saver graph.Saver = r.saver
	if req.Saver != nil {
		saver = req.Saver
	}
	if req.ThreadID == "" {
		saver = graph.NewMemorySaver() // a stateless run keeps nothing
	}
	res, err := g.Run(ctx, graph.RunOptions{
		ThreadID: req.ThreadID, Input: req.Input, Command: req.Command, CheckpointID: req.CheckpointID,
		Config: gc, Context: mergeContext(g.ContextDefaults(), a.Context, req.Context),
		InterruptBefore: req.InterruptBefore, InterruptAfter: req.InterruptAfter,
		Saver: saver, Store: r.store, Sink: req.Sink, Metadata: md, StreamModes: req.StreamModes,
		Durability: req.Durability,
	})
	out := Outcome{Values: res.Values, Interrupted: res.Interrupted, Interrupts: res.Interrupts, Assistant: a}
	if err != nil {
		if engine.KindOf(err) != engine.Other {
			return Outcome{Assistant: a}, err // a bad request (unknown checkpoint, resume without interrupt)
		}
		out.Err = err
	}
	return out, nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// storeAdapter gives nodes the store service.
type storeAdapter struct{ s *store.Service }

func (a storeAdapter) Get(ctx context.Context, ns []string, key string) (map[string]any, bool, error) {
	it, ok, err := a.s.Get(ctx, ns, key, false)
	if err != nil || !ok {
		return nil, ok, err
	}
	return it.Value, true, nil
}

func (a storeAdapter) Put(ctx context.Context, ns []string, key string, value map[string]any) error {
	return a.s.Put(ctx, store.Put{Namespace: ns, Key: key, Value: value})
}

// GetItem, PutItem, Delete, Search and ListNamespaces give graphs in a host the whole store, as
// LangGraph's BaseStore reaches it (engine/hosting.ItemStore).
func (a storeAdapter) GetItem(ctx context.Context, ns []string, key string) (engine.Item, bool, error) {
	return a.s.Get(ctx, ns, key, true)
}

func (a storeAdapter) PutItem(ctx context.Context, ns []string, key string, value map[string]any, index any, ttl *float64) error {
	return a.s.Put(ctx, store.Put{Namespace: ns, Key: key, Value: value, Index: index, TTL: ttl})
}

func (a storeAdapter) Delete(ctx context.Context, ns []string, key string) error {
	return a.s.Delete(ctx, ns, key)
}

func (a storeAdapter) Search(ctx context.Context, q engine.StoreQuery) ([]engine.Item, error) {
	return a.s.Search(ctx, q, true)
}

func (a storeAdapter) ListNamespaces(ctx context.Context, q engine.NamespaceQuery) ([][]string, error) {
	return a.s.ListNamespaces(ctx, q)
}
