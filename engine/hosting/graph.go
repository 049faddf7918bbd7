package hosting

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// ItemStore is the store a hosted graph's nodes reach: beyond graph.Store, what LangGraph's
// BaseStore does (the runner's store adapter is one).
type ItemStore interface {
	GetItem(ctx context.Context, namespace []string, key string) (engine.Item, bool, error)
	PutItem(ctx context.Context, namespace []string, key string, value map[string]any, index any, ttl *float64) error
	Delete(ctx context.Context, namespace []string, key string) error
	Search(ctx context.Context, q engine.StoreQuery) ([]engine.Item, error)
	ListNamespaces(ctx context.Context, q engine.NamespaceQuery) ([][]string, error)
}

// libraryModes are the library's stream modes a run streamed in modes asks its host for: those
// the stream's shaping reads for them (checkpoints are emitted here, as they are stored), so
// that a run nobody streams tokens of does not pay for the library's token callbacks. The host
// streams values and updates whatever it is asked (they give the run's result).
func libraryModes(modes []engine.StreamMode) []string {
	if modes == nil {
		return []string{"values", "updates", "custom", "messages", "tasks"}
	}
	want := map[string]bool{}
	for _, m := range modes {
		switch m {
		case engine.StreamValues, engine.StreamUpdates, engine.StreamCustom, engine.StreamTasks:
			want[string(m)] = true
		case engine.StreamDebug:
			want["tasks"] = true
		case engine.StreamMessages, engine.StreamMessagesTuple:
			want["messages"], want["values"], want["updates"], want["tasks"] = true, true, true, true
		case engine.StreamEvents:
			return libraryModes(nil)
		}
	}
	return slices.Sorted(maps.Keys(want))
}

// Graph is a graph of a host, as the runner runs it (graphs.Runnable).
type Graph struct {
	pool *Pool
	id   string
	cfg  graph.Config
}

var _ graphs.Runnable = (*Graph)(nil)

// ContextDefaults implements graphs.Runnable: a hosted graph's defaults are its own business.
func (g *Graph) ContextDefaults() map[string]any { return nil }

type runResult struct {
	Values      graph.State            `json:"values"`
	Interrupts  []graph.InterruptValue `json:"interrupts"`
	Interrupted bool                   `json:"interrupted"`
	Cancelled   bool                   `json:"cancelled"`
}

// Run implements graphs.Runnable: the host runs the graph, its checkpoints go to o.Saver and its
// store calls to o.Store, its stream events to o.Sink.
func (g *Graph) Run(ctx context.Context, o graph.RunOptions) (graph.Result, error) {
	saver := o.Saver
	if saver == nil {
		saver = graph.NewMemorySaver()
	}
	config := map[string]any{"configurable": configurable(o.Config), "metadata": o.Metadata}
	if len(o.Config.Tags) > 0 {
		config["tags"] = o.Config.Tags
	}
	if o.Config.RecursionLimit > 0 {
		config["recursion_limit"] = o.Config.RecursionLimit
	}
	threadID := o.ThreadID
	if threadID == "" {
		// A stateless run's scratch saver is named by the run, so that a run its host lost
		// finds its checkpoints again.
		threadID = o.Config.String("run_id")
	}
	fields := map[string]any{
		"graph": g.id, "thread_id": threadID, "input": o.Input, "command": o.Command, "checkpoint_id": o.CheckpointID,
		"config": config, "context": o.Context, "interrupt_before": o.InterruptBefore,
		"interrupt_after": o.InterruptAfter, "stream_modes": libraryModes(o.StreamModes), "durability": o.Durability,
	}
	if g.pool.traced {
		if h := traceHeaders(o.Sink); h != nil {
			fields["trace"] = h
		}
	}
	// A graceful stop drains the run: once its next root checkpoint is stored, the host is told
	// to cancel it and it is left, not over, to the next process (graphs.ErrDrained).
	parent := ctx
	ctx, drain := context.WithCancelCause(ctx)
	defer drain(nil)
	c := &calls{saver: saver, store: o.Store, sink: o.Sink, onCheckpoint: func(ns string) {
		if ns == "" && g.pool.draining() {
			drain(graphs.ErrDrained)
		}
	}}
	req := &request{
		onEvent: func(mode string, ns []string, data json.RawMessage) {
			if o.Sink == nil {
				return
			}
			for _, e := range typedEvents(mode, ns, data) {
				o.Sink(e)
			}
		},
		onCall: c.serve,
	}
	if g.pool.draining() { // the process stops: the run is not started here
		return graph.Result{}, graphs.ErrDrained
	}
	raw, err := g.pool.do(ctx, frameRun, fields, req)
	if parent.Err() == nil && errors.Is(context.Cause(ctx), graphs.ErrDrained) {
		return graph.Result{}, graphs.ErrDrained
	}
	for attempt := 1; hostLost(err) && ctx.Err() == nil && attempt < hostAttempts; attempt++ {
		// The host died mid-run: its restart goes on from the run's last checkpoint, like a
		// crashed worker's run (the step in flight runs again; finished steps do not).
		g.pool.hosts[0].log.Warn("host lost a run; resuming it from its last checkpoint", "graph_id", g.id, "run_id", o.Config.String("run_id"))
		if t, gerr := saver.Get(ctx, graph.Ref{ThreadID: threadID}); gerr == nil && t != nil && t.Metadata["run_id"] == o.Config.String("run_id") {
			fields["input"], fields["command"], fields["checkpoint_id"] = nil, nil, ""
		}
		raw, err = g.pool.do(ctx, frameRun, fields, req)
	}
	if err != nil {
		return graph.Result{}, runError(err)
	}
	var res runResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return graph.Result{}, fmt.Errorf("hosting: run result: %w", err)
	}
	if res.Cancelled {
		return graph.Result{}, context.Canceled
	}
	return graph.Result{Values: res.Values, Output: res.Values, Interrupted: res.Interrupted, Interrupts: res.Interrupts}, nil
}

// hostAttempts bounds how often one run is given to a host again after its host died: a run
// that kills its host every time fails instead of looping.
const hostAttempts = 3

// hostLost reports whether err is a host that exited during a request.
func hostLost(err error) bool {
	var ee *engine.Error
	return errors.As(err, &ee) && errors.Is(ee, errHostExited)
}

// runError is a run's failure as the runner reads it: a node's exception is the run's error
// (its class and message); the host's own failures keep their kind.
func runError(err error) error {
	if we, ok := err.(*WireError); ok {
		return &graph.NodeError{Class: we.Class, Message: we.Message}
	}
	return err
}

// State implements graphs.Runnable: the library computes the snapshot from saver's checkpoints.
func (g *Graph) State(ctx context.Context, saver graph.Saver, ref graph.Ref, subgraphs bool) (*graph.Snapshot, error) {
	raw, err := g.request(ctx, frameState, saver, map[string]any{"checkpoint": ref, "subgraphs": subgraphs})
	if err != nil {
		return nil, err
	}
	var s *graph.Snapshot
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("hosting: state: %w", err)
	}
	if s == nil && ref.ID != "" {
		return nil, engine.E(engine.Op("graph.state"), engine.NotFound, fmt.Sprintf("Checkpoint %s not found", ref.ID))
	}
	return s, nil
}

// History implements graphs.Runnable.
func (g *Graph) History(ctx context.Context, saver graph.Saver, ref graph.Ref, opts graph.ListOptions) ([]graph.Snapshot, error) {
	raw, err := g.request(ctx, frameHist, saver, map[string]any{"checkpoint": ref, "limit": opts.Limit, "before": opts.Before, "filter": opts.Metadata})
	if err != nil {
		return nil, err
	}
	out := []graph.Snapshot{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("hosting: history: %w", err)
	}
	return out, nil
}

// UpdateState implements graphs.Runnable: one update (values, as_node) goes as such; several
// at once or a command go as supersteps, applied by the library's bulk update. LangGraph.js
// applies no command in a state update, so a TypeScript graph is refused one before anything is
// written.
func (g *Graph) UpdateState(ctx context.Context, saver graph.Saver, ref graph.Ref, supersteps [][]graph.Update, metadata map[string]any) (graph.Ref, error) {
	const op = "threads.update_state"
	fields := map[string]any{"checkpoint": ref, "metadata": metadata}
	if len(supersteps) == 1 && len(supersteps[0]) == 1 && supersteps[0][0].Command == nil {
		fields["values"], fields["as_node"] = supersteps[0][0].Values, supersteps[0][0].AsNode
	} else if lang := g.pool.hosts[0].cfg.Language; lang == graphs.LanguagePython || !hasCommand(supersteps) {
		fields["supersteps"] = supersteps
	} else {
		return graph.Ref{}, engine.E(engine.Op(op), engine.Invalid, fmt.Sprintf("A graph in the %s host takes no command in a state update: its library applies values only", lang))
	}
	raw, err := g.request(ctx, frameUpdate, saver, fields)
	if err != nil {
		if we, ok := err.(*WireError); ok {
			return graph.Ref{}, engine.E(engine.Op(op), engine.Invalid, we.Error())
		}
		return graph.Ref{}, err
	}
	var out struct {
		Checkpoint graph.Ref `json:"checkpoint"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return graph.Ref{}, fmt.Errorf("hosting: update state: %w", err)
	}
	return out.Checkpoint, nil
}

func hasCommand(supersteps [][]graph.Update) bool {
	for _, step := range supersteps {
		for _, u := range step {
			if u.Command != nil {
				return true
			}
		}
	}
	return false
}

// request sends a state request whose checkpoint calls go to saver.
func (g *Graph) request(ctx context.Context, typ string, saver graph.Saver, fields map[string]any) (json.RawMessage, error) {
	config := map[string]any{"configurable": configurable(g.cfg)}
	if md, ok := fields["metadata"]; ok {
		config["metadata"] = md
		delete(fields, "metadata")
	}
	fields["graph"], fields["config"] = g.id, config
	return g.pool.do(ctx, typ, fields, &request{onCall: (&calls{saver: saver}).serve})
}

// configurable is cfg's configurable as a graph's code reads it: an object, empty when the config
// has none (a factory reads config["configurable"] as the reference servers give it, never null).
func configurable(cfg graph.Config) map[string]any {
	if cfg.Configurable == nil {
		return map[string]any{}
	}
	return cfg.Configurable
}

// decodeAny decodes an event's data for the stream's shaping, numbers kept as written.
func decodeAny(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	return v
}

// calls serves a request's checkpointer and store calls.
type calls struct {
	saver graph.Saver
	store graph.Store
	sink  graph.Sink
	// onCheckpoint, when set, is told of each checkpoint stored (its namespace).
	onCheckpoint func(ns string)
}

type wireTuple struct {
	Ref        graph.Ref            `json:"ref"`
	Checkpoint graph.Checkpoint     `json:"checkpoint"`
	Metadata   map[string]any       `json:"metadata"`
	Parent     *graph.Ref           `json:"parent"`
	Writes     []graph.PendingWrite `json:"pending_writes"`
}

func toWire(t graph.Tuple) wireTuple {
	return wireTuple{Ref: t.Ref, Checkpoint: t.Checkpoint, Metadata: t.Metadata, Parent: t.Parent, Writes: t.Writes}
}

func (c *calls) serve(ctx context.Context, method string, params json.RawMessage) (any, error) {
	var p struct {
		Ref        graph.Ref            `json:"ref"`
		Limit      int                  `json:"limit"`
		Before     string               `json:"before"`
		Filter     map[string]any       `json:"filter"`
		Checkpoint graph.Checkpoint     `json:"checkpoint"`
		Metadata   map[string]any       `json:"metadata"`
		Parent     *graph.Ref           `json:"parent"`
		Writes     []graph.PendingWrite `json:"writes"`
	}
	if strings.HasPrefix(method, "store.") {
		return c.serveStore(ctx, method, params)
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("hosting: %s: %w", method, err)
	}
	switch method {
	case "checkpoint.get":
		t, err := c.saver.Get(ctx, p.Ref)
		if err != nil || t == nil {
			return nil, err
		}
		return toWire(*t), nil
	case "checkpoint.list":
		ts, err := c.saver.List(ctx, p.Ref, graph.ListOptions{Limit: p.Limit, Before: p.Before, Metadata: p.Filter})
		out := make([]wireTuple, 0, len(ts))
		for _, t := range ts {
			out = append(out, toWire(t))
		}
		return out, err
	case "checkpoint.put":
		if p.Checkpoint.TS.IsZero() {
			p.Checkpoint.TS = time.Now().UTC()
		}
		if err := c.saver.Put(ctx, p.Ref, p.Checkpoint, p.Metadata, p.Parent); err != nil {
			return nil, err
		}
		if c.sink != nil {
			var ns []string
			if p.Ref.NS != "" {
				ns = strings.Split(p.Ref.NS, "|")
			}
			c.sink(graph.Event{Kind: graph.KindCheckpoint, NS: ns, Data: graph.CheckpointSaved{Checkpoint: p.Ref, Metadata: p.Metadata, Parent: p.Parent}})
		}
		if c.onCheckpoint != nil {
			c.onCheckpoint(p.Ref.NS)
		}
		return nil, nil
	case "checkpoint.put_writes":
		return nil, c.saver.PutWrites(ctx, p.Ref, p.Writes)
	}
	return nil, fmt.Errorf("hosting: unknown method %q", method)
}

func (c *calls) serveStore(ctx context.Context, method string, params json.RawMessage) (any, error) {
	st, ok := c.store.(ItemStore)
	if !ok {
		return nil, fmt.Errorf("hosting: %s: this request has no store", method)
	}
	var p struct {
		Namespace []string       `json:"namespace"`
		Key       string         `json:"key"`
		Value     map[string]any `json:"value"`
		Index     any            `json:"index"`
		TTL       *float64       `json:"ttl"`
		NSPrefix  []string       `json:"namespace_prefix"`
		Filter    map[string]any `json:"filter"`
		Limit     int            `json:"limit"`
		Offset    int            `json:"offset"`
		Query     *string        `json:"query"`
		Prefix    []string       `json:"prefix"`
		Suffix    []string       `json:"suffix"`
		MaxDepth  *int           `json:"max_depth"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("hosting: %s: %w", method, err)
	}
	switch method {
	case "store.get":
		it, ok, err := st.GetItem(ctx, p.Namespace, p.Key)
		if err != nil || !ok {
			return nil, err
		}
		return it, nil
	case "store.put":
		return nil, st.PutItem(ctx, p.Namespace, p.Key, p.Value, p.Index, p.TTL)
	case "store.delete":
		return nil, st.Delete(ctx, p.Namespace, p.Key)
	case "store.search":
		q := engine.StoreQuery{Prefix: p.NSPrefix, Filter: p.Filter, Limit: p.Limit, Offset: p.Offset}
		if p.Query != nil {
			q.Query = *p.Query
		}
		items, err := st.Search(ctx, q)
		if items == nil {
			items = []engine.Item{}
		}
		return items, err
	case "store.list_namespaces":
		q := engine.NamespaceQuery{Prefix: p.Prefix, Suffix: p.Suffix, Limit: p.Limit, Offset: p.Offset}
		if p.MaxDepth != nil {
			q.MaxDepth = *p.MaxDepth
		}
		nss, err := st.ListNamespaces(ctx, q)
		if nss == nil {
			nss = [][]string{}
		}
		return nss, err
	}
	return nil, fmt.Errorf("hosting: unknown method %q", method)
}
