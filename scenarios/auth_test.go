package scenarios

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/jetgraph/jetgraph/httpapi/authn/authntest"
)

// TestAuthSDKs serves a project of a hosted Python graph and a Go graph with API keys and JWTs
// (from a JWKS this test serves) and drives it with the official Python and JS SDKs passing the
// key (api_key / apiKey) and the token (headers / defaultHeaders): no credential is a 401, each
// graph sees its user in its config, and no key or token is in the server's log.
func TestAuthSDKs(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	const admin = "scenario-admin-key-0123456789abcdef"
	t.Setenv("JETGRAPH_ADMIN_KEY", admin) // the server's admin key, inherited by its process
	for _, v := range []string{"LANGGRAPH_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"} {
		t.Setenv(v, "") // the SDKs would send them
	}
	is := authntest.NewIssuer(t)
	is.Add(t, "k1", false, true)
	token := is.Sign(t, "k1", is.Claims("ada", jwt.MapClaims{"name": "Ada L.", "email": "ada@example.test", "permissions": []any{"threads:write"}}))
	expired := is.Sign(t, "k1", is.Claims("ada", jwt.MapClaims{"exp": time.Now().Add(-time.Hour).Unix()}))

	userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	srv := startServerArgs(t, t.TempDir(), "--config", filepath.Join(filepath.Dir(hostedPythonConfig), "auth.json"), "--python", userPython,
		"--auth", "api-key,jwt", "--auth-jwks-url", is.URL, "--auth-jwt-issuer", is.Name, "--auth-jwt-audience", is.Audience)
	env := []string{"AUTH_KEY=" + admin, "AUTH_TOKEN=" + token, "AUTH_EXPIRED=" + expired}
	if got := lastLine(runPythonEnv(t, srv, env, "auth_sdk.py")); got != "ok" {
		t.Fatalf("auth_sdk.py printed %q, want ok", got)
	}
	if got := lastLine(runClient(t, append(env, "JETGRAPH_URL="+srv.URL), "node", "auth.mjs")); got != "ok" {
		t.Fatalf("auth.mjs printed %q, want ok", got)
	}
	logs := srv.logs.String()
	for _, secret := range []string{admin, token, expired} {
		if strings.Contains(logs, secret) {
			t.Errorf("a credential is in the server's log: %.12s...", secret)
		}
	}
	if !strings.Contains(logs, "user=ada") || !strings.Contains(logs, "status=401") {
		t.Errorf("the access log shows no authenticated user or no 401")
	}
}

// TestReadmeAuthSteps runs the README's shell steps of the API key and HS256 ways as they are
// written, with the binary, a data folder and a free address in place of jetgraph serve's
// defaults: the first answers 401 without the key and the search with it; the second answers the
// search to the token the steps sign with openssl.
func TestReadmeAuthSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl is not installed")
	}
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	bin := buildBinary(t)
	for _, c := range []struct {
		name  string
		serve string   // the block's serve line, which finds it
		want  []string // in its output, in order
		venv  bool     // run with the hosted Python project's virtual environment active
	}{
		{"api-key", "jetgraph serve --auth api-key &", []string{`{"detail":"Missing API key`, "[]"}, false},
		{"hs256", "jetgraph serve --auth jwt &", []string{"[]"}, false},
		{"handler", "jetgraph serve --config langgraph.json &", []string{`{"detail":"Unknown or missing token"}`, "[]"}, true},
		{"typescript handler", "jetgraph serve --config ./langgraph.json &", []string{`{"detail":"Unknown or missing token"}`, `"owner":"ada"`, `"owner":"ada"`}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var block string
			for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(raw), -1) {
				if strings.Contains(m[1], c.serve+"\n") {
					block = m[1]
				}
			}
			if block == "" {
				t.Fatalf("the README has no block with %q", c.serve)
			}
			addr := freeAddr(t)
			serve := fmt.Sprintf("'%s' serve --data '%s' --addr %s", bin, t.TempDir(), addr)
			script := strings.ReplaceAll(block, "localhost:8123", addr)
			script = strings.Replace(script, c.serve, strings.Replace(c.serve, "jetgraph serve", serve, 1)+
				"\nSERVER=$!\ntrap 'kill $SERVER; wait $SERVER' EXIT\nfor i in $(seq 300); do curl -sf "+addr+"/ok >/dev/null && break; sleep 0.1; done", 1)
			env := []string{"JETGRAPH_ADMIN_KEY=", "JETGRAPH_AUTH_JWT_SECRET="}
			if c.venv {
				python := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
				env = append(env, "VIRTUAL_ENV="+filepath.Dir(filepath.Dir(python)))
			}
			script = "cd '" + t.TempDir() + "'\n" + script // the steps write their files in the folder they run in
			out := runClient(t, env, "bash", "-euc", script)
			rest := out
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("the steps printed no %q after the earlier ones:\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}
