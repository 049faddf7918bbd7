package scenarios

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuthHandler serves a project whose langgraph.json names a langgraph_sdk.Auth (auth.path):
// its @auth.authenticate handler decides every API request through the official Python SDK (a
// token's user reaches a hosted graph's configurable, 401 and 403 with the handler's message, a
// failing handler a 500 that tells nothing, a token's user cached as auth.cache says), and a project whose auth.path is no Auth (Python or TypeScript) fails config check (and serve).
func TestAuthHandler(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	conf := filepath.Join(filepath.Dir(hostedPythonConfig), "auth_handler.json")
	srv := startServerArgs(t, t.TempDir(), "--config", conf, "--python", userPython)
	if got := lastLine(runPythonEnv(t, srv, nil, "auth_handler_sdk.py")); got != "ok" {
		t.Fatalf("auth_handler_sdk.py printed %q, want ok", got)
	}
	logs := srv.logs.String()
	if strings.Contains(logs, "not applied yet") {
		t.Errorf("the @auth.on handler is warned of as not applied")
	}
	// ada made two requests and bob one: auth.cache (keyed by authorization) asked the handler once each.
	if n, m := strings.Count(logs, "auth_handler: authenticated ada"), strings.Count(logs, "auth_handler: authenticated bob"); n != 1 || m != 1 {
		t.Errorf("the handler authenticated ada %d times and bob %d, want once each (auth.cache)", n, m)
	}
	if !strings.Contains(logs, "secret-internal-detail") {
		t.Errorf("the handler's failure is not in the server's log")
	}

	bin := buildBinary(t)
	out, err := exec.Command(bin, "serve", "--config", conf, "--python", userPython, "--auth", "jwt", "--data", t.TempDir(), "--addr", freeAddr(t)).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "cannot go with --auth jwt") {
		t.Errorf("serve with auth.path and --auth: %v\n%s", err, out)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "auth.py"), []byte("auth = 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "langgraph.json")
	graphPath, err := filepath.Abs(filepath.Join(filepath.Dir(hostedPythonConfig), "visits", "whoami.py"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"graphs": {"whoami": "`+graphPath+`:graph"}, "auth": {"path": "./auth.py:auth"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "auth.path: the auth handler " + filepath.Join(dir, "auth.py") + ":auth: TypeError: expected a langgraph_sdk.Auth instance, got int"
	out, err = exec.Command(bin, "config", "check", "--config", bad, "--python", userPython).CombinedOutput()
	if err == nil || !strings.Contains(string(out), want) {
		t.Errorf("config check of an auth.path that is no Auth: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "serve", "--config", bad, "--python", userPython, "--data", t.TempDir(), "--addr", freeAddr(t)).CombinedOutput()
	if err == nil || !strings.Contains(string(out), want) {
		t.Errorf("serve of an auth.path that is no Auth: %v\n%s", err, out)
	}

	// The same of a TypeScript auth.path, in a project whose packages are the TypeScript
	// scenario project's (a local dependency with node_modules).
	ensureTypeScriptProject(t)
	tsProject, err := filepath.Abs(filepath.Dir(hostedTypeScriptConfig))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "auth.ts"), []byte("export const auth: number = 42;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"dependencies": ["`+tsProject+`"], "graphs": {"visits": "`+filepath.Join(tsProject, "src", "visits.ts")+`:graph"}, "auth": {"path": "./auth.ts:auth"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	want = "auth.path: the auth handler " + filepath.Join(dir, "auth.ts") + ":auth: TypeError: expected an Auth of @langchain/langgraph-sdk/auth, got number"
	out, err = exec.Command(bin, "config", "check", "--config", bad).CombinedOutput()
	if err == nil || !strings.Contains(string(out), want) {
		t.Errorf("config check of a TypeScript auth.path that is no Auth: %v\n%s", err, out)
	}
}

// TestAuthOwners serves each hosted scenario project with an Auth where each user owns what they
// create (owners_auth.py in the Python project, owners_auth.ts in the TypeScript one) and drives
// it with two users through the official Python SDK (owners_auth_sdk.py) and the official JS SDK
// (owners_auth.mjs), each on a fresh server: each user sees only their own threads, runs, crons
// and store namespace (another's ids answer 404), a forged owner is overwritten, no token is the
// handler's 401, a rule's 403 carries its message, a guest (is_authenticated false) reaches the
// rules as one. Both scripts pass unchanged against the Python reference dev server serving
// owners_auth.py (langgraph-api 0.16.7).
func TestAuthOwners(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	for _, c := range []struct {
		lang, graph, input string
	}{
		{"python", "whoami", `{}`},
		{"typescript", "visits", `{"messages": [{"role": "user", "content": "Ada"}]}`},
	} {
		t.Run(c.lang, func(t *testing.T) {
			var args []string
			if c.lang == "python" {
				args = []string{"--config", filepath.Join(filepath.Dir(hostedPythonConfig), "owners_auth.json"),
					"--python", ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))}
			} else {
				ensureTypeScriptProject(t)
				args = []string{"--config", filepath.Join(filepath.Dir(hostedTypeScriptConfig), "owners_auth.json")}
			}
			env := []string{"GRAPH=" + c.graph, "INPUT=" + c.input}
			t.Run("python-sdk", func(t *testing.T) {
				srv := startServerArgs(t, t.TempDir(), args...)
				if got := lastLine(runPythonEnv(t, srv, env, "owners_auth_sdk.py")); got != "ok" {
					t.Fatalf("owners_auth_sdk.py printed %q, want ok", got)
				}
			})
			t.Run("js-sdk", func(t *testing.T) {
				ensureNodeModules(t)
				srv := startServerArgs(t, t.TempDir(), args...)
				if got := lastLine(runClient(t, append([]string{"JETGRAPH_URL=" + srv.URL}, env...), "node", "owners_auth.mjs")); got != "ok" {
					t.Fatalf("owners_auth.mjs printed %q, want ok", got)
				}
			})
		})
	}
}

// TestAuthHandlerBesideAPIKeys: with auth.allow_langsmith_api_keys, a request without an
// Authorization header is judged by jetgraph's API keys (X-Api-Key), every other by the handler,
// and the handler's @auth.on rules apply to both (the owner it records on a thread); the
// setting needs the control plane's keys.
func TestAuthHandlerBesideAPIKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	const admin = "scenario-beside-admin-key-0123456789"
	t.Setenv("JETGRAPH_ADMIN_KEY", admin)
	userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	visits, err := filepath.Abs(filepath.Join(filepath.Dir(hostedPythonConfig), "visits"))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "langgraph.json")
	project := `{"graphs": {"whoami": "` + filepath.Join(visits, "whoami.py") + `:graph"},
	  "auth": {"path": "` + filepath.Join(visits, "auth_handler.py") + `:auth", "allow_langsmith_api_keys": true}}`
	if err := os.WriteFile(conf, []byte(project), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServerArgs(t, t.TempDir(), "--config", conf, "--python", userPython)
	create := func(hdr ...string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/threads", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var th map[string]any
		_ = json.NewDecoder(res.Body).Decode(&th)
		return res.StatusCode, th
	}
	owner := func(th map[string]any) any { md, _ := th["metadata"].(map[string]any); return md["owner"] }
	if code, th := create("X-Api-Key", admin); code != 200 || owner(th) == nil || owner(th) == "" {
		t.Errorf("the admin key without Authorization: %d %v, want 200 and an owner recorded by the handler's rule", code, th)
	}
	if code, th := create("Authorization", "Bearer tok-ada"); code != 200 || owner(th) != "ada" {
		t.Errorf("ada's token: %d %v, want 200 owned by ada", code, th)
	}
	if code, _ := create("X-Api-Key", "not-a-key"); code != 401 {
		t.Errorf("an unknown key: %d, want 401", code)
	}
	if code, _ := create("Authorization", "Bearer tok-nobody", "X-Api-Key", admin); code != 401 {
		t.Errorf("an unknown token beside a good key: %d, want 401 (the handler judges; no second try)", code)
	}
	if code, _ := create(); code != 401 {
		t.Errorf("no credential: %d, want 401", code)
	}

	out, err := exec.Command(buildBinary(t), "serve", "--config", conf, "--python", userPython, "--no-control-plane",
		"--data", t.TempDir(), "--addr", freeAddr(t)).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "cannot go with --no-control-plane") {
		t.Errorf("serve with allow_langsmith_api_keys and --no-control-plane: %v\n%s", err, out)
	}
}
