package cli

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

// plantedSecret matches every secret TestNoRouteShowsPlantedSecrets plants, and nothing else a
// server says.
var plantedSecret = regexp.MustCompile(`PLANTED-[a-z0-9-]+-x`)

// TestNoRouteShowsPlantedSecrets plants secrets wherever clients configure them (an assistant's
// config and context and a later version's, a run's config, context and webhook, which the
// thread keeps as its config, a cron's payload and its patch, a deployment's secrets) and reads
// every GET route of the OpenAPI document, and the POST routes that list stored objects, from
// the whole server `jetgraph serve` runs: none shows a planted value. Every route must answer as
// the table says, so a route added to the document is read here too.
func TestNoRouteShowsPlantedSecrets(t *testing.T) {
	if testing.Short() {
		t.Skip("serves the whole platform")
	}
	const admin = "planted-secrets-admin-key-0123456789"
	t.Setenv(AdminKeyEnv, admin)
	data := t.TempDir()
	s := startServe(t, Program{}, data)
	must := func(want int, method, path, body string) any {
		t.Helper()
		code, v := send(t, method, s.url+path, keyFor(path, admin), body)
		if code != want {
			t.Fatalf("%s %s: %d %v, want %d", method, path, code, v, want)
		}
		return v
	}
	str := func(v any, path ...string) string {
		t.Helper()
		x, ok := field(v, path...).(string)
		if !ok {
			t.Fatalf("no %v in %v", path, v)
		}
		return x
	}

	assistant := str(must(200, "POST", "/assistants", `{"graph_id": "echo", "name": "planted",
		"config": {"configurable": {"openai_api_key": "PLANTED-assistant-config-x", "model": "m"}},
		"context": {"access_token": "PLANTED-assistant-context-x"}}`), "assistant_id")
	must(200, "PATCH", "/assistants/"+assistant, `{"config": {"configurable": {"openai_api_key": "PLANTED-version-config-x"}},
		"context": {"client_secret": "PLANTED-version-context-x"}}`)
	thread := str(must(200, "POST", "/threads", `{"metadata": {"user": "planted"}}`), "thread_id")
	must(200, "POST", "/threads/"+thread+"/runs/wait", `{"assistant_id": "`+assistant+`", "input": {"messages": "hi"},
		"webhook": "https://hook:PLANTED-webhook-password-x@hooks.example.invalid/h?token=PLANTED-webhook-token-x",
		"config": {"configurable": {"db_password": "PLANTED-run-config-x"}},
		"context": {"api_key": "PLANTED-run-context-x"}}`)
	runID := str(must(200, "GET", "/threads/"+thread+"/runs", "").([]any)[0], "run_id")
	checkpoint := str(must(200, "GET", "/threads/"+thread+"/state", ""), "checkpoint", "checkpoint_id")
	cron := str(must(200, "POST", "/threads/"+thread+"/runs/crons", `{"assistant_id": "`+assistant+`", "schedule": "0 0 1 1 *",
		"config": {"configurable": {"private_key": "PLANTED-cron-config-x"}}, "context": {"password": "PLANTED-cron-context-x"},
		"webhook": "https://hooks.example.invalid/h?api_key=PLANTED-cron-webhook-x"}`), "cron_id")
	must(200, "PATCH", "/runs/crons/"+cron, `{"context": {"password": "PLANTED-cron-patched-x"}}`)
	deployment := str(must(201, "POST", "/v2/deployments", `{"name": "planted", "source": "git_host",
		"source_config": {"repo_url": "/nowhere"}, "source_revision_config": {"repo_ref": "main"},
		"secrets": [{"name": "OPENAI_API_KEY", "value": "PLANTED-deployment-secret-x"}]}`), "id")
	revisions := must(200, "GET", "/v2/deployments/"+deployment+"/revisions", "")
	revision := str(field(revisions, "resources").([]any)[0], "id")
	var session, traceRun, trace string
	for deadline := time.Now().Add(10 * time.Second); trace == ""; time.Sleep(50 * time.Millisecond) {
		sessions, _ := must(200, "GET", "/tracing/sessions", "").([]any)
		for _, sess := range sessions { // the run's trace is written as the run ends
			q := must(200, "POST", "/tracing/runs/query", `{"session": ["`+str(sess, "id")+`"]}`)
			if list, _ := field(q, "runs").([]any); len(list) > 0 {
				session, traceRun, trace = str(sess, "id"), str(list[0], "id"), str(list[0], "trace_id")
			}
		}
		if trace == "" && time.Now().After(deadline) {
			t.Fatalf("the run left no trace: sessions %v", sessions)
		}
	}
	must(204, "PUT", "/store/items", `{"namespace": ["planted"], "key": "k", "value": {"note": "no secret"}}`)
	const none = "00000000-0000-4000-8000-000000000000" // for what nothing here makes
	params := map[string]string{
		"thread_id": thread, "run_id": runID, "assistant_id": assistant, "checkpoint_id": checkpoint, "trace_id": trace,
		"session_id": session, "deployment_id": deployment, "revision_id": revision, "listener_id": none,
		"feedback_id": none, "token": none, "namespace": "none", "file": "swagger-ui.css",
		"name": "none",
	}
	// notOK are the GET routes whose answer here is not a 200, with why.
	notOK := map[string]int{
		"/tracing/feedback/{feedback_id}":           404, // no feedback given
		"/tracing/feedback/tokens/{token}":          404, // no token made
		"/v2/listeners/{listener_id}":               404, // no listener made
		"/tracing/runs/{run_id}/attachments/{name}": 404, // no attachment sent
		"/mcp":                               405, // streamable HTTP, stateless: no GET stream
		"/threads/{thread_id}/stream/events": 426, // a WebSocket upgrade
	}
	// queries are what the GET routes that need a query are read with.
	queries := map[string]string{
		"/store/items":                               "?namespace=planted&key=k",
		"/tracing/api/v2/runs/{run_id}":              "?project_id=" + session,
		"/tracing/api/v2/threads/{thread_id}/traces": "?project_id=" + session,
		"/tracing/api/v2/traces/{trace_id}/runs":     "?project_id=" + session,
	}

	doc := must(200, "GET", "/openapi.json", "")
	var paths []string
	for p, ops := range field(doc, "paths").(map[string]any) {
		if _, ok := ops.(map[string]any)["get"]; ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	type read struct{ method, path, body string }
	var reads []read
	for _, p := range paths {
		if p == "/events/{kind}/{id}" { // one of each kind planted on
			for _, kv := range [][2]string{{"thread", thread}, {"assistant", assistant}, {"cron", cron}} {
				reads = append(reads, read{"GET", "/events/" + kv[0] + "/" + kv[1], ""})
			}
			continue
		}
		path := regexp.MustCompile(`\{[a-z_]+\}`).ReplaceAllStringFunc(p, func(name string) string {
			name = strings.Trim(name, "{}")
			v, ok := params[name]
			if strings.HasPrefix(p, "/tracing/") && name == "run_id" {
				v = traceRun // the trace's runs have ids of their own
			}
			if !ok {
				t.Fatalf("%s: nothing here for %s: add it to params", p, name)
			}
			return v
		})
		reads = append(reads, read{"GET", path + queries[p], ""})
	}
	reads = append(reads, // the routes that list stored objects by POST
		read{"POST", "/threads/search", `{}`},
		read{"POST", "/threads/" + thread + "/history", `{}`},
		read{"POST", "/assistants/search", `{}`},
		read{"POST", "/assistants/" + assistant + "/versions", `{}`},
		read{"POST", "/runs/crons/search", `{}`},
		read{"POST", "/tracing/runs/query", `{"session": ["` + session + `"]}`},
		read{"POST", "/mcp", `{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}`},
		read{"POST", "/a2a/" + assistant, `{"jsonrpc": "2.0", "id": 1, "method": "tasks/list", "params": {}}`},
	)
	if len(reads) < 50 {
		t.Fatalf("only %d routes read: the document lost its paths?", len(reads))
	}
	for _, r := range reads {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			code, body := readRoute(t, r.method, s.url+r.path, keyFor(r.path, admin), r.body)
			want := 200
			for tmpl, c := range notOK {
				if r.method == "GET" && routeMatches(tmpl, r.path) {
					want = c
				}
			}
			if code != want {
				t.Errorf("%d, want %d: %.300s", code, want, body)
			}
			if found := plantedSecret.FindAllString(body, -1); len(found) > 0 {
				t.Errorf("shows %v", found)
			}
		})
	}

	// jetgraph events reads the log itself once no server holds the folder: the same masks.
	s.stop(t)
	for _, kv := range [][2]string{{"thread", thread}, {"assistant", assistant}, {"cron", cron}} {
		out, stderr, err := run(t, Program{}, "events", kv[0], kv[1], "--data", data)
		if err != nil || !strings.Contains(out, engine.MaskedValue) {
			t.Errorf("jetgraph events %s: %v %s\n%s", kv[0], err, stderr, out)
		}
		if found := plantedSecret.FindAllString(out, -1); len(found) > 0 {
			t.Errorf("jetgraph events %s shows %v", kv[0], found)
		}
	}
}

// keyFor is the key a request to path is sent with: the control plane's API needs one; elsewhere
// none is checked but on /tracing, where a key acts for its own tenant, not for the default
// tenant whose runs are traced.
func keyFor(path, admin string) string {
	if strings.HasPrefix(path, "/v2/") || strings.HasPrefix(path, "/v1/") {
		return admin
	}
	return ""
}

// routeMatches reports whether path is an instance of the OpenAPI path template tmpl.
func routeMatches(tmpl, path string) bool {
	pattern := regexp.MustCompile(`\\\{[a-z_]+\\\}`).ReplaceAllString(regexp.QuoteMeta(tmpl), `[^/]+`)
	path, _, _ = strings.Cut(path, "?")
	return regexp.MustCompile("^" + pattern + "$").MatchString(path)
}

// readRoute sends a request and returns the status and what the body said within a few
// seconds: streams that follow what comes next (a thread's stream) are read until then.
func readRoute(t *testing.T, method, url, key, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read: %v", err)
	}
	return resp.StatusCode, string(raw)
}
