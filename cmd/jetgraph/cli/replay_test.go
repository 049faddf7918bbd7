package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// jetgraph replay shows a run's steps through the server holding --data and from the data
// folder alike: text by default, one step with --step, JSON with --json; a run not on the
// thread, or a thread without events, is an error; `replay run` finds the run's thread by itself.
func TestReplayCommand(t *testing.T) {
	data := t.TempDir()
	srv := startServe(t, Program{}, data)
	thread := post(t, srv.url+"/threads", `{}`)["thread_id"].(string)
	post(t, srv.url+"/threads/"+thread+"/runs/wait", `{"assistant_id":"react","input":{"messages":[{"role":"user","content":"calculator: 2+3*4"}]}}`)
	resp, err := http.Get(srv.url + "/threads/" + thread + "/runs")
	var runs []map[string]any
	if err != nil || json.NewDecoder(resp.Body).Decode(&runs) != nil || len(runs) != 1 {
		t.Fatal(err, runs)
	}
	resp.Body.Close()
	run := runs[0]["run_id"].(string)
	check := func(where string) {
		t.Helper()
		out, stderr, err := run2(t, "replay", "thread", thread, "--data", data)
		if err != nil || !strings.Contains(out, "model   agent fake/react-fake  in 24 out 8 tokens") ||
			!strings.Contains(out, `tool    tools calculator({"expression":"2+3*4"}) -> "14"`) {
			t.Errorf("%s: replay thread: %v %s %s", where, err, out, stderr)
		}
		// Without --thread, the run's thread is looked up by the run's id.
		out, stderr, err = run2(t, "replay", "run", run, "--step", "2", "--json", "--data", data)
		var got struct {
			Runs []struct {
				Steps []struct {
					Nodes     []string
					ToolCalls []map[string]any `json:"tool_calls"`
				}
			}
		}
		if err != nil || json.Unmarshal([]byte(out), &got) != nil || len(got.Runs) != 1 || len(got.Runs[0].Steps) != 1 ||
			got.Runs[0].Steps[0].Nodes[0] != "tools" || got.Runs[0].Steps[0].ToolCalls[0]["result"] != "14" {
			t.Errorf("%s: replay run --step 2 --json: %v %s %s", where, err, out, stderr)
		}
		for _, args := range [][]string{
			{"replay", "run", uuid.NewString(), "--thread", thread},
			{"replay", "thread", uuid.NewString()},
		} {
			if _, stderr, err := run2(t, append(args, "--data", data)...); err == nil || !strings.Contains(stderr, "not on thread") && !strings.Contains(stderr, "no events") {
				t.Errorf("%s: %v: %v %s", where, args, err, stderr)
			}
		}
		if _, stderr, err := run2(t, "replay", "run", uuid.NewString(), "--data", data); err == nil || !strings.Contains(stderr, "no such run") {
			t.Errorf("%s: replay run of an unknown run: %v %s", where, err, stderr)
		}
	}
	check("through the server")
	srv.stop(t)
	check("from the data folder")
}

func run2(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	return run(t, Program{}, args...)
}
