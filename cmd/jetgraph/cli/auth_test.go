package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/httpapi/authn/authntest"
)

// authCall is sendHeaders with the answer's WWW-Authenticate header alone.
func authCall(t *testing.T, method, url string, header map[string]string, body string) (int, string, any) {
	t.Helper()
	code, h, v := sendHeaders(t, method, url, header, body)
	return code, h.Get("WWW-Authenticate"), v
}

func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// TestServeAuth serves with API keys and JWTs (a JWKS the test serves, and an HS256 secret):
// the open routes answer anyone, every runtime route (MCP and the streams included) answers
// 401 with a challenge without a valid credential, the control plane's admin key works on
// /v2 and the runtime alike, a token's user reaches the run's configurable (over a forged
// one) and the Go graph (its store namespace), /openapi.json names the schemes, and no key
// or token is ever in the log.
func TestServeAuth(t *testing.T) {
	const admin = "auth-admin-key-0123456789abcdef"
	t.Setenv(AdminKeyEnv, admin)
	is := authntest.NewIssuer(t)
	is.Add(t, "k1", true, true)
	secret := []byte(strings.Repeat("hs256-shared-secret-", 3))
	secretFile := filepath.Join(t.TempDir(), "jwt.secret")
	if err := os.WriteFile(secretFile, append(secret, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		args  []string
		token func(sub string, extra jwt.MapClaims) string
		key   bool // API keys accepted too
	}{
		{"api-key and JWKS", []string{"--auth", "api-key,jwt", "--auth-jwks-url", is.URL, "--auth-jwt-issuer", is.Name, "--auth-jwt-audience", is.Audience},
			func(sub string, extra jwt.MapClaims) string { return is.Sign(t, "k1", is.Claims(sub, extra)) }, true},
		{"HS256", []string{"--auth", "jwt", "--auth-jwt-secret-file", secretFile},
			func(sub string, extra jwt.MapClaims) string {
				return authntest.SignHS256(t, secret, (&authntest.Issuer{}).Claims(sub, extra))
			}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startServe(t, Program{}, t.TempDir(), append(c.args, "--graphs", "agent_simple")...)
			good := c.token("ada", jwt.MapClaims{"name": "Ada L.", "permissions": []any{"threads:write"}, "email": "ada@example.test"})
			expired := c.token("ada", jwt.MapClaims{"exp": time.Now().Add(-time.Hour).Unix()})

			for _, open := range []string{"/ok", "/info", "/metrics", "/openapi.json", "/docs"} {
				if code, _, v := authCall(t, "GET", s.url+open, nil, ""); code != 200 {
					t.Errorf("GET %s without a credential: %d %v", open, code, v)
				}
			}
			for _, guarded := range []struct{ method, path, body string }{
				{"POST", "/threads/search", `{}`},
				{"POST", "/assistants/search", `{}`},
				{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
				{"POST", "/a2a/agent_simple", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`},
				{"GET", "/threads/00000000-0000-0000-0000-000000000000/stream", ""},
				{"POST", "/runs/stream", `{"assistant_id":"agent_simple"}`},
				{"GET", "/store/items?namespace=ada&key=key_one", ""},
			} {
				code, challenge, v := authCall(t, guarded.method, s.url+guarded.path, nil, guarded.body)
				if code != 401 || challenge != `Bearer realm="jetgraph"` || !strings.Contains(field(v, "detail").(string), "Missing") {
					t.Errorf("%s %s without a credential: %d %q %v", guarded.method, guarded.path, code, challenge, v)
				}
			}
			code, challenge, v := authCall(t, "POST", s.url+"/threads/search", bearer(expired), `{}`)
			if code != 401 || !strings.Contains(challenge, `error="invalid_token"`) || !strings.Contains(field(v, "detail").(string), "expired") {
				t.Errorf("an expired token: %d %q %v", code, challenge, v)
			}
			if code, _, v := authCall(t, "POST", s.url+"/threads/search", bearer(good), `{}`); code != 200 {
				t.Fatalf("a good token: %d %v", code, v)
			}

			// The user reaches the run's configurable over what the body says, and the graph.
			_, _, th := authCall(t, "POST", s.url+"/threads", bearer(good), `{}`)
			tid, _ := field(th, "thread_id").(string)
			body := `{"assistant_id":"agent_simple","input":{"messages":[{"type":"human","content":"hi"}]},` +
				`"config":{"configurable":{"langgraph_auth_user_id":"mallory","x-api-key":"from-body-is-the-client's-own"}}}`
			if code, _, v := authCall(t, "POST", s.url+"/threads/"+tid+"/runs/wait", mergeHeaders(bearer(good), map[string]string{"X-Api-Key": "not-a-key-0123456789"}), body); code != 200 {
				t.Fatalf("run: %d %v", code, v)
			}
			_, _, runs := authCall(t, "GET", s.url+"/threads/"+tid+"/runs", bearer(good), "")
			list, _ := runs.([]any)
			if len(list) != 1 {
				t.Fatalf("runs: %v", runs)
			}
			cf := field(list[0], "kwargs", "config", "configurable")
			if field(cf, "langgraph_auth_user_id") != "ada" || field(cf, "langgraph_auth_user", "identity") != "ada" ||
				field(cf, "langgraph_auth_user", "display_name") != "Ada L." || field(cf, "langgraph_auth_user", "is_authenticated") != true ||
				field(cf, "langgraph_auth_user", "email") != "ada@example.test" {
				t.Errorf("configurable: %v", cf)
			}
			if perms, _ := field(cf, "langgraph_auth_permissions").([]any); len(perms) != 1 || perms[0] != "threads:write" {
				t.Errorf("permissions: %v", field(cf, "langgraph_auth_permissions"))
			}
			// A missing item is a 200 of null: the graph's item names the namespace it used.
			if code, _, v := authCall(t, "GET", s.url+"/store/items?namespace=ada&key=key_one", bearer(good), ""); code != 200 ||
				field(v, "namespace") == nil || field(v, "value", "text") != "hi" {
				t.Errorf("the Go graph did not write in its user's namespace: %d %v", code, v)
			}

			// The document names the schemes of the runtime's operations.
			_, _, doc := authCall(t, "GET", s.url+"/openapi.json", nil, "")
			if field(doc, "components", "securitySchemes", "JWT", "bearerFormat") != "JWT" {
				t.Errorf("no JWT scheme: %v", field(doc, "components", "securitySchemes"))
			}
			sec, _ := field(doc, "paths", "/threads/search", "post", "security").([]any)
			wantSchemes := 1
			if c.key {
				wantSchemes = 3
			}
			if len(sec) != wantSchemes || field(doc, "paths", "/ok", "get", "security") != nil {
				t.Errorf("security of /threads/search: %v; of /ok: %v", sec, field(doc, "paths", "/ok", "get", "security"))
			}

			if c.key {
				for _, h := range []map[string]string{{"X-Api-Key": admin}, bearer(admin)} {
					if code, _, v := authCall(t, "POST", s.url+"/threads/search", h, `{}`); code != 200 {
						t.Errorf("the admin key on the runtime (%v): %d %v", h, code, v)
					}
				}
				if code, _ := call(t, "GET", s.url+"/v2/deployments", admin, ""); code != 200 {
					t.Errorf("the admin key on /v2: %d", code)
				}
				code, challenge, v := authCall(t, "POST", s.url+"/threads/search", map[string]string{"X-Api-Key": "jgk_unknown0123456789"}, `{}`)
				if code != 401 || !strings.Contains(challenge, "invalid_token") || field(v, "detail") != "Invalid API key." {
					t.Errorf("an unknown key: %d %q %v", code, challenge, v)
				}
			}
			s.stop(t)
			logs := s.logs.String()
			for _, secret := range []string{admin, good, expired, string(secret), "not-a-key-0123456789", "jgk_unknown0123456789"} {
				if strings.Contains(logs, secret) {
					t.Errorf("a credential is in the log: %.12s...", secret)
				}
			}
			if !strings.Contains(logs, "user=ada") || !strings.Contains(logs, "the runtime API authenticates every request") {
				t.Errorf("the log names no user or no auth:\n%s", logs)
			}
		})
	}
}

// mergeHeaders is a with b's headers over it.
func mergeHeaders(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// TestServeAuthFlags: auth settings that cannot work are refused at start, naming the flag.
func TestServeAuthFlags(t *testing.T) {
	t.Setenv(JWTSecretEnv, "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--auth", "basic"}, "--auth"},
		{[]string{"--auth", "none,jwt"}, "none goes alone"},
		{[]string{"--auth", "jwt"}, "shared secret (HS256) or a JWKS URL"},
		{[]string{"--auth", "jwt", "--auth-jwks-url", "https://id.example.test/jwks"}, "needs the issuer"},
		{[]string{"--auth-jwks-url", "https://id.example.test/jwks"}, "need --auth jwt"},
		{[]string{"--auth", "api-key", "--no-control-plane"}, "--no-control-plane"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, stderr, err := run(t, Program{}, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, c.args...)...)
			if err == nil || !strings.Contains(err.Error()+stderr, c.want) {
				t.Errorf("err %v, stderr %s; want %q", err, stderr, c.want)
			}
		})
	}
}

// TestWarnIfOpen: no authentication on an address other machines reach is a warning at start;
// on loopback, or with auth, nothing.
func TestWarnIfOpen(t *testing.T) {
	for _, c := range []struct {
		ip   string
		warn bool
	}{{"0.0.0.0", true}, {"192.0.2.7", true}, {"::", true}, {"127.0.0.1", false}, {"::1", false}} {
		logs := &eventlogtest.Buffer{}
		p := Program{Stderr: logs}
		o := &options{prog: p, logFormat: "text", logLevel: "info"}
		logger, err := newLogger(o, logs)
		if err != nil {
			t.Fatal(err)
		}
		warnIfOpen(logger, &net.TCPAddr{IP: net.ParseIP(c.ip), Port: 8123}, nil)
		if got := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "open to anyone"); got != c.warn {
			t.Errorf("%s: warned %v, want %v: %s", c.ip, got, c.warn, logs)
		}
	}
}
