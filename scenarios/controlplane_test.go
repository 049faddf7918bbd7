package scenarios

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// keyPattern finds a key jetgraph printed.
var keyPattern = regexp.MustCompile(`jgk_[A-Za-z0-9_-]{43}`)

// The control plane's scenario key (JETGRAPH_ADMIN_KEY) and the second tenant its admin key
// acts for (X-Tenant-Id).
const (
	scenarioAdminKey = "scenario-admin-key-0123456789abcdef"
	otherTenant      = "0d9c2d1e-7a55-4b7e-9f0c-2b1a3c4d5e6f"
)

// cp sends a control-plane request with the admin key (acting for tenant when not empty) and
// returns the status and the decoded answer (an object; nil for any other).
func cp(t *testing.T, srv *server, method, path, tenant, body string) (int, map[string]any) {
	t.Helper()
	var v map[string]any
	code := cpInto(t, srv, method, path, tenant, body, &v)
	return code, v
}

// cpInto is cp decoding the answer into v, whatever its shape.
func cpInto(t *testing.T, srv *server, method, path, tenant, body string, v any) int {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", scenarioAdminKey)
	if tenant != "" {
		req.Header.Set("X-Tenant-Id", tenant)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, v)
	return resp.StatusCode
}

// must is cp that fails the test unless the status is want.
func must(t *testing.T, srv *server, want int, method, path, body string) map[string]any {
	t.Helper()
	code, v := cp(t, srv, method, path, "", body)
	if code != want {
		t.Fatalf("%s %s: %d %v, want %d", method, path, code, v, want)
	}
	return v
}

// git runs git in dir.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=scenario", "-c", "user.email=s@example.com"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// commit writes files in the repository at dir on branch and commits them.
func commit(t *testing.T, dir, branch string, files map[string]string) {
	t.Helper()
	git(t, dir, "checkout", "-q", "-B", branch)
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "scenario "+branch)
}

// newRepo is a git repository made by the test, with files on main.
func newRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	commit(t, dir, "main", files)
	return dir
}

// terminal revision statuses: polling stops at them.
var terminal = map[string]bool{"DEPLOYED": true, "CREATE_FAILED": true, "BUILD_FAILED": true,
	"DEPLOY_FAILED": true, "SKIPPED": true, "INTERRUPTED": true, "UNKNOWN": true}

// pollRevision polls a revision every 100 ms until stop says so (or 4 minutes pass: a Go
// build on a busy machine), and returns it.
func pollRevision(t *testing.T, srv *server, dep, rev string, stop func(status string) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		_, r := cp(t, srv, "GET", "/v2/deployments/"+dep+"/revisions/"+rev, "", "")
		if s, _ := r["status"].(string); stop(s) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("revision %s: still %v", rev, r["status"])
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func settled(s string) bool { return terminal[s] }

// rolloutLoad loops stateless /runs/wait calls of assistant at a deployment's custom_url until
// stop is called, which returns how many were sent and the failures (zero-downtime switch:
// none while revisions roll out).
func rolloutLoad(url, key, assistant string) (stop func() (int, []string)) {
	done := make(chan struct{})
	result := make(chan struct {
		n    int
		errs []string
	}, 1)
	go func() {
		n, errs := 0, []string{}
		body := `{"assistant_id": "` + assistant + `", "input": {"messages": [{"role": "user", "content": "hi"}]}}`
		for {
			select {
			case <-done:
				result <- struct {
					n    int
					errs []string
				}{n, errs}
				return
			default:
			}
			req, _ := http.NewRequest("POST", url+"/runs/wait", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Api-Key", key)
			n++
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(raw), "echo: hi") {
				errs = append(errs, fmt.Sprintf("%d %s", resp.StatusCode, raw))
			}
		}
	}()
	return func() (int, []string) {
		close(done)
		r := <-result
		return r.n, r.errs
	}
}

// deleteDeployment deletes a deployment and waits until it is gone (404).
func deleteDeployment(t *testing.T, srv *server, id string) {
	t.Helper()
	must(t, srv, 204, "DELETE", "/v2/deployments/"+id, "")
	deadline := time.Now().Add(time.Minute)
	for {
		if code, _ := cp(t, srv, "GET", "/v2/deployments/"+id, "", ""); code == 404 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("deployment %s still there a minute after DELETE", id)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitTraced waits until the control plane's tracing API holds a trace in the project of a
// deployment (its name), read with the admin key (the deployments' tenant): the runs of the
// deployment's processes are forwarded there.
func waitTraced(t *testing.T, srv *server, name string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if projects := tracingProjects(t, srv, name, ""); len(projects) == 1 {
			code, v := cp(t, srv, "POST", "/tracing/runs/query", "", `{"session": ["`+projects[0]["id"].(string)+`"], "is_root": true}`)
			if runs, _ := v["runs"].([]any); code == 200 && len(runs) > 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no trace of deployment %s at the control plane's /tracing", name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tracingProjects lists the control plane's tracing projects called name, read with the admin
// key acting for tenant (its own when empty).
func tracingProjects(t *testing.T, srv *server, name, tenant string) []map[string]any {
	t.Helper()
	var projects []map[string]any
	if code := cpInto(t, srv, "GET", "/tracing/sessions?name="+name, tenant, "", &projects); code != 200 || projects == nil {
		t.Fatalf("GET /tracing/sessions?name=%s: %d %v", name, code, projects)
	}
	return projects
}

func createDeployment(t *testing.T, srv *server, name, repo, ref string) (id, rev string) {
	t.Helper()
	d := must(t, srv, 201, "POST", "/v2/deployments", `{"name": "`+name+`", "source": "git_host",
		"source_config": {"repo_url": "`+repo+`"}, "source_revision_config": {"repo_ref": "`+ref+`"},
		"secrets": [{"name": "SCENARIO_SECRET", "value": "not-to-be-seen"}]}`)
	return d["id"].(string), d["latest_revision_id"].(string)
}

// TestControlPlaneScenario drives the control plane of the built binary against local git
// repositories: the API's authentication, tenants and validation, then the whole flow: a graph.json repository and a Go-graph module deployed and run through the
// official JS SDK at their custom_url, a PATCH to a new branch (the thread made before is still
// there), a redeploy of the first revision, a broken graph.json and a Go compile error
// (BUILD_FAILED with the reason), kill -9 while a revision builds (it finishes after the
// restart), and the deletion.
func TestControlPlaneScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	t.Setenv("JETGRAPH_ADMIN_KEY", scenarioAdminKey)
	data := t.TempDir()
	srv := startServer(t, data)

	req, _ := http.NewRequest("GET", srv.URL+"/v2/deployments", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 {
		t.Fatalf("no key: %v %v, want 401", resp, err)
	}
	if code, v := cp(t, srv, "POST", "/v2/deployments", "", `{"name": "x", "source": "git_host", "source_config": {}, "secrets": []}`); code != 422 {
		t.Fatalf("invalid deployment: %d %v", code, v)
	}

	configRepo := newRepo(t, map[string]string{"graph.json": `{"graphs": {"agent": "echo"}}`})
	commit(t, configRepo, "dev", map[string]string{"graph.json": `{"graphs": {"agent": "echo", "second": "echo"}}`})
	commit(t, configRepo, "broken", map[string]string{"graph.json": `{"graphs": 3}`})
	dep, first := createDeployment(t, srv, "config-app", configRepo, "main")
	if code, _ := cp(t, srv, "GET", "/v2/deployments/"+dep, otherTenant, ""); code != 404 {
		t.Errorf("another tenant's deployment: %d, want 404", code)
	}
	r := pollRevision(t, srv, dep, first, settled)
	if r["status"] != "DEPLOYED" {
		t.Fatalf("graph.json revision: %v", r)
	}
	d := must(t, srv, 200, "GET", "/v2/deployments/"+dep, "")
	url := d["source_config"].(map[string]any)["custom_url"].(string)
	out := runNode(t, srv, "controlplane.mjs", url, scenarioAdminKey, "agent", "run")
	threadID := strings.TrimPrefix(strings.Split(out, "\n")[0], "thread ")
	waitTraced(t, srv, "config-app")
	if other := tracingProjects(t, srv, "config-app", otherTenant); len(other) != 0 {
		t.Errorf("another tenant sees the deployment's tracing project: %v", other)
	}
	// The langsmith client reads them with the tenant's key (the admin's, whose tenant made the
	// deployment); the key of a tenant made now with `jetgraph keys`, the server running, does not.
	otherKey := keyPattern.FindString(jetgraph(t, false, "keys", "create", "--tenant", "scenario-other", "--data", data))
	if otherKey == "" {
		t.Fatal("jetgraph keys create printed no key")
	}
	runNode(t, srv, "controlplane_traces.mjs", "config-app", scenarioAdminKey, otherKey)
	// The Bearer scheme and X-Tenant-Id: the admin key as a bearer token reads its deployment;
	// the other tenant's key naming the admin's tenant is a 403.
	for _, c := range []struct {
		key, tenant string
		want        int
	}{{scenarioAdminKey, "", 200}, {scenarioAdminKey, d["tenant_id"].(string), 200}, {otherKey, "", 404}, {otherKey, d["tenant_id"].(string), 403}} {
		req, _ := http.NewRequest("GET", srv.URL+"/v2/deployments/"+dep, nil)
		req.Header.Set("Authorization", "Bearer "+c.key)
		if c.tenant != "" {
			req.Header.Set("X-Tenant-Id", c.tenant)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("bearer %.8s... for tenant %q: %d, want %d", c.key, c.tenant, resp.StatusCode, c.want)
		}
	}

	// A new branch: a new revision, active moves, the thread is still there; a /runs/wait loop
	// through custom_url sees no failure across this rollout and the redeploy below.
	stopLoad := rolloutLoad(url, scenarioAdminKey, "agent")
	d = must(t, srv, 200, "PATCH", "/v2/deployments/"+dep, `{"source_revision_config": {"repo_ref": "dev"}}`)
	second := d["latest_revision_id"].(string)
	if r := pollRevision(t, srv, dep, second, settled); r["status"] != "DEPLOYED" {
		t.Fatalf("dev revision: %v", r)
	}
	if d = must(t, srv, 200, "GET", "/v2/deployments/"+dep, ""); d["active_revision_id"] != second {
		t.Fatalf("active %v, want %s", d["active_revision_id"], second)
	}
	runNode(t, srv, "controlplane.mjs", url, scenarioAdminKey, "second", "check", threadID)

	// Roll back to the first revision: active moves back, no rebuild.
	must(t, srv, 200, "POST", "/v2/deployments/"+dep+"/revisions/"+first+"/redeploy", "")
	deadline := time.Now().Add(2 * time.Minute)
	for d["active_revision_id"] != first {
		if time.Now().After(deadline) {
			t.Fatalf("redeploy: active %v, want %s", d["active_revision_id"], first)
		}
		time.Sleep(100 * time.Millisecond)
		d = must(t, srv, 200, "GET", "/v2/deployments/"+dep, "")
	}
	if n, errs := stopLoad(); len(errs) > 0 || n == 0 {
		t.Errorf("/runs/wait through custom_url across a rollout and a redeploy: %d of %d failed: %v", len(errs), n, errs)
	} else {
		t.Logf("/runs/wait through custom_url across a rollout and a redeploy: 0 of %d failed", n)
	}
	// The same key as a bearer token (the spec's Bearer scheme), through the official SDK.
	ensureNodeModules(t)
	runClient(t, []string{"JETGRAPH_URL=" + srv.URL, "JG_AUTH_SCHEME=bearer"}, "node", "controlplane.mjs", url, scenarioAdminKey, "agent", "check", threadID)

	// A broken graph.json, and a branch the repository lacks: BUILD_FAILED with the reason, which
	// is also the log's last line; the active revision keeps serving.
	for _, ref := range []string{"broken", "no-such-branch"} {
		d = must(t, srv, 200, "PATCH", "/v2/deployments/"+dep, `{"source_revision_config": {"repo_ref": "`+ref+`"}}`)
		rev := d["latest_revision_id"].(string)
		r := pollRevision(t, srv, dep, rev, settled)
		reason, _ := r["failure_reason"].(string)
		if r["status"] != "BUILD_FAILED" || reason == "" {
			t.Fatalf("%s: %v", ref, r)
		}
		log := strings.Split(strings.TrimRight(revisionLog(t, srv, dep, rev), "\n"), "\n")
		if last, want := log[len(log)-1], "BUILD_FAILED: "+strings.Join(strings.Fields(reason), " "); last != want {
			t.Errorf("%s: the log ends %q, want %q", ref, last, want)
		}
	}

	// A Go module with its own graphs, and a compile error on another branch.
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	mainGo, err := os.ReadFile(filepath.Join(root, "cmd/jetgraph/cli/testdata/usermodule/main.go"))
	if err != nil {
		t.Fatal(err)
	}
	goSum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	goRepo := newRepo(t, map[string]string{"main.go": string(mainGo), "go.sum": string(goSum),
		"go.mod":     "module example.com/mygraphs\n\ngo 1.26\n\nrequire github.com/jetgraph/jetgraph v0.0.0\n\nreplace github.com/jetgraph/jetgraph => " + root + "\n",
		"graph.json": `{"graphs": {"greeter": "greeter"}}`})
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = goRepo
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}
	git(t, goRepo, "add", "-A")
	git(t, goRepo, "commit", "-q", "-m", "tidy")
	commit(t, goRepo, "rebuild", map[string]string{"extra.go": "package main\n\nconst rebuilt = true\n"})
	commit(t, goRepo, "compile-error", map[string]string{"extra.go": "package main\n\nconst rebuilt = undefinedName\n"})
	goDep, goFirst := createDeployment(t, srv, "go-app", goRepo, "main")
	if r := pollRevision(t, srv, goDep, goFirst, settled); r["status"] != "DEPLOYED" {
		t.Fatalf("Go revision: %v", r)
	}
	goURL := must(t, srv, 200, "GET", "/v2/deployments/"+goDep, "")["source_config"].(map[string]any)["custom_url"].(string)
	runNode(t, srv, "controlplane.mjs", goURL, scenarioAdminKey, "greeter", "run")
	waitTraced(t, srv, "go-app")
	d = must(t, srv, 200, "PATCH", "/v2/deployments/"+goDep, `{"source_revision_config": {"repo_ref": "compile-error"}}`)
	if r := pollRevision(t, srv, goDep, d["latest_revision_id"].(string), settled); r["status"] != "BUILD_FAILED" ||
		!strings.Contains(r["failure_reason"].(string)+r["log_tail"].(string), "undefinedName") {
		t.Fatalf("compile error: %v", r)
	}

	// kill -9 while a revision builds: it finishes after the restart.
	d = must(t, srv, 200, "PATCH", "/v2/deployments/"+goDep, `{"source_revision_config": {"repo_ref": "rebuild"}}`)
	building := d["latest_revision_id"].(string)
	pollRevision(t, srv, goDep, building, func(s string) bool { return s == "BUILDING" || terminal[s] })
	srv.Kill9()
	srv = startServerAt(t, data, strings.TrimPrefix(srv.URL, "http://")) // custom_url holds the address
	r = pollRevision(t, srv, goDep, building, settled)
	if r["status"] != "DEPLOYED" {
		t.Fatalf("after kill -9 mid-build: %v", r)
	}
	if !strings.Contains(func() string { raw, _ := json.Marshal(r["status_history"]); return string(raw) }(), "resumed") {
		t.Logf("history %v (the build had finished before the kill)", r["status_history"])
	}
	runNode(t, srv, "controlplane.mjs", url, scenarioAdminKey, "agent", "check", threadID)

	// The secret is sealed at rest: no file of the data folder (the log's store, controlplane.db,
	// the revisions' process logs) holds it; the key file was made on first start, mode 0600.
	if st, err := os.Stat(filepath.Join(data, "secrets.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("secrets.key: %v, %v", st, err)
	}
	_ = filepath.WalkDir(data, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		if raw, err := os.ReadFile(path); err == nil && strings.Contains(string(raw), "not-to-be-seen") {
			t.Errorf("%s holds the deployment's secret in clear text", path)
		}
		return nil
	})
	for _, id := range []string{dep, goDep} {
		deleteDeployment(t, srv, id)
	}
	if strings.Contains(srv.logs.String(), "not-to-be-seen") || strings.Contains(srv.logs.String(), scenarioAdminKey) {
		t.Error("a secret or the key reached the logs")
	}
}
