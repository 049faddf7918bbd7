package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/hosting"
)

// TestHostConformance holds both hosts to one protocol (engine/hosting/PROTOCOL.md): the same
// graph ("visits", written in Python and in TypeScript) run through hosting.Graph with the real
// libraries must give the same answers, checkpoints and writes in jetgraph's shapes, its store
// calls served by jetgraph's side.
func TestHostConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	for _, lang := range []string{graphs.LanguagePython, graphs.LanguageTypeScript} {
		t.Run(lang, func(t *testing.T) {
			opts := hosting.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			config := hostedTypeScriptConfig
			if lang == graphs.LanguagePython {
				config = hostedPythonConfig
				opts.Python = ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
			} else {
				ensureTypeScriptProject(t)
			}
			reg, err := graphs.LoadConfig(config)
			if err != nil {
				t.Fatal(err)
			}
			hosts, err := hosting.Attach(reg, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, h := range hosts {
					h.Close()
				}
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			for _, h := range hosts {
				if err := h.WaitReady(ctx); err != nil {
					t.Fatal(err)
				}
			}
			conformance(ctx, t, reg)
			drawingConformance(ctx, t, reg)
		})
	}
}

func conformance(ctx context.Context, t *testing.T, reg *graphs.Registry) {
	cfg := graph.Config{Configurable: map[string]any{"run_id": "run-1", "graph_id": "visits"}}
	g, err := reg.Runnable("visits", cfg)
	if err != nil {
		t.Fatal(err)
	}
	saver, store := graph.NewMemorySaver(), newItems()
	var mu sync.Mutex
	var modes []string
	sink := func(e graph.Event) {
		mu.Lock()
		defer mu.Unlock()
		modes = append(modes, string(e.Kind))
	}
	run := graph.RunOptions{ThreadID: "th", Config: cfg, Saver: saver, Store: store, Sink: sink,
		Input:       map[string]any{"messages": []any{map[string]any{"role": "user", "content": "Ada"}}},
		Metadata:    map[string]any{"run_id": "run-1", "graph_id": "visits"},
		StreamModes: []engine.StreamMode{engine.StreamValues, engine.StreamUpdates}}
	res, err := g.Run(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || len(res.Interrupts) != 1 || fmt.Sprint(res.Interrupts[0].Value) != "map[question:continue?]" || res.Interrupts[0].ID == "" {
		t.Fatalf("the run's end: %+v", res)
	}
	if got := texts(res.Values); got != "Ada|hello Ada (visit 1)" {
		t.Errorf("values %s", got)
	}
	mu.Lock()
	for _, m := range []string{"values", "updates", "checkpoints"} {
		if !slices.Contains(modes, m) {
			t.Errorf("no %s event among %v", m, modes)
		}
	}
	if slices.Contains(modes, "messages") {
		t.Errorf("messages events though the run streams values and updates only: %v", modes)
	}
	mu.Unlock()

	// The checkpoints are jetgraph's: integer versions, the run's metadata, the interrupt as a
	// pending write in the shape the projections read.
	tup, err := saver.Get(ctx, graph.Ref{ThreadID: "th"})
	if err != nil || tup == nil {
		t.Fatalf("latest checkpoint: %v %v", tup, err)
	}
	if tup.Metadata["run_id"] != "run-1" || fmt.Sprint(tup.Metadata["step"]) != "1" || tup.Parent == nil {
		t.Errorf("checkpoint metadata %v, parent %v", tup.Metadata, tup.Parent)
	}
	if tup.Checkpoint.ChannelVersions["messages"] == 0 {
		t.Errorf("channel versions %v", tup.Checkpoint.ChannelVersions)
	}
	var ivs []graph.InterruptValue
	for _, w := range tup.Writes {
		if w.Channel == graph.Interrupt {
			if err := json.Unmarshal(w.Value, &ivs); err != nil {
				t.Errorf("interrupt write %s: %v", w.Value, err)
			}
		}
	}
	if len(ivs) != 1 || ivs[0].ID != res.Interrupts[0].ID {
		t.Errorf("interrupt writes %v, want the run's interrupt", ivs)
	}
	if it, ok := store.items["users/Ada/profile"]; !ok || fmt.Sprint(it.Value["visits"]) != "1" {
		t.Errorf("store %v", store.items)
	}

	snap, err := g.State(ctx, saver, graph.Ref{ThreadID: "th"}, false)
	if err != nil || snap == nil {
		t.Fatalf("state: %v %v", snap, err)
	}
	if fmt.Sprint(snap.Next) != "[ask]" || len(snap.Tasks) != 1 || len(snap.Tasks[0].Interrupts) != 1 || snap.Ref.ID != tup.Ref.ID {
		t.Errorf("state %+v", snap)
	}

	run.Input, run.Command = nil, &graph.Command{Resume: "yes"}
	run.Config.Configurable["run_id"], run.Metadata["run_id"] = "run-2", "run-2"
	res, err = g.Run(ctx, run)
	if err != nil || res.Interrupted {
		t.Fatalf("resumed run: %+v %v", res, err)
	}
	if got := texts(res.Values); got != "Ada|hello Ada (visit 1)|Ada said yes" {
		t.Errorf("resumed values %s", got)
	}
	hist, err := g.History(ctx, saver, graph.Ref{ThreadID: "th"}, graph.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, s := range hist {
		steps = append(steps, fmt.Sprint(s.Metadata["step"]))
	}
	if strings.Join(steps, ",") != "2,1,0,-1" {
		t.Errorf("history steps %v", steps)
	}
	ref, err := g.UpdateState(ctx, saver, graph.Ref{ThreadID: "th"},
		[][]graph.Update{{{Values: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "more"}}}, AsNode: "ask"}}}, nil)
	if err != nil || ref.ID == "" {
		t.Fatalf("update state: %v %v", ref, err)
	}
	snap, err = g.State(ctx, saver, graph.Ref{ThreadID: "th"}, false)
	if err != nil || snap.Ref.ID != ref.ID || !strings.HasSuffix(texts(snap.Values), "|more") || snap.Metadata["source"] != "update" {
		t.Errorf("state after the update: %+v %v", snap, err)
	}
}

// texts joins the contents of a state's messages.
func texts(values graph.State) string {
	ms, _ := values["messages"].([]any)
	var out []string
	for _, m := range ms {
		mm, _ := m.(map[string]any)
		out = append(out, fmt.Sprint(mm["content"]))
	}
	return strings.Join(out, "|")
}

// items is an in-memory store of the hosting.ItemStore calls, for the conformance test.
type items struct {
	mu    sync.Mutex
	items map[string]engine.Item
}

func newItems() *items { return &items{items: map[string]engine.Item{}} }

func itemKey(ns []string, key string) string { return strings.Join(append(slices.Clone(ns), key), "/") }

func (s *items) Get(ctx context.Context, ns []string, key string) (map[string]any, bool, error) {
	it, ok, err := s.GetItem(ctx, ns, key)
	return it.Value, ok, err
}

func (s *items) Put(ctx context.Context, ns []string, key string, value map[string]any) error {
	return s.PutItem(ctx, ns, key, value, nil, nil)
}

func (s *items) GetItem(_ context.Context, ns []string, key string) (engine.Item, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[itemKey(ns, key)]
	return it, ok, nil
}

func (s *items) PutItem(_ context.Context, ns []string, key string, value map[string]any, _ any, _ *float64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := engine.At(time.Now())
	s.items[itemKey(ns, key)] = engine.Item{Namespace: ns, Key: key, Value: value, CreatedAt: now, UpdatedAt: now}
	return nil
}

func (s *items) Delete(_ context.Context, ns []string, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.items, itemKey(ns, key))
	return nil
}

func (s *items) Search(context.Context, engine.StoreQuery) ([]engine.Item, error) { return nil, nil }

func (s *items) ListNamespaces(context.Context, engine.NamespaceQuery) ([][]string, error) {
	return nil, nil
}

// drawingConformance holds both hosts' graph requests to one drawing of "visits": the same nodes
// and edges (in any order: the libraries list them differently), without the nodes' class paths.
func drawingConformance(ctx context.Context, t *testing.T, reg *graphs.Registry) {
	r, err := reg.Runnable("visits", graph.Config{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := r.(*hosting.Graph).Drawing(ctx, graph.XrayAll)
	if err != nil {
		t.Fatalf("graph request: %v", err)
	}
	var drawn struct {
		Nodes []struct {
			ID   string         `json:"id"`
			Data map[string]any `json:"data"`
		} `json:"nodes"`
		Edges []struct{ Source, Target string } `json:"edges"`
	}
	if err := json.Unmarshal(raw, &drawn); err != nil {
		t.Fatalf("drawing %s: %v", raw, err)
	}
	var nodes, edges []string
	for _, n := range drawn.Nodes {
		if _, ok := n.Data["id"]; ok {
			t.Errorf("node %s keeps its class path: %s", n.ID, raw)
		}
		nodes = append(nodes, n.ID)
	}
	for _, e := range drawn.Edges {
		edges = append(edges, e.Source+">"+e.Target)
	}
	slices.Sort(nodes)
	slices.Sort(edges)
	if want := []string{"__end__", "__start__", "ask", "greet"}; !slices.Equal(nodes, want) {
		t.Errorf("nodes %v, want %v", nodes, want)
	}
	if want := []string{"__start__>greet", "ask>__end__", "greet>ask"}; !slices.Equal(edges, want) {
		t.Errorf("edges %v, want %v", edges, want)
	}
}
