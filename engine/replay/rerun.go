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

	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// Build makes the graph a recorded run executed (graphs.Registry.Build is one).
type Build func(graphID string, cfg graph.Config) (*graph.Graph, error)

// Divergence is the first place a re-execution differs from the record.
type Divergence struct {
	RunID string `json:"run_id"`
	Step  int    `json:"step"`
	// Kind is what differs: nodes (another set of nodes ran), writes (a node wrote something
	// else), missing_step (the record has a step the re-execution did not reach), extra_step
	// (the re-execution went further), status (one failed, the other did not), or one of a
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
// which are random for input messages). It stops at the first divergence.
func Rerun(ctx context.Context, t *Thread, build Build, graphID string) (Report, error) {
	saver, store := graph.NewMemorySaver(), &memStore{m: map[string]map[string]any{}}
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
		replayed, err := rootSteps(ctx, g, saver, t.ThreadID, run.RunID)
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
}

func rootSteps(ctx context.Context, g *graph.Graph, saver graph.Saver, threadID, runID string) ([]replayedStep, error) {
	hist, err := g.History(ctx, saver, graph.Ref{ThreadID: threadID}, graph.ListOptions{Metadata: map[string]any{"run_id": runID}})
	if err != nil {
		return nil, err
	}
	out := make([]replayedStep, 0, len(hist))
	for i := len(hist) - 1; i >= 0; i-- {
		s := replayedStep{writes: map[string]any{}}
		raw, _ := json.Marshal(hist[i].Metadata)
		var md checkpointMeta
		if err := json.Unmarshal(raw, &md); err != nil {
			return nil, err
		}
		s.step = md.Step
		for node, w := range md.Writes {
			s.writes[node] = decode(w)
		}
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

// memStore is the store a re-execution reads and writes: in memory, empty at first.
type memStore struct {
	mu sync.Mutex
	m  map[string]map[string]any
}

func (s *memStore) Get(_ context.Context, ns []string, key string) (map[string]any, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[strings.Join(ns, "\x00")+"\x00"+key]
	return v, ok, nil
}

func (s *memStore) Put(_ context.Context, ns []string, key string, value map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[strings.Join(ns, "\x00")+"\x00"+key] = value
	return nil
}
