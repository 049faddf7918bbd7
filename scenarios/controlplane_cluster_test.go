package scenarios

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// TestControlPlaneOnAnOperatorCluster runs two jetgraph processes on one external NATS server
// in operator mode, set up by `jetgraph nats init`, as a cluster would: a git_host deployment
// made through the first is DEPLOYED and runs in both (its thread, made through one process's
// custom_url, is read through the other's: one data namespace, an account on the cluster,
// apart from jetgraph's own log); after kill -9 of the first, the second builds and deploys a
// new revision on its own, the thread still there, the runs traced to the deployment's
// project; the deletion through the second deletes the account's streams.
func TestControlPlaneOnAnOperatorCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	t.Setenv("JETGRAPH_ADMIN_KEY", scenarioAdminKey)
	a, b, ns := operatorCluster(t)

	repo := newRepo(t, map[string]string{"graph.json": `{"graphs": {"agent": "echo"}}`})
	commit(t, repo, "dev", map[string]string{"graph.json": `{"graphs": {"agent": "echo", "second": "echo"}}`})
	dep, first := createDeployment(t, a, "cluster-app", repo, "main")
	if r := pollRevision(t, a, dep, first, settled); r["status"] != "DEPLOYED" {
		t.Fatalf("first revision: %v", r)
	}
	viaA, viaB := a.URL+"/deployments/"+dep, b.URL+"/deployments/"+dep
	out := runNode(t, a, "controlplane.mjs", viaA, scenarioAdminKey, "agent", "run")
	threadID := strings.TrimPrefix(strings.Split(out, "\n")[0], "thread ")
	followed(t, b, dep)
	runNode(t, b, "controlplane.mjs", viaB, scenarioAdminKey, "agent", "check", threadID)
	if code, _ := cp(t, a, "GET", "/threads/"+threadID, "", ""); code != 404 {
		t.Errorf("the deployment's thread in jetgraph's own runtime: %d, want 404", code)
	}

	a.Kill9()
	d := must(t, b, 200, "PATCH", "/v2/deployments/"+dep, `{"source_revision_config": {"repo_ref": "dev"}}`)
	second := d["latest_revision_id"].(string)
	if r := pollRevision(t, b, dep, second, settled); r["status"] != "DEPLOYED" {
		t.Fatalf("the revision made after the first process died: %v", r)
	}
	runNode(t, b, "controlplane.mjs", viaB, scenarioAdminKey, "second", "check", threadID)
	waitTraced(t, b, "cluster-app") // the runs' traces, forwarded to the control plane's project

	deleteDeployment(t, b, dep)
	// Its account's streams are gone from the server, and the account cannot be made again.
	op, err := eventlog.OpenOperator(ns.URL(), ns.File(eventlog.OperatorSigningKeyFile), ns.File(eventlog.SystemCredsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	pub, err := op.AccountKey("deployment-" + dep)
	if err != nil {
		t.Fatal(err)
	}
	if n := ns.AccountStreams(t, pub); n != 0 {
		t.Errorf("the deleted deployment's account still has %d streams on the server", n)
	}
	if err := op.AddAccount(context.Background(), "deployment-"+dep); !errors.Is(err, eventlog.ErrAccountRemoved) {
		t.Errorf("the deleted deployment's account made again: %v", err)
	}
	if strings.Contains(a.logs.String()+b.logs.String(), "not-to-be-seen") {
		t.Error("a secret reached the logs")
	}
	// With the keyring shared, every process opens the secrets the other sealed.
	if logs := a.logs.String() + b.logs.String(); strings.Contains(logs, "not in the keyring") {
		t.Errorf("a process could not open a secret:\n%s", logs)
	}
}

// operatorCluster starts two jetgraph processes on one external NATS server in operator mode,
// set up by `jetgraph nats init`.
func operatorCluster(t *testing.T) (a, b *server, ns *eventlogtest.OperatorServer) {
	t.Helper()
	// The processes of a cluster share the keyring of the deployments' secrets (README).
	t.Setenv("JETGRAPH_SECRETS_KEY", "c2NlbmFyaW8tY2x1c3Rlci1zZWNyZXRzLWtleS0zMmI=")
	dir := filepath.Join(t.TempDir(), "nats")
	out := jetgraph(t, false, "nats", "init", dir, "--listen", "127.0.0.1:-1")
	if !strings.Contains(out, "--nats-operator-key "+filepath.Join(dir, eventlog.OperatorSigningKeyFile)) {
		t.Fatalf("nats init printed:\n%s", out)
	}
	ns = eventlogtest.ServeOperator(t, dir)
	flags := []string{"--nats-url", ns.URL(), "--nats-creds", ns.File(eventlog.JetgraphCredsFile),
		"--nats-operator-key", ns.File(eventlog.OperatorSigningKeyFile), "--nats-system-creds", ns.File(eventlog.SystemCredsFile),
		"--control-ack-wait", "2s"}
	return startServerArgs(t, t.TempDir(), flags...), startServerArgs(t, t.TempDir(), flags...), ns
}

// followed waits until a process serves a deployment it did not deploy (it follows the
// active revision): its custom_url answers /ok.
func followed(t *testing.T, srv *server, dep string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if code, _ := cp(t, srv, "GET", "/deployments/"+dep+"/ok", "", ""); code == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the second process does not serve the deployment two minutes after it was DEPLOYED")
		}
	}
}

// TestControlPlaneProjectOnACluster deploys the TypeScript example project through the first
// of two processes of a cluster: the second, which did not build it, makes the revision's
// folder from the object store, installs its packages from its own cache, and serves it at its
// custom_url, through which the official JS SDK runs the example.
func TestControlPlaneProjectOnACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	t.Setenv("JETGRAPH_ADMIN_KEY", scenarioAdminKey)
	ensureNodeModules(t)
	a, b, _ := operatorCluster(t)
	repo := newProjectRepo(t, typeScriptExample)
	d := must(t, a, 201, "POST", "/v2/deployments", `{"name": "cluster-ts", "source": "git_host",
		"source_config": {"repo_url": "`+repo+`"}, "source_revision_config": {"repo_ref": "main", "graph_config_path": "langgraph.json"}, "secrets": []}`)
	dep := d["id"].(string)
	deployed(t, a, dep, d["latest_revision_id"].(string), time.Now())
	followed(t, b, dep)
	if got := lastLine(runClient(t, []string{"JETGRAPH_URL=" + b.URL + "/deployments/" + dep, "LANGGRAPH_API_KEY=" + scenarioAdminKey},
		"node", "example_agent.mjs")); got != "ok" {
		t.Fatalf("example_agent.mjs through the second process printed %q, want ok", got)
	}
	deleteDeployment(t, b, dep)
}
