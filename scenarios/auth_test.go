package scenarios

import (
	"path/filepath"
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
