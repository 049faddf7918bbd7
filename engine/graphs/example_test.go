package graphs_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// shout is a tool written in Go: its Parameters are the JSON Schema the model sees, Run gets the
// arguments the model chose.
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

// lastWords prints the text of the last message of a run's state.
func lastWords(res graph.Result) {
	msgs := graph.MessagesOf(res.Values, "messages")
	fmt.Println(msgs[len(msgs)-1].Text())
}

// A react agent that may call a Go tool besides the built-in ones. Without a Model it runs the
// offline fake model, which calls a tool on "<tool>: <input>".
func ExampleTool() {
	g, err := graphs.NewReact(graphs.ReactSettings{
		Name:  "shouter",
		Tools: append(graphs.BuiltinTools(), shout),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := g.Run(context.Background(), graph.RunOptions{ThreadID: "t1",
		Input: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "shout: hello"}}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	lastWords(res)
	// Output: shout: HELLO
}

// A program with graphs and tools of its own lets a graph.json name them: a string entry serves
// one of its graphs under a new id, a react entry lists its tools.
func ExampleCatalog() {
	greet := graph.NewBuilder("greeter").Channel("greeting", graph.LastValue()).
		Node("greet", func(ctx context.Context, in any, rt *graph.Runtime) (any, error) {
			return map[string]any{"greeting": "hello"}, nil
		}).Edge(graph.Start, "greet").MustCompile(graph.CompileOptions{})
	mine := graphs.NewRegistry()
	mine.MustRegister(graphs.Entry{ID: "greeter", Build: graphs.Static(greet)})
	cat := graphs.Catalog{Graphs: mine, Tools: []graphs.Tool{shout}}
	reg, err := cat.Parse("graph.json", []byte(`{"graphs": {
		"hello": "greeter",
		"loud": {"template": "react", "tools": ["shout", "calculator"]}
	}}`), func(string) (string, bool) { return "", false })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(reg.IDs())
	g, _ := reg.Build("loud", graph.Config{})
	res, err := g.Run(context.Background(), graph.RunOptions{ThreadID: "t2",
		Input: map[string]any{"messages": []any{map[string]any{"role": "user", "content": "shout: it works"}}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	lastWords(res)
	// Output:
	// [hello loud]
	// shout: IT WORKS
}
