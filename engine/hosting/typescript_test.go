package hosting

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nodeProject: the config's folder when it has a node_modules, else the first of langgraph.json's
// local dependencies that has one; none is an error naming where it looked.
func TestNodeProject(t *testing.T) {
	dir := t.TempDir()
	mk := func(path string) string {
		p := filepath.Join(dir, path)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	conf, noModules, app := mk("conf"), mk("libs"), mk("app")
	mk("app/node_modules")
	for _, tc := range []struct {
		name   string
		config string
		deps   []string
		want   string // the project, or the error's text
	}{
		{"the dependency with node_modules", conf, []string{noModules, app}, app},
		{"the config's folder first", app, []string{conf}, app},
		{"none", conf, []string{noModules}, "no node_modules in " + conf + " nor in the local dependencies " + noModules},
		{"none without dependencies", conf, nil, "no node_modules in " + conf + ": install"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := nodeProject(tc.config, tc.deps)
			if err != nil {
				got = err.Error()
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// The host compiles into one module: its own modules (the tracer) bundled in, every package
// left as an import of the project's node_modules (or Node's).
func TestCompileHost(t *testing.T) {
	code, err := compileHost()
	if err != nil {
		t.Fatal(err)
	}
	src := string(code)
	for _, want := range []string{"RunTracer = class extends BaseCallbackHandler", `from "@langchain/core/callbacks/base"`, `from "@langchain/langgraph"`, `from "node:readline"`} {
		if !strings.Contains(src, want) {
			t.Errorf("the compiled host lacks %s", want)
		}
	}
	if strings.Contains(src, `from "./`) {
		t.Error("the compiled host imports a module of its own by path: it is not bundled in")
	}
}
