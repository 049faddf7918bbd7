package engine

import (
	"encoding/json"
	"testing"
)

func TestContains(t *testing.T) {
	tests := []struct {
		doc, filter string
		want        bool
	}{
		{`{"a":1,"b":"x"}`, `{"a":1}`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":1}`, `{"b":1}`, false},
		{`{"a":{"b":{"c":true},"d":1}}`, `{"a":{"b":{"c":true}}}`, true},
		{`{"a":[1,2,3]}`, `{"a":[3,1]}`, true},
		{`{"a":[1,2]}`, `{"a":[4]}`, false},
		{`{"a":[{"x":1,"y":2}]}`, `{"a":[{"x":1}]}`, true},
		{`{"a":null}`, `{"a":null}`, true},
		{`{"a":"1"}`, `{"a":1}`, false},
		{`{}`, `{}`, true},
		{`null`, `{}`, false},
	}
	for _, tc := range tests {
		var doc, filter any
		if err := json.Unmarshal([]byte(tc.doc), &doc); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(tc.filter), &filter); err != nil {
			t.Fatal(err)
		}
		if got := Contains(doc, filter); got != tc.want {
			t.Errorf("Contains(%s, %s) = %v, want %v", tc.doc, tc.filter, got, tc.want)
		}
	}
}
