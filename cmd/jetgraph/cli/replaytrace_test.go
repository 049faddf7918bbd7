package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// jetgraph replay joins each model call with its span in the run's self-trace: the call's
// latency and the cost the price table gives its tokens, through the server and from the data
// folder alike; a run served with --no-self-trace says it has no trace instead of zeros.
func TestReplayJoinsTheTrace(t *testing.T) {
	prices := filepath.Join(t.TempDir(), "prices.json")
	const in, out = 1e-3, 2e-3
	if err := os.WriteFile(prices, []byte(`[{"match": "^react-fake$", "input": 0.001, "output": 0.002}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	srv := startServe(t, Program{}, data, "--trace-prices", prices)
	thread := post(t, srv.url+"/threads", `{}`)["thread_id"].(string)
	post(t, srv.url+"/threads/"+thread+"/runs/wait", `{"assistant_id":"react","input":{"messages":[{"role":"user","content":"calculator: 2+3*4"}]}}`)
	type call struct {
		Node      string   `json:"node"`
		In        int      `json:"input_tokens"`
		Out       int      `json:"output_tokens"`
		LatencyMS *float64 `json:"latency_ms"`
		Cost      *float64 `json:"cost"`
	}
	var got struct {
		Runs []struct {
			Trace string `json:"trace"`
			Steps []struct {
				ModelCalls []call `json:"model_calls"`
			} `json:"steps"`
		} `json:"runs"`
	}
	calls := func() []call {
		t.Helper()
		stdout, stderr, err := run2(t, "replay", "thread", thread, "--json", "--data", data, "--trace-prices", prices)
		got.Runs = nil
		if err != nil || json.Unmarshal([]byte(stdout), &got) != nil || len(got.Runs) != 1 {
			t.Fatalf("replay --json: %v %s %s", err, stdout, stderr)
		}
		var cs []call
		for _, s := range got.Runs[0].Steps {
			cs = append(cs, s.ModelCalls...)
		}
		return cs
	}
	check := func(where string, cs []call) {
		t.Helper()
		if len(cs) != 2 || got.Runs[0].Trace != "joined" {
			t.Fatalf("%s: want 2 traced model calls, got %+v (trace %q)", where, cs, got.Runs[0].Trace)
		}
		for _, c := range cs {
			want := float64(c.In)*in + float64(c.Out)*out
			if c.LatencyMS == nil || *c.LatencyMS <= 0 || c.Cost == nil || math.Abs(*c.Cost-want) > 1e-12 {
				t.Errorf("%s: call %+v: want latency > 0 and cost %g", where, c, want)
			}
		}
	}
	// The spans reach the trace projection shortly after the run ends.
	deadline := time.Now().Add(30 * time.Second)
	cs := calls()
	for (len(cs) != 2 || cs[0].LatencyMS == nil || cs[1].LatencyMS == nil) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // polling a condition, not timing
		cs = calls()
	}
	check("through the server", cs)
	text, stderr, err := run2(t, "replay", "thread", thread, "--data", data)
	if err != nil || !strings.Contains(text, "$0.040000") {
		t.Errorf("replay text: want the first call's cost $0.040000 (24*0.001+8*0.002): %v %s %s", err, text, stderr)
	}
	srv.stop(t)
	check("from the data folder", calls())

	// Without self-traces.
	data = t.TempDir()
	srv = startServe(t, Program{}, data, "--no-self-trace")
	thread = post(t, srv.url+"/threads", `{}`)["thread_id"].(string)
	post(t, srv.url+"/threads/"+thread+"/runs/wait", `{"assistant_id":"react","input":{"messages":[{"role":"user","content":"hi"}]}}`)
	text, stderr, err = run2(t, "replay", "thread", thread, "--data", data)
	if err != nil || !strings.Contains(text, "trace    none") || strings.Contains(text, "$") {
		t.Errorf("replay without a trace: %v %s %s", err, text, stderr)
	}
}
