package supervise_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/controlplane"
)

// TestCloseDrainsRuns stops the control plane's supervisor (as serve does when it stops) while a
// run executes in a revision's process: the run finishes within the grace period (not failed,
// not left for a later process to run again), and no revision process is left behind.
func TestCloseDrainsRuns(t *testing.T) {
	art := controlplane.Artifact{Kind: controlplane.ArtifactConfig, Config: []byte(`{"graphs": {"slow": "delay"}}`)}
	const body = `{"assistant_id": "slow", "input": {"delay": 2500}}`
	for _, c := range []struct {
		name string
		// start starts a run on thread at url, and returns a wait for its answer (nil: none).
		start func(t *testing.T, url, thread string) (wait func() (int, map[string]any))
	}{
		{"a background run", func(t *testing.T, url, thread string) func() (int, map[string]any) {
			if code, r := call(t, "POST", url+"/threads/"+thread+"/runs", body); code != 200 {
				t.Fatalf("run: %d %v", code, r)
			}
			return nil
		}},
		{"a run waited on through the proxy", func(t *testing.T, url, thread string) func() (int, map[string]any) {
			type answer struct {
				code int
				out  map[string]any
			}
			done := make(chan answer, 1)
			go func() {
				code, out := call(t, "POST", url+"/threads/"+thread+"/runs/wait", body)
				done <- answer{code, out}
			}()
			return func() (int, map[string]any) { a := <-done; return a.code, a.out }
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t) // grace period 5 s
			if err := e.deploy(t, "d1", "r1", art); err != nil {
				t.Fatal(err)
			}
			url := e.sup.CustomURL("d1")
			data, _ := filepath.Glob(filepath.Join(e.dir, "deployments", "d1", "r1", "data-*"))
			if len(data) != 1 {
				t.Fatalf("data folders of r1: %q", data)
			}
			pid := servingPID(t, data[0], 0)
			if pgid, err := syscall.Getpgid(pid); err != nil || pgid == syscall.Getpgrp() {
				t.Errorf("the revision's process is in the control plane's process group (%d, %v): a terminal's Ctrl-C would stop it behind the control plane's back", pgid, err)
			}
			code, th := call(t, "POST", url+"/threads", `{}`)
			if code != 200 {
				t.Fatalf("thread: %d %v", code, th)
			}
			thread := th["thread_id"].(string)
			wait := c.start(t, url, thread)
			var runURL string
			for deadline := time.Now().Add(30 * time.Second); runURL == ""; time.Sleep(20 * time.Millisecond) {
				if _, r := call(t, "GET", url+"/threads/"+thread, ""); r["status"] == "busy" {
					runs := callList(t, url+"/threads/"+thread+"/runs")
					if len(runs) == 1 {
						runURL = url + "/threads/" + thread + "/runs/" + runs[0]["run_id"].(string)
					}
				}
				if time.Now().After(deadline) {
					t.Fatal("the run never started")
				}
			}

			start := time.Now()
			e.sup.Close()
			took := time.Since(start)
			if took > 5*time.Second {
				t.Errorf("Close took %v, over the grace period of 5s", took)
			}
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("the revision's process %d is still there after Close: %v", pid, err)
			}
			if wait != nil {
				if code, out := wait(); code != 200 || !strings.Contains(fmt.Sprint(out["messages"]), "finished after 2500ms") {
					t.Errorf("the waited run's answer: %d %v", code, out)
				}
			}

			// The run's outcome is in the deployment's log, which outlives its processes: a
			// revision started again finds it done at once, not to be run again.
			if err := e.deploy(t, "d1", "r1", art); err != nil {
				t.Fatal(err)
			}
			if _, r := call(t, "GET", runURL, ""); r["status"] != "success" {
				t.Errorf("the run after Close: %v, want success (finished before the process stopped)", r["status"])
			}
			t.Logf("Close drained a run in flight in %v", took.Round(time.Millisecond))
		})
	}
}

// callList GETs a JSON array of objects.
func callList(t *testing.T, url string) []map[string]any {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return out
}
