package tracingapi_test

import (
	"context"
	"testing"

	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// TestTracesOfARequestShareAMessage: the runs of several traces posted in one request are
// appended in one message of the trace stream (eventlog.PackAcross), and each run reads back.
func TestTracesOfARequestShareAMessage(t *testing.T) {
	s := startTracing(t, platform.TracingConfig{})
	ctx := context.Background()
	stream, err := eventlogtest.JetStream(s.P.Log).Stream(ctx, eventlog.TraceStream)
	if err != nil {
		t.Fatal(err)
	}
	before, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var runs []map[string]any
	for range 3 {
		root, child := newTrace("packed")
		runs = append(runs, root, child)
	}
	s.postRuns(t, runs...)
	after, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := after.State.LastSeq - before.State.LastSeq; n != 1 {
		t.Errorf("3 traces of one request took %d messages, want 1", n)
	}
	for _, r := range runs {
		id := r["id"].(string)
		waitFor(t, "run "+id, func() (bool, any) {
			code, v := s.send(t, "GET", "/runs/"+id, nil, nil)
			return code == 200, v
		})
	}
}
