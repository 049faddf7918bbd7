package runs

import (
	"context"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// Streamers returns a Streamer that begins and ends a run on each of ss, in order, and gives
// the run's graph events to each one's sink. Nil streamers are skipped; with none left it
// returns nil (the scheduler then streams nothing), with one, that one.
func Streamers(ss ...Streamer) Streamer {
	var list multi
	for _, s := range ss {
		if s != nil {
			list = append(list, s)
		}
	}
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	return list
}

// multi fans a run's stream out to several streamers.
type multi []Streamer

// Begin begins the run on every streamer and returns a sink feeding each of their sinks.
func (m multi) Begin(ctx context.Context, rec engine.RunRecord) graph.Sink {
	var sinks []graph.Sink
	for _, s := range m {
		if sink := s.Begin(ctx, rec); sink != nil {
			sinks = append(sinks, sink)
		}
	}
	switch len(sinks) {
	case 0:
		return nil
	case 1:
		return sinks[0]
	}
	return func(e graph.Event) {
		for _, sink := range sinks {
			sink(e)
		}
	}
}

// Flush flushes the run on every streamer.
func (m multi) Flush(ctx context.Context, rec engine.RunRecord) {
	for _, s := range m {
		s.Flush(ctx, rec)
	}
}

// End ends the run on every streamer.
func (m multi) End(ctx context.Context, rec engine.RunRecord, fin engine.RunFinishedData) {
	for _, s := range m {
		s.End(ctx, rec, fin)
	}
}

// WithoutTrace returns s with the internal trace events (kinds prefixed graph.TraceModePrefix)
// kept from its sink, but for those of tool calls: for streamers that publish to clients, whose
// events stream mode shows the tools that ran (on_tool_start, on_tool_end) and nothing else of
// the traces.
func WithoutTrace(s Streamer) Streamer {
	if s == nil {
		return nil
	}
	return noTrace{s}
}

type noTrace struct{ Streamer }

// Begin returns s's sink, skipping trace events.
func (n noTrace) Begin(ctx context.Context, rec engine.RunRecord) graph.Sink {
	sink := n.Streamer.Begin(ctx, rec)
	if sink == nil {
		return nil
	}
	return func(e graph.Event) {
		if !e.Kind.Trace() || e.Kind == graphs.TraceToolStart || e.Kind == graphs.TraceToolEnd {
			sink(e)
		}
	}
}
