package build

import (
	"path"
	"strings"
	"testing"
)

// FuzzGraphConfigPath checks that a graph_config_path the builder accepts always names a file
// inside the repository: relative, cleaned, never climbing out of it.
func FuzzGraphConfigPath(f *testing.F) {
	for _, s := range []string{"", "graph.json", "a/../graph.json", "../x", "/etc/passwd", "a/./b.json", ".", "..", "a/../../b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := graphConfigPath(p)
		if err != nil {
			return
		}
		if path.IsAbs(got) || got == ".." || strings.HasPrefix(got, "../") || got != path.Clean(got) || got == "." {
			t.Fatalf("graphConfigPath(%q) = %q: outside the repository", p, got)
		}
	})
}
