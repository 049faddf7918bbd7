package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/owners"
)

// nobody is an auth handler that lets no one in.
type nobody struct{ owners.Rules }

func (nobody) Authenticate(*http.Request) (engine.User, error) {
	return engine.User{}, engine.E(engine.Op("test"), engine.Unauthorized, "nobody")
}

// TestServeProgramAuth: a program's own auth handler decides who every request is, so serve
// refuses it beside --auth or a project's auth.path, before anything starts.
func TestServeProgramAuth(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "auth.py"), []byte("auth = None\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "langgraph.json")
	if err := os.WriteFile(conf, []byte(`{"graphs": {"agent": "agent"}, "auth": {"path": "./auth.py:auth"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--auth", "jwt"}, "cannot go with --auth jwt"},
		{[]string{"--config", conf}, "auth.path (your auth handler) decides who every request is: it cannot go with the program's own handler"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, stderr, err := run(t, Program{Auth: nobody{}}, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, c.args...)...)
			if err == nil || !strings.Contains(err.Error()+stderr, c.want) {
				t.Errorf("err %v, stderr %s; want %q", err, stderr, c.want)
			}
		})
	}
}
