package graphs

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine/graph"
)

// A langgraph.json as users write it: Python graphs beside built-in graphs and templates, keys
// a local jetgraph does not act on as warnings naming the key.
func TestLanggraphJSON(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "agent.py"), []byte("graph = None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "langgraph.json")
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("PROJECT_VAR=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := `{"dependencies": ["."], "python_version": "3.11", "env": ".env", "auth": {}, "colour": "blue",
		"graphs": {"agent": "./src/agent.py:graph", "pkg": "my_pkg.graphs:make_graph", "echo2": "echo", "r": {"template": "react"}}}`
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	var warnings []string
	reg, err := Catalog{Warn: func(m string) { warnings = append(warnings, strings.TrimPrefix(m, path+": ")) }}.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(reg.IDs(), ","); got != "agent,pkg,echo2,r" {
		t.Errorf("ids = %s", got)
	}
	wantWarn := []string{
		"colour: unknown key, ignored (known: graphs, env, and langgraph.json's)",
		"auth: no path, so no auth handler: ignored",
	}
	if !reflect.DeepEqual(warnings, wantWarn) {
		t.Errorf("warnings = %q\nwant %q", warnings, wantWarn)
	}
	var hosted []Code
	for _, e := range reg.Hosted() {
		hosted = append(hosted, *e.Code)
	}
	want := []Code{
		{Language: LanguagePython, Path: filepath.Join(dir, "src", "agent.py"), Attr: "graph", Root: dir, Env: map[string]string{"PROJECT_VAR": "1"}, Dependencies: []string{dir}},
		{Language: LanguagePython, Path: "my_pkg.graphs", Attr: "make_graph", Root: dir, Env: map[string]string{"PROJECT_VAR": "1"}, Dependencies: []string{dir}},
	}
	if !reflect.DeepEqual(hosted, want) {
		t.Errorf("hosted = %+v\nwant %+v", hosted, want)
	}
	if _, err := reg.Runnable("agent", graph.Config{}); err == nil || !strings.Contains(err.Error(), "its host is not started") {
		t.Errorf("a hosted graph without its host: %v", err)
	}
	if _, err := reg.Build("agent", graph.Config{}); err == nil || !strings.Contains(err.Error(), "runs in a host") {
		t.Errorf("a hosted graph as a Go graph: %v", err)
	}
	if g, err := reg.Runnable("echo2", graph.Config{}); err != nil || g == nil {
		t.Errorf("a Go graph: %v", err)
	}
}
