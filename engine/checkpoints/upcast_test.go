package checkpoints_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/checkpoints"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
)

// TestCopyReadsEventsInTheirCurrentVersion checks that a thread's copy, which decodes the events
// it copies and writes them anew, upcasts them first: a checkpoint event newer than this build
// is refused before anything is appended, never copied as if it were of the current version.
func TestCopyReadsEventsInTheirCurrentVersion(t *testing.T) {
	p := openPlatform(t)
	ctx := context.Background()
	createThread(t, p, "src")
	g := agentGraph(t, false)
	if _, err := g.Run(ctx, graph.RunOptions{ThreadID: "src", Saver: p.Checkpoints, Input: map[string]any{"messages": "hi"}}); err != nil {
		t.Fatal(err)
	}
	agg := checkpoints.Aggregate(engine.DefaultTenant, "src")
	events, err := p.Log.Load(ctx, agg)
	if err != nil {
		t.Fatal(err)
	}
	var future eventlog.Event
	for _, e := range events {
		if e.Type == engine.ThreadCheckpoint {
			future = e
		}
	}
	future.ID, future.Seq = eventlog.NewID(time.Now()), 0
	future.Version = eventlog.Upcasts.Current(engine.ThreadCheckpoint) + 1 // written by a newer build
	if _, err := p.Log.Append(ctx, future, eventlog.Any); err != nil {
		t.Fatal(err)
	}
	err = p.Checkpoints.Copy(ctx, "src", "dst")
	if !errors.Is(err, eventlog.ErrUnknownVersion) {
		t.Fatalf("copy of a thread with an event newer than the build: %v, want %v", err, eventlog.ErrUnknownVersion)
	}
	if copied, err := p.Log.Load(ctx, checkpoints.Aggregate(engine.DefaultTenant, "dst")); err != nil || len(copied) != 0 {
		t.Fatalf("the refused copy appended %d events (%v)", len(copied), err)
	}
}
