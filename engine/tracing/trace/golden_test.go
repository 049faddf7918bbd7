package trace

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/jetgraph/jetgraph/engine/goldentest"
)

// golden compares v, as indented JSON, with testdata/<name>.json (goldentest rewrites it).
func golden(t *testing.T, name string, v any) {
	t.Helper()
	goldentest.JSON(t, filepath.Join("testdata", name+".json"), v)
}

// decode parses JSON test input, failing the test on error.
func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

// object parses a JSON object.
func object(t *testing.T, s string) map[string]any {
	t.Helper()
	m, ok := decode(t, s).(map[string]any)
	if !ok {
		t.Fatalf("not an object: %s", s)
	}
	return m
}
