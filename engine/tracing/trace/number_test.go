package trace_test

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
)

// numberCases is the one table both filter languages are held to: a stored value compared with a
// filter's number, by value whatever Go type decoding gave the stored one.
var numberCases = []struct {
	name     string
	stored   any
	filter   float64
	eq, gt   bool
	isNumber bool
}{
	{"float equals int-valued literal", 1.0, 1, true, false, true},
	{"int64", int64(2), 1, false, true, true},
	{"int", 1, 1, true, false, true},
	{"json.Number integer", json.Number("1"), 1, true, false, true},
	{"json.Number fraction", json.Number("1.5"), 1, false, true, true},
	{"float32", float32(0.5), 1, false, false, true},
	{"large", 1e300, 1, false, true, true},
	{"negative zero", math.Copysign(0, -1), 0, true, false, true},
	{"bool is no number", true, 1, false, false, false},
	{"null is no number", nil, 0, false, false, false},
}

func TestNumberOneReadingForStoreAndTraceFilters(t *testing.T) {
	for _, c := range numberCases {
		t.Run(c.name, func(t *testing.T) {
			if _, ok := engine.Number(c.stored); ok != c.isNumber {
				t.Errorf("Number(%#v) ok = %v, want %v", c.stored, ok, c.isNumber)
			}
			// The store's filters.
			value := map[string]any{"v": c.stored}
			if got := engine.MatchFilter(value, map[string]any{"v": map[string]any{"$eq": c.filter}}); got != c.eq {
				t.Errorf("store $eq = %v, want %v", got, c.eq)
			}
			if got := engine.MatchFilter(value, map[string]any{"v": map[string]any{"$gt": c.filter}}); got != c.gt {
				t.Errorf("store $gt = %v, want %v", got, c.gt)
			}
			if got := engine.Contains(value, map[string]any{"v": c.filter}); got != c.eq {
				t.Errorf("metadata containment = %v, want %v", got, c.eq)
			}
			// The trace filters, on a run's metadata.
			r := &trace.Run{ID: "019a0000-0000-7000-8000-000000000001", Extra: map[string]any{"metadata": value}}
			trace.Derive(r, trace.DefaultPrices())
			lit := strconv.FormatFloat(c.filter, 'g', -1, 64)
			for op, want := range map[string]bool{"eq": c.eq, "gt": c.gt} {
				f, err := trace.ParseFilter(`and(eq(metadata_key, "v"), ` + op + `(metadata_value, ` + lit + `))`)
				if err != nil {
					t.Fatal(err)
				}
				if got := f.Match(r); got != want {
					t.Errorf("trace %s = %v, want %v", op, got, want)
				}
			}
		})
	}
}
