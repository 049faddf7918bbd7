package supervise_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/build"
	"github.com/jetgraph/jetgraph/engine/controlplane/cptest"
	"github.com/jetgraph/jetgraph/eventlog"
)

// TestZeroDowntimeSwitch loops /runs/wait through the deployment's custom_url from a few
// clients while three new revisions are rolled out and one is rolled back: no request may fail.
// It logs the latency percentiles during the switches (the README's figure).
func TestZeroDowntimeSwitch(t *testing.T) {
	e := newEnv(t)
	url := e.sup.CustomURL("d1")
	if err := e.deploy(t, "d1", "r1", config("g")); err != nil {
		t.Fatal(err)
	}
	const clients = 4
	var (
		stop     atomic.Bool
		failures atomic.Int64
		mu       sync.Mutex
		lat      []time.Duration
		errs     []string
		wg       sync.WaitGroup
	)
	body := `{"assistant_id": "g", "input": {"messages": [{"role": "user", "content": "hi"}]}}`
	served := make(chan struct{}, 1<<16)
	for range clients {
		wg.Go(func() {
			for !stop.Load() {
				start := time.Now()
				resp, err := http.Post(url+"/runs/wait", "application/json", strings.NewReader(body))
				ok := false
				var detail string
				if err == nil {
					raw, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					ok = resp.StatusCode == 200 && bytes.Contains(raw, []byte("echo: hi"))
					detail = fmt.Sprintf("%d %s", resp.StatusCode, raw)
				} else {
					detail = err.Error()
				}
				mu.Lock()
				lat = append(lat, time.Since(start))
				if !ok {
					failures.Add(1)
					errs = append(errs, detail)
				}
				mu.Unlock()
				served <- struct{}{}
			}
		})
	}
	// waitServed waits until n more requests have completed.
	waitServed := func(n int) {
		for range n {
			<-served
		}
	}
	waitServed(20)
	for _, rev := range []string{"r2", "r3", "r4", "r3"} { // three rollouts, one rollback
		if err := e.deploy(t, "d1", rev, config("g")); err != nil {
			t.Fatal(err)
		}
		waitServed(20)
	}
	stop.Store(true)
	go func() {
		for range served {
		}
	}()
	wg.Wait()
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	t.Logf("zero-downtime switch: %d requests from %d clients over 3 rollouts and 1 rollback, %d failed; p50 %v, p99 %v, max %v",
		len(lat), clients, failures.Load(), pct(0.5), pct(0.99), lat[len(lat)-1])
	if failures.Load() != 0 {
		t.Errorf("%d requests failed during the switches: %q", failures.Load(), errs[:min(len(errs), 5)])
	}
}

// TestBuildAndDeploy builds and deploys, as the revision pipeline does, a repository of
// built-in graphs and a Go module with graphs of its own, and runs their graphs through the
// custom_url; it logs create -> DEPLOYED (build plus deploy), the README's figure.
func TestBuildAndDeploy(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a program; skipped with -short")
	}
	e := newEnv(t)
	b := &build.Builder{Dir: t.TempDir(), Jetgraph: cptest.Jetgraph(t), Go: cptest.GoTool(), Env: cptest.BuildEnv(), Objects: e.objs}
	cfgRepo, modRepo := t.TempDir(), t.TempDir()
	cptest.Commit(t, cfgRepo, "main", map[string]string{"graph.json": `{"graphs": {"bot": "echo"}}`})
	cptest.Commit(t, modRepo, "main", cptest.UserModule(t, cptest.Root(t), ""))
	for _, c := range []struct {
		name, dep, repo, check string
		kind                   controlplane.ArtifactKind
		run                    string
		want                   string
	}{
		{"graph.json", "cfg", cfgRepo, "", controlplane.ArtifactConfig,
			`{"assistant_id": "bot", "input": {"messages": [{"role": "user", "content": "hi"}]}}`, "echo: hi"},
		{"Go module", "mod", modRepo, "", controlplane.ArtifactBinary,
			`{"assistant_id": "greet", "input": {"name": "Ada"}}`, "Hello, Ada!"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			var log bytes.Buffer
			start := time.Now()
			art, err := b.Build(ctx, controlplane.BuildSpec{DeploymentID: c.dep, RevisionID: "r1", RepoURL: c.repo, RepoRef: "main"}, &log)
			if err != nil {
				t.Fatalf("%v\n%s", err, &log)
			}
			built := time.Since(start)
			if art.Kind != c.kind {
				t.Fatalf("artifact kind %s, want %s", art.Kind, c.kind)
			}
			if err := e.sup.Deploy(ctx, controlplane.DeploySpec{DeploymentID: c.dep, DeploymentName: c.dep, RevisionID: "r1", Artifact: art}, &log); err != nil {
				t.Fatalf("%v\n%s", err, &log)
			}
			t.Logf("create -> DEPLOYED for a %s repository: %v (build %v, deploy %v)", c.name,
				time.Since(start).Round(time.Millisecond), built.Round(time.Millisecond), (time.Since(start) - built).Round(time.Millisecond))
			resp, err := http.Post(e.sup.CustomURL(c.dep)+"/runs/wait", "application/json", strings.NewReader(c.run))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Contains(raw, []byte(c.want)) {
				t.Errorf("run: %d %s", resp.StatusCode, raw)
			}
			if err := e.sup.Remove(ctx, "", c.dep); err != nil {
				t.Fatal(err)
			}
			if art.Object != "" {
				if _, err := e.objs.Get(ctx, art.Object); !errors.Is(err, eventlog.ErrNoObject) {
					t.Errorf("the removed deployment's program: %v, want it deleted", err)
				}
			}
		})
	}
}

// TestRollbackWhileDraining rolls back to a revision whose previous process still drains a
// request in flight: the new process starts beside it, and the request sent to the old one
// completes.
func TestRollbackWhileDraining(t *testing.T) {
	e := newEnv(t)
	url := e.sup.CustomURL("d1")
	art := controlplane.Artifact{Kind: controlplane.ArtifactConfig, Config: []byte(`{"graphs": {"g": "echo", "slow": "delay"}}`)}
	if err := e.deploy(t, "d1", "r1", art); err != nil {
		t.Fatal(err)
	}
	_, th := call(t, "POST", url+"/threads", `{}`)
	thread, _ := th["thread_id"].(string)
	type result struct {
		code int
		out  map[string]any
	}
	done := make(chan result, 1)
	go func() {
		resp, err := http.Post(url+"/threads/"+thread+"/runs/wait", "application/json",
			strings.NewReader(`{"assistant_id": "slow", "input": {"delay": 2000}}`))
		if err != nil {
			done <- result{code: -1, out: map[string]any{"err": err.Error()}}
			return
		}
		defer resp.Body.Close()
		var out map[string]any
		raw, _ := io.ReadAll(resp.Body)
		_ = json.Unmarshal(raw, &out)
		done <- result{resp.StatusCode, out}
	}()
	for { // the run is in flight on r1's process
		if _, got := call(t, "GET", url+"/threads/"+thread, ""); got["status"] == "busy" {
			break
		}
		time.Sleep(10 * time.Millisecond) // polling a condition
	}
	if err := e.deploy(t, "d1", "r2", art); err != nil {
		t.Fatal(err)
	}
	if err := e.deploy(t, "d1", "r1", art); err != nil {
		t.Fatalf("rollback while the previous process drains: %v", err)
	}
	r := <-done
	if r.code != 200 || !strings.Contains(fmt.Sprint(r.out["messages"]), "finished after 2000ms") {
		t.Errorf("the request in flight during the switches: %d %v", r.code, r.out)
	}
	echo(t, url, "g", "after")
}
