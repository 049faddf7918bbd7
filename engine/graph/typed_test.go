package graph

import (
	"context"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
)

type counterState struct {
	Messages []engine.Message `json:"messages" reducer:"messages"`
	Count    int              `json:"count"`
	Log      []string         `json:"log" reducer:"append"`
}

type counterUpdate struct {
	Messages []engine.Message `json:"messages,omitempty"`
	Count    int              `json:"count,omitempty"`
	Log      []string         `json:"log,omitempty"`
}

func TestTypedState(t *testing.T) {
	b := Channels[counterState](NewBuilder("typed"))
	b.Node("counter", Typed(func(ctx context.Context, s counterState, rt *Runtime) (counterUpdate, error) {
		last := s.Messages[len(s.Messages)-1].Text()
		return counterUpdate{Count: s.Count + 1, Log: []string{last}}, nil
	}))
	b.Node("reply", Typed(func(ctx context.Context, s counterState, rt *Runtime) (*counterUpdate, error) {
		return &counterUpdate{Messages: []engine.Message{engine.NewMessage(engine.MessageAI, "seen")}}, nil
	}))
	b.Edge(Start, "counter").Branch("counter", TypedRoute(func(ctx context.Context, s counterState, rt *Runtime) (any, error) {
		if s.Count < 3 {
			return "counter", nil
		}
		return "reply", nil
	}), "counter", "reply").Edge("reply", End)
	g, err := b.Compile(CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.Run(context.Background(), RunOptions{Input: map[string]any{"messages": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	var got counterState
	if err := convert(res.Values, &got); err != nil {
		t.Fatal(err)
	}
	if got.Count != 3 || len(got.Log) != 3 || len(got.Messages) != 2 || got.Messages[1].Text() != "seen" {
		t.Fatalf("state = %+v", got)
	}
	schemas := g.Schemas()
	if schemas.State["properties"].(map[string]any)["messages"].(map[string]any)["langgraph_type"] != "messages" {
		t.Fatalf("typed messages field is not a messages channel: %v", schemas.State)
	}

	if _, err := Channels[int](NewBuilder("bad")).Compile(CompileOptions{}); err == nil {
		t.Fatal("Channels of a non-struct must fail")
	}
}
