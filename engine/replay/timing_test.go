package replay

import (
	"context"
	"testing"
	"time"
)

type fakeTrace map[string][]CallTiming

func (f fakeTrace) ModelCalls(_ context.Context, runID string) ([]CallTiming, bool, error) {
	c, ok := f[runID]
	return c, ok, nil
}

// JoinTraces matches a node's k-th model call in a run with the node's k-th traced call in
// start order, whatever order the trace lists them in; a run without a trace is marked absent.
func TestJoinTraces(t *testing.T) {
	t0 := time.Now()
	cost := 0.5
	th := &Thread{Runs: []*Run{
		{RunID: "a", Steps: []Step{
			{ModelCalls: []ModelCall{{Node: "agent"}}},
			{ModelCalls: []ModelCall{{Node: "other"}}},
			{ModelCalls: []ModelCall{{Node: "agent"}}},
		}},
		{RunID: "b", Steps: []Step{{ModelCalls: []ModelCall{{Node: "agent"}}}}},
	}}
	tr := fakeTrace{"a": {
		{Node: "agent", Start: t0.Add(2 * time.Second), LatencyMS: 2},
		{Node: "other", Start: t0.Add(time.Second), LatencyMS: 3, Cost: &cost},
		{Node: "agent", Start: t0, LatencyMS: 1},
	}}
	if err := th.JoinTraces(context.Background(), tr); err != nil {
		t.Fatal(err)
	}
	a := th.Runs[0]
	for i, want := range []float64{1, 3, 2} {
		if c := a.Steps[i].ModelCalls[0]; c.LatencyMS == nil || *c.LatencyMS != want {
			t.Errorf("step %d: latency %v, want %v", i, c.LatencyMS, want)
		}
	}
	if a.Trace != TraceJoined || a.Steps[1].ModelCalls[0].Cost == nil || a.Steps[0].ModelCalls[0].Cost != nil {
		t.Errorf("run a: %+v", a)
	}
	if b := th.Runs[1]; b.Trace != TraceAbsent || b.Steps[0].ModelCalls[0].LatencyMS != nil {
		t.Errorf("run b: %+v", b)
	}
}
