package cli_test

import (
	"context"

	"github.com/jetgraph/jetgraph/cmd/jetgraph/cli"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// The main function of a program that serves its own graph: it is jetgraph (serve by default,
// events, projections rebuild, bench, version, every flag) with that graph instead of the
// examples. See the README's "Your own graph in Go" for a whole module.
func ExampleMain() {
	hello := graph.NewBuilder("hello").Channel("greeting", graph.LastValue()).
		Node("greet", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
			return map[string]any{"greeting": "hello"}, nil
		}).
		Edge(graph.Start, "greet").MustCompile(graph.CompileOptions{})
	reg := graphs.NewRegistry()
	reg.MustRegister(graphs.Entry{ID: "hello", Build: graphs.Static(hello), Description: "Says hello."})
	cli.Main(cli.Program{Graphs: reg})
}
