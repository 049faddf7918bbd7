package engine

import (
	"encoding/json"
	"testing"
)

func TestFilterMatch(t *testing.T) {
	md := map[string]any{"owner": "alice", "n": float64(1), "tags": []any{"a", "b", map[string]any{"k": 1.0}},
		"path": "team/alice/notes", "obj": map[string]any{"x": 1.0, "y": "z"}}
	tests := []struct {
		name, filter string
		want         bool
	}{
		{"empty matches", `{}`, true},
		{"equal", `{"owner": "alice"}`, true},
		{"not equal", `{"owner": "bob"}`, false},
		{"missing key", `{"team": "x"}`, false},
		{"$eq", `{"owner": {"$eq": "alice"}}`, true},
		{"$eq number spelled otherwise", `{"n": {"$eq": 1.0}}`, true},
		{"$eq object", `{"obj": {"$eq": {"y": "z", "x": 1}}}`, true},
		{"string never equals number", `{"n": "1"}`, false},
		{"$contains element", `{"tags": {"$contains": "a"}}`, true},
		{"$contains object element", `{"tags": {"$contains": {"k": 1}}}`, true},
		{"$contains absent element", `{"tags": {"$contains": "c"}}`, false},
		{"$contains every element", `{"tags": {"$contains": ["a", "b"]}}`, true},
		{"$contains not every element", `{"tags": {"$contains": ["a", "c"]}}`, false},
		{"$contains text cast", `{"path": {"$contains": "alice"}}`, true},
		{"$contains text cast misses", `{"path": {"$contains": "bob"}}`, false},
		{"$contains of a number", `{"n": {"$contains": 1}}`, false},
		{"fields are and-ed", `{"owner": "alice", "n": 2}`, false},
		{"$or one matches", `{"$or": [{"owner": "bob"}, {"owner": "alice"}]}`, true},
		{"$or none matches", `{"$or": [{"owner": "bob"}, {"owner": "carol"}]}`, false},
		{"$or with a sibling key", `{"$or": [{"owner": "bob"}, {"owner": "alice"}], "n": 2}`, false},
		{"$and all match", `{"$and": [{"owner": "alice"}, {"n": 1}]}`, true},
		{"$and one misses", `{"$and": [{"owner": "alice"}, {"n": 2}]}`, false},
		{"nested two deep", `{"$or": [{"$and": [{"owner": "alice"}, {"n": 1}]}, {"owner": "bob"}]}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFilter(decode(t, tt.filter))
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Match(md); got != tt.want {
				t.Errorf("Match(%s) = %v, want %v", tt.filter, got, tt.want)
			}
		})
	}
}

func TestParseFilterRefuses(t *testing.T) {
	tests := []struct{ name, filter string }{
		{"$or of one", `{"$or": [{"a": 1}]}`},
		{"$and not a list", `{"$and": {"a": 1}}`},
		{"$or of a non-object", `{"$or": [{"a": 1}, 2]}`},
		{"too deep", `{"$or": [{"$and": [{"$or": [{"a": 1}, {"b": 1}]}, {"c": 1}]}, {"d": 1}]}`},
		{"unknown operator", `{"a": {"$gt": 1}}`},
		{"two operators", `{"a": {"$eq": 1, "$contains": 1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFilter(decode(t, tt.filter))
			if err == nil {
				t.Fatalf("ParseFilter(%s) accepted it", tt.filter)
			}
			if KindOf(err) != Other {
				t.Errorf("kind %v, want Other (the handler's fault: a 500)", KindOf(err))
			}
		})
	}
}

func TestFilterAnd(t *testing.T) {
	a, _ := ParseFilter(map[string]any{"owner": "alice"})
	b, _ := ParseFilter(map[string]any{"team": "x"})
	both := a.And(b)
	if !both.Match(map[string]any{"owner": "alice", "team": "x"}) || both.Match(map[string]any{"owner": "alice"}) {
		t.Error("And does not require both")
	}
	if (Filter{}).And(a).IsZero() || !(Filter{}).And(Filter{}).IsZero() {
		t.Error("And with the zero Filter is not the other")
	}
}

// FuzzAuthFilter: whatever a rule returns, parsing and matching never panic, and a filter that
// parses matches the metadata it was made from when it is a plain equality.
func FuzzAuthFilter(f *testing.F) {
	for _, s := range []string{`{"owner":"a"}`, `{"$or":[{"a":1},{"b":{"$contains":[1,2]}}]}`, `{"t":{"$contains":"x"}}`, `{"$and":[]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var raw map[string]any
		if json.Unmarshal([]byte(s), &raw) != nil {
			return
		}
		flt, err := ParseFilter(raw)
		if err != nil {
			return
		}
		flt.Match(raw)
		flt.Match(nil)
	})
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}
