package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// jetgraph fork asks the server holding --data for a fork at a step, with an update, and prints
// the new thread; a request the server refuses, or no server, is an error naming why.
func TestForkCommand(t *testing.T) {
	data := t.TempDir()
	srv := startServe(t, Program{}, data)
	thread := post(t, srv.url+"/threads", `{}`)["thread_id"].(string)
	post(t, srv.url+"/threads/"+thread+"/runs/wait", `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"foo"}]}}`)

	out, stderr, err := run(t, Program{}, "fork", thread, "--step", "1", "--update", `{"messages":[{"role":"user","content":"again"}]}`, "--as-node", "__start__", "--data", data)
	var forked struct {
		ThreadID string         `json:"thread_id"`
		Metadata map[string]any `json:"metadata"`
	}
	if err != nil || json.Unmarshal([]byte(out), &forked) != nil {
		t.Fatalf("fork: %v %s %s", err, out, stderr)
	}
	from, _ := forked.Metadata["forked_from"].(map[string]any)
	if from["thread_id"] != thread || from["step"] != 1.0 {
		t.Fatalf("forked_from = %v", forked.Metadata)
	}
	resp, err := http.Get(srv.url + "/threads/" + forked.ThreadID + "/state")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(raw), `"again"`) || strings.Contains(string(raw), `"end"`) {
		t.Fatalf("forked state: %s", raw)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fork", thread, "--step", "42", "--data", data}, "404"},
		{[]string{"fork", thread, "--data", data}, "--step or --checkpoint"},
		{[]string{"fork", thread, "--step", "1", "--update", "{", "--data", data}, "not JSON"},
	} {
		if _, stderr, err := run(t, Program{}, c.args...); err == nil || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: %v %s", c.args, err, stderr)
		}
	}
	srv.stop(t)
	if _, stderr, err := run(t, Program{}, "fork", thread, "--step", "1", "--data", data); err == nil || !strings.Contains(stderr, "no server holds") {
		t.Errorf("without a server: %v %s", err, stderr)
	}
}
