package runs

import (
	"context"
	"slices"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// recorder is a Streamer that records what it is given.
type recorder struct {
	began, flushed, ended int
	kinds                 []graph.Kind
}

func (r *recorder) Begin(context.Context, engine.RunRecord) graph.Sink {
	r.began++
	return func(e graph.Event) { r.kinds = append(r.kinds, e.Kind) }
}

func (r *recorder) Flush(context.Context, engine.RunRecord) { r.flushed++ }

func (r *recorder) End(context.Context, engine.RunRecord, engine.RunFinishedData) { r.ended++ }

func TestStreamersFanOut(t *testing.T) {
	if Streamers() != nil || Streamers(nil, nil) != nil {
		t.Fatal("no streamers must be nil")
	}
	one := &recorder{}
	if Streamers(nil, one) != Streamer(one) {
		t.Fatal("one streamer must be itself")
	}
	a, b := &recorder{}, &recorder{}
	s := Streamers(WithoutTrace(a), b)
	sink := s.Begin(context.Background(), engine.RunRecord{})
	for _, k := range []graph.Kind{graph.KindValues, graphs.TraceLLMStart, graph.KindMessages, graphs.TraceToolStart} {
		sink(graph.Event{Kind: k})
	}
	s.Flush(context.Background(), engine.RunRecord{})
	s.End(context.Background(), engine.RunRecord{}, engine.RunFinishedData{})
	if a.began != 1 || b.began != 1 || a.flushed != 1 || b.flushed != 1 || a.ended != 1 || b.ended != 1 {
		t.Errorf("begun %d %d, flushed %d %d, ended %d %d", a.began, b.began, a.flushed, b.flushed, a.ended, b.ended)
	}
	if !slices.Equal(a.kinds, []graph.Kind{graph.KindValues, graph.KindMessages, graphs.TraceToolStart}) || len(b.kinds) != 4 {
		t.Errorf("without trace got %v, the other %v", a.kinds, b.kinds)
	}
}
