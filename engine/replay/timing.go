package replay

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// CallTiming is what a run's trace says of one of its model calls.
type CallTiming struct {
	Node  string    // the node whose task made the call
	Start time.Time // when the call began: calls of a node are matched in this order
	// LatencyMS is the call's duration; FirstTokenMS how long the first chunk took (nil: not
	// recorded); Cost the price table's cost in USD (nil: the model has no price).
	LatencyMS    float64
	FirstTokenMS *float64
	Cost         *float64
}

// ModelCalls reads the model calls of a run from its trace. The replay reads the runtime's log
// only; the trace belongs to the tracing context, so the assembly provides this.
type ModelCalls interface {
	// ModelCalls returns the run's traced model calls; found is false when the run has no
	// trace (tracing off for it).
	ModelCalls(ctx context.Context, runID string) (calls []CallTiming, found bool, err error)
}

// Trace states of a Run.
const (
	TraceJoined = "joined" // model calls carry cost and latency
	TraceAbsent = "absent" // no trace: no cost or latency to show
)

// JoinTraces adds to every model call of t's runs its latency, time to first token and cost from
// the run's trace. A model call is matched to the traced call of the same node and rank in the
// run (the k-th call node n made in the run is n's k-th traced call, in start order): a node's
// writes hold its model answers in the order it received them.
func (t *Thread) JoinTraces(ctx context.Context, mc ModelCalls) error {
	for _, r := range t.Runs {
		calls, found, err := mc.ModelCalls(ctx, r.RunID)
		if err != nil {
			return fmt.Errorf("replay: trace of run %s: %w", r.RunID, err)
		}
		if !found {
			r.Trace = TraceAbsent
			continue
		}
		r.Trace = TraceJoined
		slices.SortStableFunc(calls, func(a, b CallTiming) int { return a.Start.Compare(b.Start) })
		byNode := map[string][]CallTiming{}
		for _, c := range calls {
			byNode[c.Node] = append(byNode[c.Node], c)
		}
		for i := range r.Steps {
			for j := range r.Steps[i].ModelCalls {
				c := &r.Steps[i].ModelCalls[j]
				q := byNode[c.Node]
				if len(q) == 0 {
					continue
				}
				lat := q[0].LatencyMS
				c.LatencyMS, c.FirstTokenMS, c.Cost = &lat, q[0].FirstTokenMS, q[0].Cost
				byNode[c.Node] = q[1:]
			}
		}
	}
	return nil
}
