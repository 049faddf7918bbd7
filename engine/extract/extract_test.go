package extract

import (
	"encoding/json"
	"testing"
)

func TestParseAndFrom(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"messages":[{"content":"a"},{"content":"b","tags":["x","y"]}],"n":1,"m":{"k":{"z":true}}}`), &doc); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, root string
		want       any
	}{
		{"values", "values", doc},
		{"values.n", "values", 1.0},
		{"values.messages[-1].content", "values", "b"},
		{"values.messages[0].content", "values", "a"},
		{"values.messages[1].tags[-2]", "values", "x"},
		{"values.m.k.z", "values", true},
		{"values.messages[2].content", "values", nil},
		{"values.messages[-3]", "values", nil},
		{"values.messages.content", "values", nil},
		{"values.n[0]", "values", nil},
		{"values.m[0]", "values", nil},
		{"values.missing.deeper", "values", nil},
	}
	for _, tc := range tests {
		p, err := Parse(tc.path)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.path, err)
		}
		if p.Root() != tc.root || p.String() != tc.path {
			t.Errorf("Parse(%q): root %q, string %q", tc.path, p.Root(), p.String())
		}
		got, _ := json.Marshal(p.From(doc))
		want, _ := json.Marshal(tc.want)
		if string(got) != string(want) {
			t.Errorf("%s: %s, want %s", tc.path, got, want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, s := range []string{"", ".values", "values.", "values..x", "values[", "values[x]", "values[+1]", "values[1", "values]", "values[0]x", "[0]", "values.a]"} {
		if p, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", s, p)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"values.messages[-1].content", "metadata.a.b", "values[0][1]", "a..b", "x[", "x[9999999999999999999999]"} {
		f.Add(s)
	}
	var doc any
	_ = json.Unmarshal([]byte(`{"a":[1,{"b":[2,3]}],"b":{"c":"d"}}`), &doc)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(p.String())
		if err != nil || again.String() != p.String() {
			t.Fatalf("Parse(%q).String() = %q does not parse back the same (%v)", s, p.String(), err)
		}
		p.From(doc)
	})
}
