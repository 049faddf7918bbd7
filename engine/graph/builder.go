package graph

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
)

// NodeFunc is a node: it reads its input (the state, or a Send's argument) and returns an update
// (a map of channel values), a Command, or nil.
type NodeFunc func(ctx context.Context, input any, rt *Runtime) (any, error)

// RouteFunc picks where to go after a node: a node name or End, a list of them, a Send or a list
// of Sends (or a mix in a []any).
type RouteFunc func(ctx context.Context, state State, rt *Runtime) (any, error)

// Builder assembles a graph. Its methods record the first mistake and Compile reports it.
type Builder struct {
	name      string
	channels  map[string]Spec
	keys      []string // state keys in the order they were added
	nodes     map[string]*node
	order     []string // node names in the order they were added
	edges     map[string][]string
	branches  map[string][]branch
	input     []string
	output    []string
	config    map[string]any
	context   map[string]any
	contextDe map[string]any
	err       error
}

type node struct {
	name string
	fn   NodeFunc
	sub  *Graph
	ends []string // where a Command may send it, for drawing
}

type branch struct {
	route RouteFunc
	ends  []string
}

// NewBuilder starts a graph named name.
func NewBuilder(name string) *Builder {
	return &Builder{name: name, channels: map[string]Spec{}, nodes: map[string]*node{},
		edges: map[string][]string{}, branches: map[string][]branch{}}
}

func (b *Builder) fail(format string, args ...any) *Builder {
	if b.err == nil {
		b.err = fmt.Errorf("graph %s: "+format, append([]any{b.name}, args...)...)
	}
	return b
}

// Channel adds a state key with its channel.
func (b *Builder) Channel(key string, spec Spec) *Builder {
	if _, dup := b.channels[key]; dup {
		return b.fail("channel %q added twice", key)
	}
	if strings.HasPrefix(key, "__") || strings.HasPrefix(key, "branch:") {
		return b.fail("channel name %q is reserved", key)
	}
	if len(key) > engine.MaxNameBytes {
		return b.fail("channel name of %d bytes, over the limit of %d (MaxNameBytes)", len(key), engine.MaxNameBytes)
	}
	b.channels[key] = spec
	b.keys = append(b.keys, key)
	return b
}

// InputKeys restricts what a run's input may set (default: every state key).
func (b *Builder) InputKeys(keys ...string) *Builder { b.input = keys; return b }

// OutputKeys restricts what a run returns (default: every state key).
func (b *Builder) OutputKeys(keys ...string) *Builder { b.output = keys; return b }

// ConfigSchema sets the JSON Schema of the graph's configurable values.
func (b *Builder) ConfigSchema(schema map[string]any) *Builder { b.config = schema; return b }

// ContextSchema sets the JSON Schema of the runtime context and its defaults.
func (b *Builder) ContextSchema(schema, defaults map[string]any) *Builder {
	b.context, b.contextDe = schema, defaults
	return b
}

// NodeOption configures a node.
type NodeOption func(*node)

// Ends declares where a node's Command may go, so the drawn graph shows those edges.
func Ends(names ...string) NodeOption { return func(n *node) { n.ends = names } }

// Node adds a node.
func (b *Builder) Node(name string, fn NodeFunc, opts ...NodeOption) *Builder {
	return b.addNode(&node{name: name, fn: fn}, opts)
}

// Subgraph adds a compiled graph as a node. It runs with its own checkpoints in the namespace
// "<name>:<task id>"; its input and output are the state keys the two graphs share.
func (b *Builder) Subgraph(name string, g *Graph, opts ...NodeOption) *Builder {
	return b.addNode(&node{name: name, sub: g}, opts)
}

func (b *Builder) addNode(n *node, opts []NodeOption) *Builder {
	if n.name == "" || n.name == Start || n.name == End || strings.ContainsAny(n.name, ":|") {
		return b.fail("invalid node name %q", n.name)
	}
	if len(n.name) > engine.MaxNameBytes {
		return b.fail("node name of %d bytes, over the limit of %d (MaxNameBytes)", len(n.name), engine.MaxNameBytes)
	}
	if _, dup := b.nodes[n.name]; dup {
		return b.fail("node %q added twice", n.name)
	}
	if _, clash := b.channels[n.name]; clash {
		return b.fail("node %q has the name of a state key", n.name)
	}
	for _, o := range opts {
		o(n)
	}
	b.nodes[n.name] = n
	b.order = append(b.order, n.name)
	return b
}

// Edge adds an edge: to runs in the step after from.
func (b *Builder) Edge(from, to string) *Builder {
	b.edges[from] = append(b.edges[from], to)
	return b
}

// Branch adds conditional edges after from: route decides, on the state with from's update
// applied, where to go; ends lists the possible destinations for drawing (optional).
func (b *Builder) Branch(from string, route RouteFunc, ends ...string) *Builder {
	b.branches[from] = append(b.branches[from], branch{route: route, ends: ends})
	return b
}

// CompileOptions are fixed for every run of a compiled graph.
type CompileOptions struct {
	InterruptBefore []string
	InterruptAfter  []string
}

// Graph is a compiled, immutable graph. It is safe for concurrent runs.
type Graph struct {
	Name            string
	channels        map[string]Spec
	keys            []string
	nodes           map[string]*node
	order           []string
	edges           map[string][]string
	branches        map[string][]branch
	input, output   []string
	configSchema    map[string]any
	contextSchema   map[string]any
	contextDefaults map[string]any
	interruptBefore []string
	interruptAfter  []string
}

// Compile checks the graph and returns it ready to run.
func (b *Builder) Compile(opts CompileOptions) (*Graph, error) {
	if b.err != nil {
		return nil, b.err
	}
	exists := func(n string) bool { _, ok := b.nodes[n]; return ok }
	if len(b.edges[Start]) == 0 && len(b.branches[Start]) == 0 {
		return nil, fmt.Errorf("graph %s: no edge from %s: add one to the first node", b.name, Start)
	}
	for from, tos := range b.edges {
		if from != Start && !exists(from) {
			return nil, fmt.Errorf("graph %s: edge from unknown node %q", b.name, from)
		}
		for _, to := range tos {
			if to != End && !exists(to) {
				return nil, fmt.Errorf("graph %s: edge to unknown node %q", b.name, to)
			}
		}
	}
	for from, bs := range b.branches {
		if from != Start && !exists(from) {
			return nil, fmt.Errorf("graph %s: branch from unknown node %q", b.name, from)
		}
		for _, br := range bs {
			for _, to := range br.ends {
				if to != End && !exists(to) {
					return nil, fmt.Errorf("graph %s: branch to unknown node %q", b.name, to)
				}
			}
		}
	}
	for _, list := range [][]string{opts.InterruptBefore, opts.InterruptAfter} {
		for _, n := range list {
			if n != "*" && !exists(n) {
				return nil, fmt.Errorf("graph %s: interrupt on unknown node %q", b.name, n)
			}
		}
	}
	g := &Graph{
		Name: b.name, channels: b.channels, keys: b.keys, nodes: b.nodes, order: b.order,
		edges: b.edges, branches: b.branches, input: b.input, output: b.output,
		configSchema: b.config, contextSchema: b.context, contextDefaults: b.contextDe,
		interruptBefore: opts.InterruptBefore, interruptAfter: opts.InterruptAfter,
	}
	if g.input == nil {
		g.input = g.keys
	}
	if g.output == nil {
		g.output = g.keys
	}
	return g, nil
}

// MustCompile is Compile for graphs built in code, where a mistake is a programming error.
func (b *Builder) MustCompile(opts CompileOptions) *Graph {
	g, err := b.Compile(opts)
	if err != nil {
		panic(err)
	}
	return g
}

// Nodes returns the node names in the order they were added.
func (g *Graph) Nodes() []string { return slices.Clone(g.order) }

// HasNode reports whether name is a node of the graph.
func (g *Graph) HasNode(name string) bool { _, ok := g.nodes[name]; return ok }

// Keys returns the state keys.
func (g *Graph) Keys() []string { return slices.Clone(g.keys) }

// Subgraphs returns the graph's subgraph nodes by name.
func (g *Graph) Subgraphs() map[string]*Graph {
	out := map[string]*Graph{}
	for _, name := range g.order {
		if n := g.nodes[name]; n.sub != nil {
			out[name] = n.sub
		}
	}
	return out
}

// ContextDefaults returns the default runtime context.
func (g *Graph) ContextDefaults() map[string]any { return g.contextDefaults }

// TriggerChannel reports whether channel ch, when a checkpoint holds a value for it, gives the
// checkpoint a task to run (its state's next is not empty): the input, a node's trigger, or the
// Sends of the last step. A reader of stored checkpoints (the threads projection) tells from it
// whether a thread has anything left to run without building its graph.
func TriggerChannel(ch string) bool {
	return ch == Start || ch == tasksKey || strings.HasPrefix(ch, "branch:to:")
}

// trigger is the channel whose value makes node run in the next step.
func trigger(node string) string {
	if node == Start {
		return Start
	}
	return "branch:to:" + node
}
