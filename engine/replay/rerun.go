package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// Build makes the graph a recorded run executed (graphs.Registry.Runnable is one): a Go graph,
// or a hosted graph whose host is started (engine/hosting).
type Build func(graphID string, cfg graph.Config) (graphs.Runnable, error)

// Divergence is the first place a re-execution differs from the record.
type Divergence struct {
	RunID string `json:"run_id"`
	Step  int    `json:"step"`
	// Kind is what differs: nodes (another set of nodes ran), writes (a node wrote something
	// else), missing_step (the record has a step the re-execution did not reach), extra_step
	// (the re-execution went further), status (one failed, the other did not), state (a step
	// without recorded writes changed the state otherwise), or one of a
	// call's: model_input, model_call, tool_input, tool_call (see KindModelInput).
	Kind     string `json:"kind"`
	Node     string `json:"node,omitempty"`
	Recorded any    `json:"recorded"`
	Replayed any    `json:"replayed"`
}

func (d *Divergence) String() string {
	node := ""
	if d.Node != "" {
		node = " node " + d.Node
	}
	return fmt.Sprintf("run %s step %d%s: %s differ\n  recorded %s\n  replayed %s", d.RunID, d.Step, node, d.Kind,
		compact(d.Recorded, 400), compact(d.Replayed, 400))
}

// Report is what a re-execution found.
type Report struct {
	Runs       int         `json:"runs"`
	Steps      int         `json:"steps"` // steps compared
	Divergence *Divergence `json:"divergence"`
}

// Rerun re-executes the recorded runs of t in order, on an in-memory saver and store, with the
// graphs build makes now (graphID, when set, instead of the recorded one), their model and tool
// calls answered from the recording (graphs.Playback: no network, no keys; a model sent other
// messages or tools than recorded, or a call not recorded, is a divergence), and compares every
// root super-step with the record: the nodes that ran and what each wrote (message ids aside,
// which are random for input messages). A step whose checkpoint records no writes (a hosted
// graph's: its library no longer puts them in the metadata) is compared by what it changed in
// the state instead. It stops at the first divergence.
func Rerun(ctx context.Context, t *Thread, build Build, graphID string) (Report, error) {
	saver, store := graph.NewMemorySaver(), &memStore{m: map[string]engine.Item{}}
	var rep Report
	for _, run := range t.Runs {
		id := graphID
		if id == "" {
			id = run.GraphID
		}
		cfg := graph.Config{Configurable: map[string]any{}}
		if c, ok := run.Config["configurable"].(map[string]any); ok {
			cfg.Configurable = maps.Clone(c)
		}
		if n, ok := run.Config["recursion_limit"].(float64); ok {
			cfg.RecursionLimit = int(n)
		}
		cfg.Configurable["thread_id"], cfg.Configurable["run_id"], cfg.Configurable["graph_id"] = t.ThreadID, run.RunID, id
		g, err := build(id, cfg)
		if err != nil {
			return rep, fmt.Errorf("replay: run %s: graph %s: %w", run.RunID, id, err)
		}
		opts := graph.RunOptions{ThreadID: t.ThreadID, Input: run.Input, Config: cfg, Context: run.Context, Saver: saver, Store: store,
			Metadata: map[string]any{"run_id": run.RunID}}
		if run.Resume != nil {
			opts.Input, opts.Command = nil, &graph.Command{Resume: run.Resume}
		}
		rec := newRecording(run)
		_, runErr := g.Run(graphs.WithPlayback(ctx, rec), opts)
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		rep.Runs++
		replayed, err := rootSteps(ctx, saver, t.ThreadID, run.RunID)
		if err != nil {
			return rep, err
		}
		var recorded []Step
		for _, s := range run.Steps {
			if s.NS == "" {
				recorded = append(recorded, s)
			}
		}
		if d := rec.divergence(); d != nil { // a call diverged: the steps before it are compared
			recorded = slices.DeleteFunc(recorded, func(s Step) bool { return s.Step >= d.Step })
			replayed = slices.DeleteFunc(replayed, func(s replayedStep) bool { return s.step >= d.Step })
			if earlier := compareSteps(run.RunID, recorded, replayed, &rep.Steps); earlier != nil {
				d = earlier
			}
			rep.Divergence = d
			return rep, nil
		}
		if d := compareSteps(run.RunID, recorded, replayed, &rep.Steps); d != nil {
			rep.Divergence = d
			return rep, nil
		}
		if failed := run.Status == "error"; failed != (runErr != nil) {
			rep.Divergence = &Divergence{RunID: run.RunID, Kind: "status", Recorded: run.Status, Replayed: fmt.Sprint(runErr)}
			return rep, nil
		}
	}
	return rep, nil
}

// replayedStep is a re-executed root super-step.
type replayedStep struct {
	step   int
	writes map[string]any
	diff   []Change // what the step changed in the state
}

// rootSteps reads the root checkpoints a re-executed run left in saver, oldest first.
func rootSteps(ctx context.Context, saver graph.Saver, threadID, runID string) ([]replayedStep, error) {
	all, err := saver.List(ctx, graph.Ref{ThreadID: threadID}, graph.ListOptions{})
	if err != nil {
		return nil, err
	}
	states := map[string]map[string]json.RawMessage{}
	for _, t := range all {
		states[t.Ref.ID] = t.Checkpoint.ChannelValues
	}
	out := []replayedStep{}
	for i := len(all) - 1; i >= 0; i-- {
		t := all[i]
		raw, _ := json.Marshal(t.Metadata)
		var md checkpointMeta
		if err := json.Unmarshal(raw, &md); err != nil {
			return nil, err
		}
		if md.RunID != runID {
			continue
		}
		s := replayedStep{step: md.Step, writes: map[string]any{}}
		for node, w := range md.Writes {
			s.writes[node] = decode(w)
		}
		var parent map[string]json.RawMessage
		if t.Parent != nil {
			parent = states[t.Parent.ID]
		}
		s.diff = diff(parent, t.Checkpoint.ChannelValues)
		out = append(out, s)
	}
	return out, nil
}

func compareSteps(runID string, recorded []Step, replayed []replayedStep, compared *int) *Divergence {
	for i, rec := range recorded {
		if i >= len(replayed) {
			return &Divergence{RunID: runID, Step: rec.Step, Kind: "missing_step", Recorded: rec.Nodes, Replayed: nil}
		}
		rep := replayed[i]
		nodes := slices.Sorted(func(yield func(string) bool) {
			for n := range rep.writes {
				if !yield(n) {
					return
				}
			}
		})
		if rep.step != rec.Step || !slices.Equal(nodes, rec.Nodes) {
			return &Divergence{RunID: runID, Step: rec.Step, Kind: "nodes", Recorded: rec.Nodes, Replayed: nodes}
		}
		for _, n := range nodes {
			a, b := withoutIDs(rec.Writes[n]), withoutIDs(rep.writes[n])
			if !reflect.DeepEqual(a, b) {
				return &Divergence{RunID: runID, Step: rec.Step, Kind: "writes", Node: n, Recorded: a, Replayed: b}
			}
		}
		if len(nodes) == 0 { // no writes recorded (a hosted graph's step): what it changed
			if a, b := withoutIDs(rec.Diff), withoutIDs(rep.diff); !reflect.DeepEqual(a, b) {
				return &Divergence{RunID: runID, Step: rec.Step, Kind: "state", Recorded: a, Replayed: b}
			}
		}
		*compared++
	}
	if len(replayed) > len(recorded) {
		extra := replayed[len(recorded)]
		return &Divergence{RunID: runID, Step: extra.step, Kind: "extra_step", Recorded: nil, Replayed: extra.writes}
	}
	return nil
}

// withoutIDs is v (decoded JSON) without the "id" keys of objects, through a JSON round trip
// so that recorded and replayed values compare as the same types. An "example": false is left
// out too: messages recorded before they stopped carrying it (as the reference's no longer do)
// mean the same as messages without it.
func withoutIDs(v any) any {
	raw, _ := json.Marshal(v)
	var x any
	_ = json.Unmarshal(raw, &x)
	var strip func(any) any
	strip = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				if k == "id" || k == "example" && x == false {
					delete(t, k)
					continue
				}
				t[k] = strip(x)
			}
		case []any:
			for i := range t {
				t[i] = strip(t[i])
			}
		}
		return v
	}
	return strip(x)
}

// memStore is the store a re-execution reads and writes: in memory, empty at first. It is an
// item store too (hosting.ItemStore), for a hosted graph's nodes.
type memStore struct {
	mu sync.Mutex
	m  map[string]engine.Item
}

func memKey(ns []string, key string) string { return strings.Join(ns, "\x00") + "\x00\x00" + key }

func (s *memStore) Get(ctx context.Context, ns []string, key string) (map[string]any, bool, error) {
	it, ok, err := s.GetItem(ctx, ns, key)
	return it.Value, ok, err
}

func (s *memStore) Put(ctx context.Context, ns []string, key string, value map[string]any) error {
	return s.PutItem(ctx, ns, key, value, nil, nil)
}

// GetItem is an item with its namespace and times.
func (s *memStore) GetItem(_ context.Context, ns []string, key string) (engine.Item, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.m[memKey(ns, key)]
	return it, ok, nil
}

// PutItem keeps value; index and ttl mean nothing in memory.
func (s *memStore) PutItem(_ context.Context, ns []string, key string, value map[string]any, _ any, _ *float64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := engine.Time{Time: time.Now().UTC()}
	it, ok := s.m[memKey(ns, key)]
	if !ok {
		it = engine.Item{Namespace: slices.Clone(ns), Key: key, CreatedAt: now}
	}
	it.Value, it.UpdatedAt = value, now
	s.m[memKey(ns, key)] = it
	return nil
}

// Delete forgets an item.
func (s *memStore) Delete(_ context.Context, ns []string, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, memKey(ns, key))
	return nil
}

// Search lists the items under the query's prefix that contain its filter, in key order (a
// re-execution has no semantic index: a query ranks nothing).
func (s *memStore) Search(_ context.Context, q engine.StoreQuery) ([]engine.Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []engine.Item
	for _, k := range slices.Sorted(maps.Keys(s.m)) {
		it := s.m[k]
		if len(it.Namespace) >= len(q.Prefix) && slices.Equal(it.Namespace[:len(q.Prefix)], q.Prefix) &&
			(len(q.Filter) == 0 || engine.Contains(it.Value, q.Filter)) {
			out = append(out, it)
		}
	}
	return page(out, q.Offset, q.Limit), nil
}

// ListNamespaces lists the namespaces of the items, as a store lists them.
func (s *memStore) ListNamespaces(_ context.Context, q engine.NamespaceQuery) ([][]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string][]string{}
	for _, it := range s.m {
		ns := it.Namespace
		if len(ns) < len(q.Prefix) || !slices.Equal(ns[:len(q.Prefix)], q.Prefix) ||
			len(ns) < len(q.Suffix) || !slices.Equal(ns[len(ns)-len(q.Suffix):], q.Suffix) {
			continue
		}
		if q.MaxDepth > 0 && len(ns) > q.MaxDepth {
			ns = ns[:q.MaxDepth]
		}
		seen[strings.Join(ns, "\x00")] = ns
	}
	var out [][]string
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		out = append(out, seen[k])
	}
	return page(out, q.Offset, q.Limit), nil
}

// page is items[offset:offset+limit] (limit 0: to the end).
func page[T any](items []T, offset, limit int) []T {
	if offset >= len(items) {
		return nil
	}
	items = items[offset:]
	if limit > 0 && limit < len(items) {
		items = items[:limit]
	}
	return items
}
