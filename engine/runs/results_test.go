package runs

import (
	"context"
	"testing"

	"github.com/jetgraph/jetgraph/engine/graph"
)

// TestResultsKeepNothingUnasked: values are kept only for a registered wait, and taking them
// (or giving up) forgets the wait, so runs nobody waits for here leave nothing behind.
func TestResultsKeepNothingUnasked(t *testing.T) {
	ctx := context.Background()
	var r results
	r.end("lonely")
	r.settle("lonely", graph.State{"a": 1})
	if len(r.slots) != 0 || len(r.ending) != 0 {
		t.Fatalf("kept for a run nobody waits for: %v %v", r.slots, r.ending)
	}
	r.expect("waited")
	if v := r.take(ctx, "waited"); v != nil {
		t.Fatalf("values before any offer: %v", v)
	}
	r.expect("waited")
	r.end("waited")
	r.settle("waited", graph.State{"a": 1})
	if v := r.take(ctx, "waited"); v["a"] != 1 {
		t.Fatalf("taken %v", v)
	}
	if len(r.slots) != 0 || len(r.ending) != 0 {
		t.Fatalf("a taken wait is kept: %v %v", r.slots, r.ending)
	}
}
