// Package graphs is the set of graphs a jetgraph process serves: the example graphs shipped in
// the binary (Examples), the react agent template (NewReact), and those a graph.json declares
// (LoadConfig). Default is what a process serves when no graph.json is given.
package graphs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
)

// Factory builds the graph for one run's config. Most graphs ignore the config and return the
// same compiled graph; graph factories build one per run.
type Factory func(cfg graph.Config) (*graph.Graph, error)

// Runnable is a graph as the runner runs it: something that runs with a saver, a store and a
// stream sink, and reads and writes a thread's state through a saver. A Go graph (*graph.Graph)
// is one; a graph hosted in a child process (engine/hosting) is another, which forwards to its
// host: there is one path for runs whatever the graph's language.
type Runnable interface {
	Run(ctx context.Context, o graph.RunOptions) (graph.Result, error)
	State(ctx context.Context, saver graph.Saver, ref graph.Ref, subgraphs bool) (*graph.Snapshot, error)
	History(ctx context.Context, saver graph.Saver, ref graph.Ref, opts graph.ListOptions) ([]graph.Snapshot, error)
	UpdateState(ctx context.Context, saver graph.Saver, ref graph.Ref, supersteps [][]graph.Update, metadata map[string]any) (graph.Ref, error)
	ContextDefaults() map[string]any
}

var _ Runnable = (*graph.Graph)(nil)

// ErrDrained is a run that stopped at a checkpoint because its process is shutting down (a
// hosted graph's run is drained so, see engine/hosting): the run is not over, and another
// process resumes it from that checkpoint.
var ErrDrained = errors.New("graphs: the run stopped at a checkpoint for the process's shutdown")

// Code is a graph written in another language, which a host process runs with that language's
// LangGraph library: a langgraph.json entry such as "./src/agent.py:graph".
type Code struct {
	Language string // LanguagePython or LanguageTypeScript
	// Path is the file (absolute) or, for Python, the dotted module the graph is in.
	Path string
	// Attr is the module's attribute: a compiled graph, or a factory that takes the run's config.
	Attr string
	// Root is the folder of the config file, which relative paths and imports start from.
	Root string
	// Env is the config file's "env": variables its host runs with, over jetgraph's own.
	Env map[string]string
	// Dependencies are the config's local dependencies (folders, absolute, in file order):
	// on a Python host's import path after Root, as the reference servers put them; for
	// TypeScript, the first with a node_modules is the project when Root has none.
	Dependencies []string
}

// Languages of hosted graphs.
const (
	LanguagePython     = "python"
	LanguageTypeScript = "typescript"
)

// Spec is the entry as its host loads it ("./path/file.py:attr" resolved, or "module:attr").
func (c Code) Spec() string { return c.Path + ":" + c.Attr }

// HostedFactory returns the hosted graph a run with cfg runs (a factory graph is built by its
// host for each run from the config).
type HostedFactory func(cfg graph.Config) (Runnable, error)

// Entry is a graph served under an id, with the defaults of its system assistant.
type Entry struct {
	ID string
	// Build makes a Go graph; nil for a hosted graph (Code).
	Build Factory
	// Code, for a graph in another language, is what its host loads; Hosted is set once the
	// host is started (Registry.Host).
	Code        *Code
	Hosted      HostedFactory
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
	if e.ID == "" || (e.Build == nil) == (e.Code == nil) {
		return fmt.Errorf("graphs: register: an entry needs an id and a factory or code")
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

// Build returns the Go graph id runs with cfg. A hosted graph is no Go graph: Runnable runs it.
func (r *Registry) Build(id string, cfg graph.Config) (*graph.Graph, error) {
	e, ok := r.entries[id]
	if !ok {
		return nil, fmt.Errorf("graphs: no graph %q", id)
	}
	if e.Build == nil {
		return nil, fmt.Errorf("graphs: graph %q is written in %s and runs in a host: this is not available for it yet", id, e.Code.Language)
	}
	return e.Build(cfg)
}

// Runnable returns the graph id runs with cfg: a Go graph, or a hosted graph forwarding to its
// host.
func (r *Registry) Runnable(id string, cfg graph.Config) (Runnable, error) {
	e, ok := r.entries[id]
	switch {
	case !ok:
		return nil, fmt.Errorf("graphs: no graph %q", id)
	case e.Build != nil:
		return e.Build(cfg)
	case e.Hosted == nil:
		return nil, fmt.Errorf("graphs: graph %q is written in %s and its host is not started", id, e.Code.Language)
	}
	return e.Hosted(cfg)
}

// Host sets how the hosted graph id runs: at start, before the registry is served.
func (r *Registry) Host(id string, f HostedFactory) error {
	e, ok := r.entries[id]
	if !ok || e.Code == nil {
		return fmt.Errorf("graphs: no hosted graph %q", id)
	}
	e.Hosted = f
	r.entries[id] = e
	return nil
}

// Hosted returns the entries of graphs in another language, in registration order.
func (r *Registry) Hosted() []Entry {
	var out []Entry
	for _, id := range r.order {
		if e := r.entries[id]; e.Code != nil {
			out = append(out, e)
		}
	}
	return out
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
