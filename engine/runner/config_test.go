package runner

import (
	"encoding/json"
	"testing"
)

func js(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMergeRules(t *testing.T) {
	tests := []struct {
		name string
		got  func() any
		want string
	}{
		{"config: request over thread over assistant, tags joined, secrets dropped", func() any {
			return mergeConfig(
				obj(t, `{"configurable":{"a":1,"b":1},"tags":["x"],"recursion_limit":10}`),
				obj(t, `{"configurable":{"b":2}}`),
				obj(t, `{"configurable":{"c":3,"x-api-key":"k","auth_token":"t"},"tags":["y"],"recursion_limit":50}`))
		}, `{"configurable":{"a":1,"b":2,"c":3},"recursion_limit":50,"tags":["x","y"]}`},
		{"config: nothing given", func() any { return mergeConfig(nil, nil, nil) }, `{"configurable":{}}`},
		{"thread config: request over thread over assistant, no run keys, no secrets", func() any {
			return ThreadConfig(
				obj(t, `{"configurable":{"a":1,"b":1},"tags":["x"]}`),
				obj(t, `{"configurable":{"b":2,"c":2},"recursion_limit":5}`),
				obj(t, `{"configurable":{"c":3,"run_id":"r","thread_id":"t","checkpoint_id":"c","checkpoint_ns":"","x-api-key":"k"},"tags":["y"]}`))
		}, `{"configurable":{"a":1,"b":2,"c":3},"recursion_limit":5,"tags":["y"]}`},
		{"thread config: nothing given", func() any { return ThreadConfig(nil, map[string]any{}, nil) }, `null`},
		{"metadata: reserved request keys dropped silently, secrets never", func() any {
			return mergeMetadata(obj(t, `{"owner":"a","k":1}`), obj(t, `{"k":2}`),
				obj(t, `{"run_id":"forged","graph_id":"forged","k":3,"x-api-key":"secret","note":"n"}`))
		}, `{"k":3,"note":"n","owner":"a"}`},
		{"context: request over assistant over defaults", func() any {
			return mergeContext(obj(t, `{"model":"unknown","t":1}`), obj(t, `{"model":"openai"}`), obj(t, `{"model":"anthropic"}`))
		}, `{"model":"anthropic","t":1}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := js(t, tc.got()); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
