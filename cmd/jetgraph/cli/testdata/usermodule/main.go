// Command mygraphs serves its own graphs, and a tool written in Go, on the jetgraph runtime.
package main

import (
	"context"
	"strings"

	"github.com/jetgraph/jetgraph/cmd/jetgraph/cli"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// State is the greeter's state: a channel per JSON field.
type State struct {
	Name     string `json:"name,omitempty"`
	Greeting string `json:"greeting,omitempty"`
}

// shout is a tool the react agent's model may call.
var shout = graphs.Tool{
	Name:        "shout",
	Description: "Returns its text in capitals.",
	Parameters: map[string]any{"type": "object", "required": []any{"text"},
		"properties": map[string]any{"text": map[string]any{"type": "string"}}},
	Run: func(ctx context.Context, args map[string]any) (string, error) {
		text, _ := args["text"].(string)
		return strings.ToUpper(text), nil
	},
}

func main() {
	greet := graph.Typed(func(ctx context.Context, s State, rt *graph.Runtime) (State, error) {
		return State{Greeting: "Hello, " + s.Name + "!"}, nil
	})
	greeter := graph.Channels[State](graph.NewBuilder("greeter")).
		Node("greet", greet).Edge(graph.Start, "greet").MustCompile(graph.CompileOptions{})
	shouter, err := graphs.NewReact(graphs.ReactSettings{Name: "shouter", Tools: []graphs.Tool{shout}})
	if err != nil {
		panic(err)
	}

	reg := graphs.NewRegistry()
	reg.MustRegister(graphs.Entry{ID: "greeter", Build: graphs.Static(greeter)})
	reg.MustRegister(graphs.Entry{ID: "shouter", Build: graphs.Static(shouter)})
	cli.Main(cli.Program{Graphs: reg, Tools: []graphs.Tool{shout}})
}
