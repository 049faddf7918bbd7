package graph_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
)

// The state of a graph as a Go type: Channels declares a channel per JSON field (the reducer tag
// picks how updates are merged), Typed adapts nodes that read S and return a partial update U,
// and TypedRoute a conditional edge that reads S.
func Example_typedState() {
	type State struct {
		Messages []engine.Message `json:"messages" reducer:"messages"`
		Shouts   int              `json:"shouts"`
	}
	type Update struct {
		Messages []engine.Message `json:"messages,omitempty"`
		Shouts   int              `json:"shouts,omitempty"`
	}
	shout := graph.Typed(func(ctx context.Context, s State, rt *graph.Runtime) (Update, error) {
		last := s.Messages[len(s.Messages)-1]
		reply := engine.NewMessage(engine.MessageAI, strings.ToUpper(last.Text()))
		return Update{Messages: []engine.Message{reply}, Shouts: s.Shouts + 1}, nil
	})
	again := graph.TypedRoute(func(ctx context.Context, s State, rt *graph.Runtime) (any, error) {
		if s.Shouts < 2 {
			return "shout", nil
		}
		return graph.End, nil
	})

	b := graph.Channels[State](graph.NewBuilder("shouter"))
	b.Node("shout", shout).Edge(graph.Start, "shout").Branch("shout", again, "shout", graph.End)
	g := b.MustCompile(graph.CompileOptions{})

	res, err := g.Run(context.Background(), graph.RunOptions{
		Input: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hello"}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range graph.MessagesOf(res.Values, "messages") {
		fmt.Println(m.Type, m.Text())
	}
	fmt.Println("shouts:", res.Values["shouts"])
	// Output:
	// human hello
	// ai HELLO
	// ai HELLO
	// shouts: 2
}
