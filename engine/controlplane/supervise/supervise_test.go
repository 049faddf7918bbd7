package supervise_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/cptest"
	"github.com/jetgraph/jetgraph/engine/controlplane/supervise"
	"github.com/jetgraph/jetgraph/eventlog"
)

// env is a control plane for the tests: a listening embedded server with accounts, an object
// store, a supervisor whose proxy a real HTTP server serves.
type env struct {
	log  *eventlog.Log
	objs *eventlog.Objects
	sup  *supervise.Supervisor
	dir  string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, eventlog.Config{Listen: "127.0.0.1:-1", Accounts: true})
}

// newEnvWith is newEnv with the log's configuration cfg (its Dir a new folder).
func newEnvWith(t *testing.T, cfg eventlog.Config) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	cfg.Dir = dir
	l, err := eventlog.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := l.OpenObjects(ctx, "TEST_REVISIONS", 0)
	if err != nil {
		t.Fatal(err)
	}
	sup := &supervise.Supervisor{Dir: filepath.Join(dir, "deployments"), Jetgraph: cptest.Jetgraph(t), NATS: supervise.EmbeddedAccounts{Log: l},
		Objects: objs, GracePeriod: 5 * time.Second, HealthTimeout: 30 * time.Second}
	srv := httptest.NewServer(sup.Proxy())
	sup.BaseURL = srv.URL
	t.Cleanup(func() {
		sup.Close()
		srv.Close()
		l.Close()
	})
	return &env{log: l, objs: objs, sup: sup, dir: dir}
}

// config is a config revision serving the echo graph under id graph.
func config(graph string) controlplane.Artifact {
	return controlplane.Artifact{Kind: controlplane.ArtifactConfig, Config: []byte(`{"graphs": {"` + graph + `": "echo"}}`)}
}

func (e *env) deploy(t *testing.T, dep, rev string, art controlplane.Artifact, secrets ...controlplane.Secret) error {
	t.Helper()
	var log bytes.Buffer
	err := e.sup.Deploy(context.Background(), controlplane.DeploySpec{Tenant: "t", DeploymentID: dep, DeploymentName: "name-" + dep,
		RevisionID: rev, Artifact: art, Secrets: secrets}, &log)
	if err != nil {
		t.Logf("deploy %s/%s log:\n%s", dep, rev, &log)
	}
	return err
}

// call sends a JSON request to the deployment's custom_url and decodes the answer.
func call(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// echo runs graph on a new thread of the deployment at url and returns the thread's id.
func echo(t *testing.T, url, graph, text string) string {
	t.Helper()
	code, th := call(t, "POST", url+"/threads", `{}`)
	if code != 200 {
		t.Fatalf("create thread: %d %v", code, th)
	}
	id, _ := th["thread_id"].(string)
	code, out := call(t, "POST", url+"/threads/"+id+"/runs/wait",
		`{"assistant_id": "`+graph+`", "input": {"messages": [{"role": "user", "content": "`+text+`"}]}}`)
	if code != 200 || !strings.Contains(fmt.Sprint(out["messages"]), "echo: "+text) {
		t.Fatalf("run %s: %d %v", graph, code, out)
	}
	return id
}

// TestDeployLifecycle deploys config revisions of two deployments and checks: a graph runs
// through the proxy; a new revision takes over and the threads made before are still there; a
// rollback to the first revision; two deployments never see each other's data; Remove stops
// the processes and deletes the data, so the namespace starts empty again.
func TestDeployLifecycle(t *testing.T) {
	e := newEnv(t)
	url := e.sup.CustomURL("d1")
	if err := e.deploy(t, "d1", "r1", config("first")); err != nil {
		t.Fatal(err)
	}
	thread := echo(t, url, "first", "one")
	if err := e.deploy(t, "d1", "r1", config("first")); err != nil { // the serving revision: a no-op
		t.Fatal(err)
	}

	if err := e.deploy(t, "d1", "r2", config("second")); err != nil {
		t.Fatal(err)
	}
	echo(t, url, "second", "two")
	if code, _ := call(t, "GET", url+"/threads/"+thread, ""); code != 200 {
		t.Errorf("the thread made on r1 is gone on r2: %d", code)
	}
	if code, _ := call(t, "POST", url+"/runs/wait", `{"assistant_id": "first", "input": {}}`); code != 404 {
		t.Errorf("r1's graph still answers on r2: %d", code)
	}

	if err := e.deploy(t, "d1", "r1", config("first")); err != nil { // rollback
		t.Fatal(err)
	}
	echo(t, url, "first", "three")
	if code, _ := call(t, "GET", url+"/threads/"+thread, ""); code != 200 {
		t.Errorf("the thread made on r1 is gone after the rollback: %d", code)
	}

	if err := e.deploy(t, "d2", "r1", config("first")); err != nil {
		t.Fatal(err)
	}
	other := e.sup.CustomURL("d2")
	if code, _ := call(t, "GET", other+"/threads/"+thread, ""); code != 404 {
		t.Errorf("deployment d2 sees d1's thread: %d", code)
	}
	echo(t, other, "first", "four")

	if err := e.sup.Remove(context.Background(), "t", "d1"); err != nil {
		t.Fatal(err)
	}
	if err := e.sup.Remove(context.Background(), "t", "d1"); err != nil { // idempotent
		t.Fatal(err)
	}
	if code, _ := call(t, "GET", url+"/threads/"+thread, ""); code != 404 {
		t.Errorf("a removed deployment still answers: %d", code)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "deployments", "d1")); !os.IsNotExist(err) {
		t.Errorf("a removed deployment's folder: %v", err)
	}
	if err := e.deploy(t, "d1", "r1", config("first")); err != nil {
		t.Fatal(err)
	}
	if code, _ := call(t, "GET", url+"/threads/"+thread, ""); code != 404 {
		t.Errorf("a removed deployment's thread came back: %d", code)
	}
	if code, _ := call(t, "GET", other+"/ok", ""); code != 200 {
		t.Errorf("d2 stopped with d1's removal: %d", code)
	}
}

// TestDeploySyncRounds: with --sync always and the control plane's own listener, a
// deployment's process (a real child, connected to the listener with its account's key) is
// admitted and waits for a sync round of the control plane's process after its appends: its
// runs work, and every one adds rounds, which run only when asked.
func TestDeploySyncRounds(t *testing.T) {
	e := newEnvWith(t, eventlog.Config{Listen: "127.0.0.1:-1", Accounts: true, JetgraphListener: true, SyncAlways: true})
	if err := e.deploy(t, "d1", "r1", config("first")); err != nil {
		t.Fatal(err)
	}
	url := e.sup.CustomURL("d1")
	for i := range 3 {
		before := e.log.SyncRounds()
		echo(t, url, "first", fmt.Sprint("run ", i))
		if after := e.log.SyncRounds(); after <= before {
			t.Fatalf("run %d of the deployment appended without a sync round of the control plane (%d rounds before and after)", i, before)
		}
	}
}

// TestDeployFailedHealth checks that a revision whose process never gets healthy fails the
// deploy, with its output in the log, and the revision before it keeps serving.
func TestDeployFailedHealth(t *testing.T) {
	e := newEnv(t)
	if err := e.deploy(t, "d1", "r1", config("first")); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	err := e.sup.Deploy(context.Background(), controlplane.DeploySpec{DeploymentID: "d1", RevisionID: "r2",
		Artifact: controlplane.Artifact{Kind: controlplane.ArtifactConfig, Config: []byte(`{"graphs": {"x": "nope"}}`)}}, &log)
	if err == nil || !strings.Contains(err.Error(), "health check failed") {
		t.Fatalf("err = %v, want a failed health check", err)
	}
	if !strings.Contains(log.String(), `unknown graph \"nope\"`) {
		t.Errorf("the log does not show the process's output:\n%s", &log)
	}
	echo(t, e.sup.CustomURL("d1"), "first", "still")

	for _, c := range []struct{ dep, rev string }{{"../x", "r"}, {"d1", "a b"}, {"", "r"}} {
		err := e.sup.Deploy(context.Background(), controlplane.DeploySpec{DeploymentID: c.dep, RevisionID: c.rev, Artifact: config("x")}, io.Discard)
		if !engine.Is(engine.Invalid, err) {
			t.Errorf("ids %q %q: err = %v, want invalid", c.dep, c.rev, err)
		}
	}
	err = e.sup.Deploy(context.Background(), controlplane.DeploySpec{DeploymentID: "d1", RevisionID: "r3", Artifact: config("x"),
		Secrets: []controlplane.Secret{{Name: "A=B", Value: "v"}}}, io.Discard)
	if !engine.Is(engine.Invalid, err) {
		t.Errorf("a secret named A=B: err = %v, want invalid", err)
	}
}

// TestDeploySecretsAndRestart checks a revision process's environment (the deployment's
// secrets, nothing of the parent's), and that a process that dies is started again.
func TestDeploySecretsAndRestart(t *testing.T) {
	t.Setenv("JETGRAPH_TEST_PARENT_SECRET", "parent-only")
	e := newEnv(t)
	if err := e.deploy(t, "d1", "r1", config("first"), controlplane.Secret{Name: "MY_SECRET", Value: "s3cr3t"}); err != nil {
		t.Fatal(err)
	}
	data, _ := filepath.Glob(filepath.Join(e.dir, "deployments", "d1", "r1", "data-*"))
	if len(data) != 1 {
		t.Fatalf("data folders of r1: %q", data)
	}
	pid := servingPID(t, data[0], 0)
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	vars := strings.Split(string(environ), "\x00")
	if !contains(vars, "MY_SECRET=s3cr3t") || contains(vars, "JETGRAPH_TEST_PARENT_SECRET=parent-only") {
		t.Errorf("the process's environment: %q", vars)
	}
	proc, _ := os.FindProcess(pid)
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	servingPID(t, data[0], pid)
	echo(t, e.sup.CustomURL("d1"), "first", "again")
}

func contains(vars []string, v string) bool {
	for _, x := range vars {
		if x == v {
			return true
		}
	}
	return false
}

// servingPID waits for a serving process other than not in data folder dir (its serve.json)
// to answer /ok, and returns its pid.
func servingPID(t *testing.T, dir string, not int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var info struct {
			PID  int    `json:"pid"`
			Addr string `json:"addr"`
		}
		if raw, err := os.ReadFile(filepath.Join(dir, "serve.json")); err == nil && json.Unmarshal(raw, &info) == nil && info.PID != not {
			if resp, err := http.Get("http://" + info.Addr + "/ok"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					return info.PID
				}
			}
		}
		time.Sleep(20 * time.Millisecond) // polling a condition, not a fixed wait
	}
	t.Fatalf("no process serving from %s", dir)
	return 0
}

// TestDeployAfterRestart checks that a restarted control plane (a new log on the same data
// folder, a new supervisor) runs the active revision again when the pipeline deploys it, with
// the deployment's data; and that SSE streams through the proxy.
func TestDeployAfterRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	start := func() (*supervise.Supervisor, func()) {
		l, err := eventlog.Open(ctx, eventlog.Config{Dir: dir, Listen: "127.0.0.1:-1", Accounts: true})
		if err != nil {
			t.Fatal(err)
		}
		objs, err := l.OpenObjects(ctx, "TEST_REVISIONS", 0)
		if err != nil {
			t.Fatal(err)
		}
		sup := &supervise.Supervisor{Dir: filepath.Join(dir, "deployments"), Jetgraph: cptest.Jetgraph(t), NATS: supervise.EmbeddedAccounts{Log: l}, Objects: objs,
			GracePeriod: 5 * time.Second}
		srv := httptest.NewServer(sup.Proxy())
		sup.BaseURL = srv.URL
		return sup, func() { sup.Close(); srv.Close(); l.Close() }
	}
	sup, stop := start()
	spec := controlplane.DeploySpec{DeploymentID: "d1", RevisionID: "r1", Artifact: config("g")}
	if err := sup.Deploy(ctx, spec, io.Discard); err != nil {
		t.Fatal(err)
	}
	thread := echo(t, sup.CustomURL("d1"), "g", "before")
	stop()

	sup, stop = start()
	defer stop()
	if err := sup.Deploy(ctx, spec, io.Discard); err != nil {
		t.Fatal(err)
	}
	url := sup.CustomURL("d1")
	if code, _ := call(t, "GET", url+"/threads/"+thread, ""); code != 200 {
		t.Errorf("the thread is gone after a restart: %d", code)
	}
	resp, err := http.Post(url+"/threads/"+thread+"/runs/stream", "application/json",
		strings.NewReader(`{"assistant_id": "g", "input": {"messages": [{"role": "user", "content": "streamed"}]}, "stream_mode": ["values"]}`))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") ||
		!strings.Contains(string(raw), "event: values") || !strings.Contains(string(raw), "echo: streamed") {
		t.Errorf("stream through the proxy: %s %s", ct, raw)
	}
}

// TestDeployProgramDigest checks that a built program is run only when the object store's
// copy has the artifact's digest.
func TestDeployProgramDigest(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.objs.Put(ctx, "revisions/d1/r1", []byte("#!/bin/sh\nexit 0\n")); err != nil {
		t.Fatal(err)
	}
	other := sha256.Sum256([]byte("another program"))
	for _, digest := range []string{hex.EncodeToString(other[:]), "../../etc/passwd"} {
		err := e.sup.Deploy(ctx, controlplane.DeploySpec{DeploymentID: "d1", RevisionID: "r1", Artifact: controlplane.Artifact{
			Kind: controlplane.ArtifactBinary, Object: "revisions/d1/r1", Digest: digest, Config: []byte(`{}`)}}, io.Discard)
		if !engine.Is(engine.Invalid, err) || !strings.Contains(err.Error(), "digest") {
			t.Errorf("digest %s: err = %v, want the program refused", digest, err)
		}
	}
}
