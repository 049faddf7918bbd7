package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A thread exported from one jetgraph is imported into another (a new id, then its own id) with
// its state and history, and replayed from the file alone; a second import under the same id,
// and a file of another version, are refused.
func TestExportImportReplayFile(t *testing.T) {
	dataA := t.TempDir()
	a := startServe(t, Program{}, dataA)
	dataB := t.TempDir()
	b := startServe(t, Program{}, dataB)
	thread := post(t, a.url+"/threads", `{"metadata":{"user":"ada"}}`)["thread_id"].(string)
	post(t, a.url+"/threads/"+thread+"/runs/wait", `{"assistant_id":"react","input":{"messages":[{"role":"user","content":"calculator: 2+3*4"}]}}`)
	out, stderr, err := run(t, Program{}, "export", "thread", thread, "--data", dataA)
	if err != nil {
		t.Fatal(err, stderr)
	}
	file := filepath.Join(t.TempDir(), "thread.jgx")
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	get := func(path string) string {
		resp, err := http.Get(b.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return string(raw)
	}
	for _, args := range [][]string{{"import", file}, {"import", file, "--keep-id"}} {
		out, stderr, err := run(t, Program{}, append(args, "--data", dataB)...)
		var th struct {
			ThreadID string         `json:"thread_id"`
			Metadata map[string]any `json:"metadata"`
		}
		if err != nil || json.Unmarshal([]byte(out), &th) != nil || th.Metadata["user"] != "ada" || th.Metadata["graph_id"] != "react" {
			t.Fatalf("%v: %v %s %s", args, err, out, stderr)
		}
		if keep := len(args) == 3; keep != (th.ThreadID == thread) {
			t.Fatalf("%v: thread id %s (exported %s)", args, th.ThreadID, thread)
		}
		if st := get("/threads/" + th.ThreadID + "/state"); !strings.Contains(st, `"calculator: 14"`) {
			t.Fatalf("%v: state %s", args, st)
		}
		var hist []any
		if err := json.Unmarshal([]byte(get("/threads/"+th.ThreadID+"/history?limit=20")), &hist); err != nil || len(hist) != 5 {
			t.Fatalf("%v: history of %d checkpoints", args, len(hist))
		}
	}
	if _, stderr, err := run(t, Program{}, "import", file, "--keep-id", "--data", dataB); err == nil || !strings.Contains(stderr, "409") {
		t.Errorf("a second import under the same id: %v %s", err, stderr)
	}
	a.stop(t)
	out, stderr, err = run(t, Program{}, "replay", "--file", file, "--show", "--step", "2")
	if err != nil || !strings.Contains(out, `tool    tools calculator({"expression":"2+3*4"}) -> "14"`) || strings.Contains(out, "step 1 ") {
		t.Errorf("replay --file: %v %s %s", err, out, stderr)
	}
	out, stderr, err = run(t, Program{}, "replay", "--file", file)
	if err != nil || !strings.Contains(out, "replayed 1 run(s), 5 step(s): no divergence") {
		t.Errorf("replay --file: %v %s %s", err, out, stderr)
	}
	out, stderr, err = run(t, Program{}, "replay", "--file", file, "--graph", "agent")
	if err == nil || !strings.Contains(out, "step 1 node agent: model_input differ") || !strings.Contains(stderr, "diverged") {
		t.Errorf("replay --file --graph agent: %v %s %s", err, out, stderr)
	}
	bad := filepath.Join(t.TempDir(), "v9.jgx")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(mustRead(t, file)), `"jgx":1`, `"jgx":9`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"replay", "--file", bad}, {"import", bad, "--data", dataB}} {
		if _, stderr, err := run(t, Program{}, args...); err == nil || !strings.Contains(stderr, "version 9") {
			t.Errorf("%v: %v %s", args, err, stderr)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
