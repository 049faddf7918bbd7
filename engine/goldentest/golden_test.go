package goldentest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckWritesUnderUpdateThenCompares(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "case.golden")
	t.Setenv(EnvUpdate, "1")
	Check(t, path, []byte("a\nb\n"))
	JSON(t, filepath.Join(filepath.Dir(path), "v.json"), map[string]int{"a": 1})
	if raw, _ := os.ReadFile(filepath.Join(filepath.Dir(path), "v.json")); string(raw) != "{\n  \"a\": 1\n}\n" {
		t.Fatalf("JSON wrote %q", raw)
	}
	if raw, err := os.ReadFile(path); err != nil || string(raw) != "a\nb\n" {
		t.Fatalf("update wrote %q, %v", raw, err)
	}
	t.Setenv(EnvUpdate, "")
	Check(t, path, []byte("a\nb\n")) // equal: passes
	if raw, _ := os.ReadFile(path); !strings.HasSuffix(string(raw), "\n") {
		t.Fatal("golden file lost its final newline")
	}
}

func TestDiffNamesTheFirstDifferentLine(t *testing.T) {
	d := Diff("a\nb\nc\n", "a\nx\nc\n")
	for _, want := range []string{"line 2", "- b", "+ x"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff %q lacks %q", d, want)
		}
	}
}
