package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/controlplane/cptest"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// TestOwnGraphsModule builds, as a user would, a module of its own that imports jetgraph
// (testdata/usermodule: a typed graph, a react agent with a Go tool, cli.Main), with this
// checkout as the jetgraph module and the module cache as it is (offline), then serves it:
// its graphs answer /runs/wait, jetgraph's examples are not served, SIGTERM stops it cleanly.
func TestOwnGraphsModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program; skipped with -short")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range []string{"testdata/usermodule/main.go", "testdata/usermodule/go.mod", filepath.Join(root, "go.sum")} {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goTool := cptest.GoTool()
	bin := filepath.Join(dir, "mygraphs")
	start := time.Now()
	for _, args := range [][]string{
		{"mod", "edit", "-replace", "github.com/jetgraph/jetgraph=" + root},
		{"build", "-o", bin, "."},
	} {
		cmd := exec.Command(goTool, args...)
		cmd.Dir = dir
		// Offline: everything comes from the module cache that building jetgraph filled.
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	t.Logf("the module built in %v", time.Since(start).Round(time.Millisecond))

	data := filepath.Join(dir, "data")
	logs := &eventlogtest.Buffer{}
	cmd := exec.Command(bin, "--addr", "127.0.0.1:0", "--data", data, "--log-format", "json")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("mygraphs output:\n%s", logs)
		}
	})
	url := waitServing(t, data, done)

	if got := post(t, url+"/runs/wait", `{"assistant_id": "greeter", "input": {"name": "Ada"}}`); got["greeting"] != "Hello, Ada!" {
		t.Errorf("greeter: %v", got)
	}
	got := post(t, url+"/runs/wait", `{"assistant_id": "shouter", "input": {"messages": [{"role": "user", "content": "shout: hi"}]}}`)
	if msgs, _ := got["messages"].([]any); len(msgs) != 4 || msgs[3].(map[string]any)["content"] != "shout: HI" {
		t.Errorf("shouter: %v", got)
	}
	resp, err := http.Post(url+"/assistants/search", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var found []struct {
		GraphID string `json:"graph_id"`
	}
	if err := json.Unmarshal(raw, &found); err != nil || len(found) != 2 {
		t.Errorf("served assistants (want greeter and shouter only): %v %s", err, raw)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		done <- err // for the cleanup
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit 30 s after SIGTERM")
	}
	if !strings.Contains(logs.String(), `"msg":"shutting down"`) {
		t.Errorf("no graceful stop in the logs")
	}
}

// waitServing waits until the program serving data answers /ok and returns its URL (from the
// serve.json it writes); done delivers the program's end.
func waitServing(t *testing.T, data string, done chan error) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		var info serveInfo
		if raw, err := os.ReadFile(serveInfoPath(data)); err == nil && json.Unmarshal(raw, &info) == nil {
			if resp, err := http.Get("http://" + info.Addr + "/ok"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return "http://" + info.Addr
				}
			}
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("the program ended before it served: %v", err)
		case <-ctx.Done():
			t.Fatal("the program did not serve within 60 s")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// The README's "Your own graph in Go" shows the main.go that TestOwnGraphsModule builds.
func TestReadmeShowsTheOwnGraphsModule(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	main, err := os.ReadFile("testdata/usermodule/main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "### Your own graph in Go\n")
	_, block, _ := strings.Cut(section, "```go\n")
	block, _, _ = strings.Cut(block, "```\n")
	if block != string(main) {
		t.Fatalf("the README's main.go is not testdata/usermodule/main.go:\n%s", block)
	}
}
