package engine_test

import (
	"reflect"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
)

// TestValueLabels reads a namespace back from a rule's value, as a Go rule ([]string) or a hosted
// handler ([]any) leaves it; anything else is the rule's fault.
func TestValueLabels(t *testing.T) {
	given := []string{"given"}
	for _, c := range []struct {
		name  string
		value map[string]any
		want  []string
		fault bool
	}{
		{"no rules", nil, given, false},
		{"left out", map[string]any{}, given, false},
		{"null", map[string]any{"namespace": nil}, nil, false},
		{"a Go rule's", map[string]any{"namespace": []string{"u", "n"}}, []string{"u", "n"}, false},
		{"a host's", map[string]any{"namespace": []any{"u", "n"}}, []string{"u", "n"}, false},
		{"a label not a string", map[string]any{"namespace": []any{"u", 1.0}}, nil, true},
		{"not a list", map[string]any{"namespace": "u.n"}, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := engine.ValueLabels("test", c.value, "namespace", given)
			if (err != nil) != c.fault || (err != nil && !engine.Is(engine.Other, err)) {
				t.Fatalf("error %v, want a fault: %v", err, c.fault)
			}
			if !c.fault && !reflect.DeepEqual(got, c.want) {
				t.Errorf("%v, want %v", got, c.want)
			}
		})
	}
}

// TestValueMap reads an object back from a rule's value.
func TestValueMap(t *testing.T) {
	given := map[string]any{"given": true}
	for _, c := range []struct {
		name  string
		value map[string]any
		want  map[string]any
		fault bool
	}{
		{"no rules", nil, given, false},
		{"null", map[string]any{"metadata": nil}, given, false},
		{"changed", map[string]any{"metadata": map[string]any{"owner": "u"}}, map[string]any{"owner": "u"}, false},
		{"not an object", map[string]any{"metadata": []any{}}, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := engine.ValueMap("test", c.value, "metadata", given)
			if (err != nil) != c.fault {
				t.Fatalf("error %v, want a fault: %v", err, c.fault)
			}
			if !c.fault && !reflect.DeepEqual(got, c.want) {
				t.Errorf("%v, want %v", got, c.want)
			}
		})
	}
}
