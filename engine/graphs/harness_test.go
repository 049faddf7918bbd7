package graphs

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jetgraph/jetgraph/engine/goldentest"
	"github.com/jetgraph/jetgraph/engine/graph"
)

// memStore is an in-memory graph.Store for tests. Values are copied in and out, as a real store
// serializes them.
type memStore struct {
	mu    sync.Mutex
	items map[string]map[string]any
}

func newMemStore() *memStore { return &memStore{items: map[string]map[string]any{}} }

func storeKey(ns []string, key string) string { return strings.Join(ns, ".") + "/" + key }

func (s *memStore) Get(_ context.Context, ns []string, key string) (map[string]any, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.items[storeKey(ns, key)]
	return jsonCopy(v), ok, nil
}

func (s *memStore) Put(_ context.Context, ns []string, key string, value map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[storeKey(ns, key)] = jsonCopy(value)
	return nil
}

func (s *memStore) snapshot() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]any{}
	for k, v := range s.items {
		out[k] = jsonCopy(v)
	}
	return out
}

func jsonCopy(v map[string]any) map[string]any {
	if v == nil {
		return nil
	}
	raw, _ := json.Marshal(v)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// recorder collects a run's stream events.
type recorder struct {
	mu      sync.Mutex
	updates []string
	custom  []any
	chunks  map[string]string // message id -> text streamed
	order   []string
}

func (r *recorder) sink(e graph.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e.Kind {
	case graph.KindUpdates:
		r.updates = append(r.updates, strings.Join(append(slices.Clone(e.NS), e.Data.(graph.NodeUpdate).Node), "/"))
	case graph.KindCustom:
		r.custom = append(r.custom, e.Data)
	case graph.KindMessages:
		c := e.Data.(graph.MessageChunk).Chunk
		if r.chunks == nil {
			r.chunks = map[string]string{}
		}
		if _, ok := r.chunks[c.ID]; !ok {
			r.order = append(r.order, c.ID)
		}
		r.chunks[c.ID] += c.Content
	}
}

// step is one thing a golden case does on its thread.
type step struct {
	Input     any            // a new run with this input
	Command   *graph.Command // a run with this command
	Continue  bool           // a run with no input: resume after an interrupt
	Config    map[string]any // configurable of the run (over the entry's)
	Context   map[string]any // runtime context of the run (over the entry's and the graph's)
	Update    map[string]any // a state update instead of a run ...
	AsNode    string         // ... as this node ...
	InSubtask string         // ... on the checkpoint of this waiting subgraph task ("" root)
}

// stepResult is what a step gave.
type stepResult struct {
	Values      graph.State            `json:"values,omitempty"`
	Interrupted bool                   `json:"interrupted,omitempty"`
	Interrupts  []graph.InterruptValue `json:"interrupts,omitempty"`
	Error       string                 `json:"error,omitempty"`
}

// outcome is what a golden file pins.
type outcome struct {
	Steps       []stepResult     `json:"steps"`
	Checkpoints []string         `json:"checkpoints"`
	State       *graph.Snapshot  `json:"state"`
	History     []graph.Snapshot `json:"history"`
	Store       map[string]any   `json:"store"`
	Updates     []string         `json:"stream_updates"`
	Custom      []any            `json:"stream_custom,omitempty"`
	Streamed    []string         `json:"streamed_messages,omitempty"`
}

const testThread = "thread-1"

// runCase runs steps on a new thread of graph id of reg, with an in-memory saver and store.
func runCase(t *testing.T, reg *Registry, id string, steps []step) (*outcome, *graph.Graph) {
	t.Helper()
	ctx := context.Background()
	e, ok := reg.Get(id)
	if !ok {
		t.Fatalf("no graph %s", id)
	}
	saver, store, rec := graph.NewMemorySaver(), newMemStore(), &recorder{}
	out := &outcome{}
	var g *graph.Graph
	for i, s := range steps {
		cfg := graph.Config{Configurable: map[string]any{}}
		if c, ok := e.Config["configurable"].(map[string]any); ok {
			maps.Copy(cfg.Configurable, c)
		}
		maps.Copy(cfg.Configurable, s.Config)
		cfg.Configurable["thread_id"], cfg.Configurable["user_id"] = testThread, "user-1"
		var err error
		if g, err = e.Build(cfg); err != nil {
			t.Fatalf("step %d: build: %v", i, err)
		}
		if s.Update != nil {
			ref := graph.Ref{ThreadID: testThread}
			if s.InSubtask != "" {
				st, err := g.State(ctx, saver, ref, false)
				if err != nil {
					t.Fatal(err)
				}
				for _, tk := range st.Tasks {
					if tk.Name == s.InSubtask && tk.State != nil {
						ref = *tk.State
					}
				}
			}
			_, err := g.UpdateState(ctx, saver, ref, [][]graph.Update{{{Values: s.Update, AsNode: s.AsNode}}}, nil)
			if err != nil {
				t.Fatalf("step %d: update: %v", i, err)
			}
			out.Steps = append(out.Steps, stepResult{})
			continue
		}
		rctx := map[string]any{}
		maps.Copy(rctx, g.ContextDefaults())
		maps.Copy(rctx, e.Context)
		maps.Copy(rctx, s.Context)
		res, err := g.Run(ctx, graph.RunOptions{ThreadID: testThread, Input: s.Input, Command: s.Command,
			Config: cfg, Context: rctx, Saver: saver, Store: store, Sink: rec.sink})
		r := stepResult{Values: res.Values, Interrupted: res.Interrupted, Interrupts: res.Interrupts}
		if err != nil {
			class, msg := graph.ClassOf(err)
			r.Error = class + ": " + msg
		}
		out.Steps = append(out.Steps, r)
	}
	hist, err := g.History(ctx, saver, graph.Ref{ThreadID: testThread}, graph.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out.History = hist
	for i := len(hist) - 1; i >= 0; i-- {
		out.Checkpoints = append(out.Checkpoints, checkpointLine(hist[i]))
	}
	if out.State, err = g.State(ctx, saver, graph.Ref{ThreadID: testThread}, true); err != nil {
		t.Fatal(err)
	}
	out.Store = store.snapshot()
	out.Updates, out.Custom = rec.updates, rec.custom
	for _, id := range rec.order {
		out.Streamed = append(out.Streamed, rec.chunks[id])
	}
	return out, g
}

// checkpointLine is "step source [writes] -> [next]".
func checkpointLine(s graph.Snapshot) string {
	raw, _ := json.Marshal(s.Metadata["step"])
	var writes []string
	if w, ok := s.Metadata["writes"].(map[string]any); ok {
		writes = slices.Sorted(maps.Keys(w))
	}
	src, _ := s.Metadata["source"].(string)
	return string(raw) + " " + src + " [" + strings.Join(writes, ",") + "] -> [" + strings.Join(s.Next, ",") + "]"
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{32}\b`)
	timeRE = regexp.MustCompile(`"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"`)
)

// normalize makes v's JSON stable: UUIDs and hex ids (random message ids of the input,
// checkpoint ids, task ids, interrupt ids, and the ids derived from them) become <id-N> in order
// of first appearance, and timestamps become <time>.
func normalize(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	raw = uuidRE.ReplaceAllFunc(raw, func(b []byte) []byte {
		if _, ok := ids[string(b)]; !ok {
			ids[string(b)] = "<id-" + itoa(len(ids)+1) + ">"
		}
		return []byte(ids[string(b)])
	})
	return append(timeRE.ReplaceAll(raw, []byte(`"<time>"`)), '\n')
}

func itoa(n int) string { raw, _ := json.Marshal(n); return string(raw) }

// golden compares got with testdata/<name>.golden.json (goldentest rewrites it).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldentest.Check(t, filepath.Join("testdata", name+".golden.json"), got)
}
