// Package goldentest compares test output with files under testdata/ and rewrites them on request,
// so that every package's golden files are refreshed by one command:
//
//	JETGRAPH_UPDATE_GOLDEN=1 go test ./...
//
// The -update flag does the same for the packages that import goldentest (go test ./engine/trace
// -update); across ./... only the variable works, since a package that does not import goldentest
// does not know the flag and go test would fail there.
package goldentest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// EnvUpdate is the environment variable that rewrites the golden files when set to a non-empty
// value: the one way that works for go test ./... as a whole.
const EnvUpdate = "JETGRAPH_UPDATE_GOLDEN"

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ (also "+EnvUpdate+"=1)")

// Updating reports whether this run rewrites golden files instead of comparing with them.
func Updating() bool { return *update || os.Getenv(EnvUpdate) != "" }

// Check compares got with the file at path, or rewrites the file when Updating. A difference is
// reported with the first lines that differ, so that a long file still gives a readable failure.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (%s=1 go test rewrites it)", err, EnvUpdate)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (%s=1 go test rewrites it):\n%s", path, EnvUpdate, Diff(string(want), string(got)))
	}
}

// JSON compares v, as indented JSON with a final newline, with the file at path (see Check).
func JSON(t testing.TB, path string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatalf("marshal %s: %v", path, err)
	}
	Check(t, path, append(got, '\n'))
}

// Diff shows the first lines where want and got differ, with a few lines of context after.
func Diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a == b {
			continue
		}
		var out strings.Builder
		out.WriteString("first difference at line " + strconv.Itoa(i+1) + ":\n")
		for j := i; j < min(i+5, max(len(w), len(g))); j++ {
			if j < len(w) {
				out.WriteString("- " + w[j] + "\n")
			}
			if j < len(g) {
				out.WriteString("+ " + g[j] + "\n")
			}
		}
		return out.String()
	}
	return "(they differ only in line endings)"
}
