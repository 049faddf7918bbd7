package graph

import (
	"context"
	"errors"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
)

func TestFailedNodeAndWhatClientsSee(t *testing.T) {
	failing := func(err error) NodeFunc {
		return func(ctx context.Context, in any, rt *Runtime) (any, error) { return nil, err }
	}
	single := func(fn NodeFunc) *Graph {
		b := NewBuilder("g").Channel("x", LastValue())
		b.Node("work", fn).Edge(Start, "work")
		return b.MustCompile(CompileOptions{})
	}
	inner := single(failing(errors.New("inner broke")))
	outer := NewBuilder("outer").Channel("x", LastValue()).Subgraph("sub", inner).Edge(Start, "sub").MustCompile(CompileOptions{})
	cause := errors.New("GET https://api.example/weather?api_key=k: connection refused")
	tests := []struct {
		name             string
		g                *Graph
		node, class, msg string
	}{
		{"a plain error", single(failing(errors.New("boom"))), "work", "Exception", "boom"},
		{"a node error", single(failing(Errorf("CustomError", "Boo!"))), "work", "CustomError", "Boo!"},
		{"an engine error shows its detail, not its cause",
			single(failing(engine.E(engine.Op("tools.weather"), "the weather service failed", cause))), "work", "Exception", "the weather service failed"},
		{"an update a node cannot make", single(func(ctx context.Context, in any, rt *Runtime) (any, error) { return "not a dict", nil }),
			"work", "InvalidUpdateError", "Expected dict, got string"},
		{"a subgraph's node, under its parent", outer, "sub|work", "Exception", "inner broke"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.g.Run(context.Background(), RunOptions{Input: map[string]any{"x": 1}})
			if err == nil {
				t.Fatal("the run did not fail")
			}
			if got := FailedNode(err); got != tt.node {
				t.Errorf("FailedNode = %q, want %q (%v)", got, tt.node, err)
			}
			if class, msg := ClassOf(err); class != tt.class || msg != tt.msg {
				t.Errorf("ClassOf = %q, %q, want %q, %q", class, msg, tt.class, tt.msg)
			}
		})
	}
	if got := FailedNode(recursionError(3)); got != "" {
		t.Errorf("a failure of no node names %q", got)
	}
}
