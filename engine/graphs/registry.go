// Package graphs is the set of graphs a jetgraph process serves: the example graphs shipped in
// the binary (Examples), the react agent template (NewReact), and those a graph.json declares
// (LoadConfig). Default is what a process serves when no graph.json is given.
package graphs

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
)

// Factory builds the graph for one run's config. Most graphs ignore the config and return the
// same compiled graph; graph factories build one per run.
type Factory func(cfg graph.Config) (*graph.Graph, error)

// Entry is a graph served under an id, with the defaults of its system assistant.
type Entry struct {
	ID          string
	Build       Factory
	Description string
	// Config and Context are the system assistant's config ({"configurable": ...}) and context.
	Config  map[string]any
	Context map[string]any
}

// Static returns a factory that always gives g.
func Static(g *graph.Graph) Factory {
	return func(graph.Config) (*graph.Graph, error) { return g, nil }
}

// Registry maps graph ids to graphs. It is built at start and read-only afterwards.
type Registry struct {
	entries map[string]Entry
	order   []string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{entries: map[string]Entry{}} }

// Register adds e; an id registered twice is an error.
func (r *Registry) Register(e Entry) error {
	if e.ID == "" || e.Build == nil {
		return fmt.Errorf("graphs: register: an entry needs an id and a factory")
	}
	if _, dup := r.entries[e.ID]; dup {
		return fmt.Errorf("graphs: graph %q registered twice", e.ID)
	}
	r.entries[e.ID] = e
	r.order = append(r.order, e.ID)
	return nil
}

// MustRegister is Register for graphs built in code, where a mistake is a programming error.
func (r *Registry) MustRegister(e Entry) {
	if err := r.Register(e); err != nil {
		panic(err)
	}
}

// IDs returns the registered graph ids in registration order.
func (r *Registry) IDs() []string { return slices.Clone(r.order) }

// Len returns how many graphs are registered.
func (r *Registry) Len() int { return len(r.order) }

// Get returns the entry of id.
func (r *Registry) Get(id string) (Entry, bool) {
	e, ok := r.entries[id]
	return e, ok
}

// Entries returns the entries in registration order. Their Config and Context maps are copies:
// changing them does not change the registry.
func (r *Registry) Entries() []Entry {
	out := make([]Entry, 0, len(r.order))
	for _, id := range r.order {
		e := r.entries[id]
		e.Config, e.Context = engine.CloneMap(e.Config), engine.CloneMap(e.Context)
		out = append(out, e)
	}
	return out
}

// Has reports whether r serves the graph id.
func (r *Registry) Has(id string) bool {
	_, ok := r.entries[id]
	return ok
}

// Build returns the graph id runs with cfg.
func (r *Registry) Build(id string, cfg graph.Config) (*graph.Graph, error) {
	e, ok := r.entries[id]
	if !ok {
		return nil, fmt.Errorf("graphs: no graph %q", id)
	}
	return e.Build(cfg)
}

// ExamplesSet is the name Select accepts for every example graph (ExampleIDs).
const ExamplesSet = "examples"

// Select returns a registry of the named graphs only, in r's order. A name is a graph id or
// ExamplesSet; a name r does not have is an error that lists what r has.
func (r *Registry) Select(names []string) (*Registry, error) {
	want := map[string]bool{}
	for _, n := range names {
		ids := []string{n}
		if n == ExamplesSet {
			ids = ExampleIDs()
		}
		for _, id := range ids {
			if _, ok := r.entries[id]; !ok {
				return nil, fmt.Errorf("no graph %q is available (known: %s)", id, strings.Join(r.order, ", "))
			}
			want[id] = true
		}
	}
	out := NewRegistry()
	for _, id := range r.order {
		if want[id] {
			out.MustRegister(r.entries[id])
		}
	}
	return out, nil
}

// Default is what a process serves without a graph.json: the example graphs and a react agent
// (template react with its default settings: the offline fake model and every built-in tool).
func Default() *Registry {
	r := Examples()
	g, err := NewReact(ReactSettings{})
	if err != nil {
		panic(err) // the default settings always compile
	}
	r.MustRegister(Entry{ID: "react", Build: Static(g), Description: reactDescription})
	return r
}
