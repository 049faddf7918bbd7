package runs

import (
	"testing"

	"github.com/jetgraph/jetgraph/engine/graph"
)

// TestResultsKeepNothingUnasked: values are kept only for a registered wait, and taking them
// (or giving up) forgets the wait, so runs nobody waits for here leave nothing behind.
func TestResultsKeepNothingUnasked(t *testing.T) {
	var r results
	r.offer("lonely", graph.State{"a": 1})
	if len(r.slots) != 0 {
		t.Fatalf("values kept for a run nobody waits for: %v", r.slots)
	}
	r.expect("waited")
	if v := r.take("waited"); v != nil {
		t.Fatalf("values before any offer: %v", v)
	}
	r.expect("waited")
	r.offer("waited", graph.State{"a": 1})
	if v := r.take("waited"); v["a"] != 1 {
		t.Fatalf("taken %v", v)
	}
	if len(r.slots) != 0 {
		t.Fatalf("a taken wait is kept: %v", r.slots)
	}
}
