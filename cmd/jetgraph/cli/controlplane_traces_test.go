package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine/controlplane/cptest"
	"github.com/jetgraph/jetgraph/engine/controlplane/supervise"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
)

// send sends a request with key (none when empty) and returns the status and the decoded body.
func send(t *testing.T, method, url, key, body string) (int, any) {
	t.Helper()
	var h map[string]string
	if key != "" {
		h = map[string]string{"X-Api-Key": key}
	}
	code, _, v := sendHeaders(t, method, url, h, body)
	return code, v
}

// sendHeaders is send with the request's headers, and the answer's.
func sendHeaders(t *testing.T, method, url string, header map[string]string, body string) (int, http.Header, any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v any
	_ = json.Unmarshal(raw, &v)
	return resp.StatusCode, resp.Header, v
}

// field is v[path[0]][path[1]]..., nil when absent.
func field(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

// tenantKeys makes a data folder (a first serve, stopped) and a key per tenant in it with
// `jetgraph keys create`, and returns the folder and the keys.
func tenantKeys(t *testing.T, tenants ...string) (string, []string) {
	t.Helper()
	data := t.TempDir()
	startServe(t, Program{}, data).stop(t)
	var keys []string
	for _, tenant := range tenants {
		out, _, err := run(t, Program{}, "keys", "create", "--tenant", tenant, "--data", data)
		key := keyPattern.FindString(out)
		if err != nil || key == "" {
			t.Fatalf("keys create --tenant %s: %v\n%s", tenant, err, out)
		}
		keys = append(keys, key)
	}
	return data, keys
}

// projectID is the id of the tracing project called name that key's tenant sees at base, "" when
// there is none.
func projectID(t *testing.T, base, key, name string) string {
	t.Helper()
	code, v := send(t, "GET", base+"/tracing/sessions?name="+url.QueryEscape(name), key, "")
	list, _ := v.([]any)
	if code != 200 || len(list) != 1 {
		return ""
	}
	id, _ := field(list[0], "id").(string)
	return id
}

// TestTracingTakesControlPlaneKeys checks serve's tracing API with the control plane's keys: a
// tenant's key writes and reads its tenant's traces, another tenant's key (the admin's
// included) and no key do not see them, and a key of jetgraph's form that is not stored is a
// 401. Any other key is still the single-user default tenant.
func TestTracingTakesControlPlaneKeys(t *testing.T) {
	const admin = "traces-admin-key-0123456789abcdef"
	t.Setenv(AdminKeyEnv, admin)
	data, keys := tenantKeys(t, "acme", "bravo")
	acme, bravo := keys[0], keys[1]
	s := startServe(t, Program{}, data)

	id := uuid.NewString()
	start := time.Now().UTC()
	run, _ := json.Marshal(map[string]any{"id": id, "trace_id": id, "dotted_order": trace.FormatSegment(start, id),
		"name": "acme-run", "run_type": "chain", "start_time": start.Format(time.RFC3339Nano), "session_name": "acme-project"})
	code, v := send(t, "POST", s.url+"/tracing/runs/batch", acme, `{"post": [`+string(run)+`]}`)
	if code != 202 {
		t.Fatalf("ingest with acme's key: %d %v", code, v)
	}
	waitFor(t, "acme's run", func() bool {
		code, _ := send(t, "GET", s.url+"/tracing/runs/"+id, acme, "")
		return code == 200
	})
	for _, c := range []struct {
		who, key string
		want     int
	}{
		{"acme", acme, 200},
		{"bravo", bravo, 404},
		{"the admin", admin, 404},
		{"no key", "", 404},
		{"a single-user client's key", "anything", 404},
		{"an unknown key of jetgraph's form", "jgk_" + strings.Repeat("x", 43), 401},
	} {
		if code, _ := send(t, "GET", s.url+"/tracing/runs/"+id, c.key, ""); code != c.want {
			t.Errorf("%s reads acme's run: %d, want %d", c.who, code, c.want)
		}
	}
	if projectID(t, s.url, acme, "acme-project") == "" {
		t.Error("acme does not see its project")
	}
	if projectID(t, s.url, bravo, "acme-project") != "" || projectID(t, s.url, "", "acme-project") != "" {
		t.Error("another tenant sees acme's project")
	}
}

// TestDeploymentTracesReachTheControlPlane deploys a git_host revision with a tenant's key and
// runs a graph at its custom_url: the run's trace, which the revision's own process makes,
// reaches the control plane's tracing API in the project named after the deployment, which the
// tenant reads with its key and no other tenant sees. The process's key (in the deployment's
// folder, mode 0600) is never printed, opens nothing but /tracing, and is revoked with the
// deployment.
func TestDeploymentTracesReachTheControlPlane(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jetgraph and runs a revision's process")
	}
	bin := cptest.Jetgraph(t)
	jetgraphBinary = func() (string, error) { return bin, nil }
	t.Cleanup(func() { jetgraphBinary = os.Executable })
	const admin = "traces-admin-key-0123456789abcdef"
	t.Setenv(AdminKeyEnv, admin)
	data, keys := tenantKeys(t, "acme", "bravo")
	acme, bravo := keys[0], keys[1]
	repo := t.TempDir()
	cptest.Commit(t, repo, "main", map[string]string{"graph.json": `{"graphs": {"agent": "echo"}}`})
	s := startServe(t, Program{}, data)

	code, d := call(t, "POST", s.url+"/v2/deployments", acme, `{"name": "traced-agent", "source": "git_host",
		"source_config": {"repo_url": "`+repo+`"}, "source_revision_config": {"repo_ref": "main"}, "secrets": []}`)
	if code != 201 {
		t.Fatalf("create: %d %v", code, d)
	}
	dep := d["id"].(string)
	var r map[string]any
	waitFor(t, "the revision to settle", func() bool {
		_, r = call(t, "GET", s.url+"/v2/deployments/"+dep+"/revisions/"+d["latest_revision_id"].(string), acme, "")
		return r["status"] == "DEPLOYED" || strings.HasSuffix(r["status"].(string), "FAILED")
	})
	if r["status"] != "DEPLOYED" {
		t.Fatalf("revision: %v", r)
	}
	_, d = call(t, "GET", s.url+"/v2/deployments/"+dep, acme, "")
	custom, _ := field(d, "source_config", "custom_url").(string)
	runID := runAt(t, custom, acme)

	// The run's trace, at the control plane, in the deployment's project of acme's tenant.
	root := traceAt(t, s.url, acme, runID)
	project := projectID(t, s.url, acme, "traced-agent")
	if project == "" || field(root, "session_id") != project || field(root, "name") != "agent" {
		t.Errorf("the trace's root %v; project traced-agent %q", root, project)
	}
	code, q := send(t, "POST", s.url+"/tracing/runs/query", acme, `{"session": ["`+project+`"], "trace": "`+runID+`"}`)
	if spans, _ := field(q, "runs").([]any); code != 200 || len(spans) < 2 {
		t.Errorf("the trace's spans in the project: %d %v", code, q)
	}
	for who, key := range map[string]string{"bravo": bravo, "the admin": admin, "no key": ""} {
		if code, _ := send(t, "GET", s.url+"/tracing/runs/"+runID, key, ""); code != 404 {
			t.Errorf("%s reads the deployment's trace: %d, want 404", who, code)
		}
		if projectID(t, s.url, key, "traced-agent") != "" {
			t.Errorf("%s sees the deployment's project", who)
		}
	}

	// The deployment's key: in its folder, readable by its owner alone, never printed, only
	// for /tracing, revoked with the deployment.
	path := filepath.Join(data, "deployments", dep, supervise.TraceKeyFileName)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the deployment's trace key file: %v %v", fi, err)
	}
	raw, _ := os.ReadFile(path)
	key := strings.TrimSpace(string(raw))
	if !keyPattern.MatchString(key) || strings.Contains(s.logs.String(), key) {
		t.Fatalf("the deployment's key %q is not a key, or was printed", key[:min(len(key), 8)])
	}
	if code, _ := call(t, "GET", s.url+"/v2/deployments", key, ""); code != 401 {
		t.Errorf("the deployment's key at the control plane API: %d, want 401", code)
	}
	if code, _ := send(t, "GET", s.url+"/tracing/runs/"+runID, key, ""); code != 200 {
		t.Errorf("the deployment's key at /tracing: %d, want 200", code)
	}
	vars := processEnv(t, filepath.Join(data, "deployments", dep))
	for _, want := range []string{supervise.TraceForwardURLEnv + "=" + s.url + "/tracing", supervise.TraceForwardProjectEnv + "=traced-agent",
		supervise.TraceForwardKeyEnv + "=" + key} {
		if vars != nil && !slices.Contains(vars, want) {
			t.Errorf("the process's environment has no %s", strings.SplitN(want, "=", 2)[0])
		}
	}
	for _, v := range vars {
		if name, _, _ := strings.Cut(v, "="); !slices.Contains([]string{"PATH", "TMPDIR", "HOME", supervise.TraceForwardURLEnv,
			supervise.TraceForwardProjectEnv, supervise.TraceForwardKeyEnv}, name) {
			t.Errorf("the process's environment has %s", name)
		}
	}

	// A restart of the control plane: the revision runs again, with the same key, and its runs
	// are traced to the control plane again.
	s.stop(t)
	s = startServe(t, Program{}, data)
	custom = s.url + "/deployments/" + dep // (custom_url is the address of the server that made it)
	waitFor(t, "the revision to serve again", func() bool {
		code, _ := send(t, "GET", custom+"/ok", acme, "")
		return code == 200
	})
	traceAt(t, s.url, acme, runAt(t, custom, acme))
	if raw, _ := os.ReadFile(path); strings.TrimSpace(string(raw)) != key {
		t.Error("the deployment's key changed with a restart")
	}

	if code, _ := call(t, "DELETE", s.url+"/v2/deployments/"+dep, acme, ""); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	waitFor(t, "the deployment's removal", func() bool {
		code, _ := call(t, "GET", s.url+"/v2/deployments/"+dep, acme, "")
		return code == http.StatusNotFound
	})
	if code, _ := send(t, "GET", s.url+"/tracing/runs/"+runID, key, ""); code != 401 {
		t.Errorf("the deleted deployment's key at /tracing: %d, want 401", code)
	}
}

// runAt runs the echo graph "agent" on a new thread at a deployment's custom_url and returns
// the run's id.
func runAt(t *testing.T, custom, key string) string {
	t.Helper()
	code, th := call(t, "POST", custom+"/threads", key, `{}`)
	if code != 200 {
		t.Fatalf("thread at custom_url: %d %v", code, th)
	}
	thread := th["thread_id"].(string)
	code, out := call(t, "POST", custom+"/threads/"+thread+"/runs/wait", key,
		`{"assistant_id": "agent", "input": {"messages": [{"role": "user", "content": "traced"}]}}`)
	if code != 200 || !strings.Contains(string(mustJSON(t, out)), "echo: traced") {
		t.Fatalf("run at custom_url: %d %v", code, out)
	}
	_, runs := send(t, "GET", custom+"/threads/"+thread+"/runs", key, "")
	list, _ := runs.([]any)
	if len(list) != 1 {
		t.Fatalf("runs of the thread: %v", runs)
	}
	return field(list[0], "run_id").(string)
}

// traceAt waits for the root run of a run's trace at base's tracing API, read with key.
func traceAt(t *testing.T, base, key, runID string) any {
	t.Helper()
	var root any
	waitFor(t, "the run's trace at the control plane's tracing API", func() bool {
		var code int
		code, root = send(t, "GET", base+"/tracing/runs/"+runID, key, "")
		return code == 200
	})
	return root
}

// processEnv is the environment of the revision process serving from a data folder under dir;
// nil where /proc cannot tell.
func processEnv(t *testing.T, dir string) []string {
	t.Helper()
	infos, _ := filepath.Glob(filepath.Join(dir, "*", "data-*", "serve.json"))
	if len(infos) != 1 {
		t.Fatalf("serving processes under %s: %v", dir, infos)
	}
	var info serveInfo
	raw, err := os.ReadFile(infos[0])
	if err != nil || json.Unmarshal(raw, &info) != nil {
		t.Fatalf("%s: %v %s", infos[0], err, raw)
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", info.PID))
	if err != nil {
		t.Logf("the process's environment is not checked: %v", err)
		return nil
	}
	return strings.Split(strings.TrimRight(string(environ), "\x00"), "\x00")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
