package cli

import (
	"regexp"
	"strings"
	"testing"
)

// keyPattern finds a key jetgraph printed.
var keyPattern = regexp.MustCompile(`jgk_[A-Za-z0-9_-]{43}`)

// call sends a control-plane request with key and returns the status and the decoded body
// (an object; nil for any other answer).
func call(t *testing.T, method, url, key, body string) (int, map[string]any) {
	t.Helper()
	code, v := send(t, method, url, key, body)
	m, _ := v.(map[string]any)
	return code, m
}

func TestAdminKeyAndKeysCommands(t *testing.T) {
	data := t.TempDir()
	s := startServe(t, Program{}, data)
	admin := keyPattern.FindString(s.logs.String())
	if admin == "" {
		t.Fatalf("no admin key printed on first start:\n%s", s.logs)
	}
	if code, _ := call(t, "GET", s.url+"/v2/deployments", admin, ""); code != 200 {
		t.Fatalf("the admin key: %d", code)
	}
	s.stop(t)
	if n := strings.Count(s.logs.String(), admin); n != 1 {
		t.Errorf("the admin key appears %d times in the output, want once", n)
	}

	out, _, err := run(t, Program{}, "keys", "create", "--tenant", "acme", "--data", data)
	acme := keyPattern.FindString(out)
	if err != nil || acme == "" {
		t.Fatalf("keys create: %v\n%s", err, out)
	}
	out, _, err = run(t, Program{}, "keys", "list", "--data", data)
	if err != nil || !strings.Contains(out, "acme") || strings.Contains(out, acme) || strings.Contains(out, admin) {
		t.Fatalf("keys list (never a whole key): %v\n%s", err, out)
	}

	s = startServe(t, Program{}, data)
	if keyPattern.MatchString(s.logs.String()) {
		t.Errorf("a second start printed a key:\n%s", s.logs)
	}
	code, d := call(t, "POST", s.url+"/v2/deployments", acme, `{"name": "app", "source": "git_host",
		"source_config": {"repo_url": "/nowhere"}, "source_revision_config": {"repo_ref": "main"},
		"secrets": [{"name": "TOKEN", "value": "tok-secret-value"}]}`)
	if code != 201 {
		t.Fatalf("create with the tenant's key: %d %v", code, d)
	}
	id, _ := d["id"].(string)
	t.Setenv(APIKeyEnv, acme)
	out, _, err = run(t, Program{}, "events", "deployment", id, "--data", data)
	if err != nil || !strings.Contains(out, `"deployment_created"`) || strings.Contains(out, "tok-secret-value") {
		t.Errorf("events deployment from the server: %v\n%s", err, out)
	}
	s.stop(t)
	if strings.Contains(s.logs.String(), acme) || strings.Contains(s.logs.String(), "tok-secret-value") {
		t.Errorf("a key or a secret reached the logs:\n%s", s.logs)
	}
	out, _, err = run(t, Program{}, "events", "deployment", id, "--data", data)
	if err != nil || !strings.Contains(out, `"revision_created"`) || strings.Contains(out, "tok-secret-value") {
		t.Errorf("events deployment from the log: %v\n%s", err, out)
	}

	var keyID string
	out, _, _ = run(t, Program{}, "keys", "list", "--data", data)
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, " acme ") {
			keyID = strings.Fields(line)[0]
		}
	}
	if _, _, err := run(t, Program{}, "keys", "revoke", keyID, "--data", data); err != nil {
		t.Fatal(err)
	}
	s = startServe(t, Program{}, data)
	if code, _ := call(t, "GET", s.url+"/v2/deployments", acme, ""); code != 401 {
		t.Errorf("a revoked key: %d, want 401", code)
	}
}

func TestAdminKeyFromTheEnvironment(t *testing.T) {
	const key = "automation-admin-key-0123456789"
	t.Setenv(AdminKeyEnv, key)
	s := startServe(t, Program{}, t.TempDir())
	if keyPattern.MatchString(s.logs.String()) || strings.Contains(s.logs.String(), key) {
		t.Errorf("a key was printed:\n%s", s.logs)
	}
	if code, _ := call(t, "GET", s.url+"/v2/deployments", key, ""); code != 200 {
		t.Errorf("the key of %s: %d", AdminKeyEnv, code)
	}
}

// TestServePublicURL checks --public-url: custom_url is made from it, and from the address
// served on without it, for a deployment created before as well (nothing of it is stored).
func TestServePublicURL(t *testing.T) {
	const admin = "public-url-admin-key-0123456789"
	t.Setenv(AdminKeyEnv, admin)
	data := t.TempDir()
	s := startServe(t, Program{}, data, "--public-url", "https://agents.example.com/jg/")
	code, d := call(t, "POST", s.url+"/v2/deployments", admin, `{"name": "app", "source": "git_host",
		"source_config": {"repo_url": "/nowhere"}, "source_revision_config": {"repo_ref": "main"}, "secrets": []}`)
	if code != 201 {
		t.Fatalf("create: %d %v", code, d)
	}
	id := d["id"].(string)
	customURL := func(s *serving) string {
		_, d := call(t, "GET", s.url+"/v2/deployments/"+id, admin, "")
		u, _ := d["source_config"].(map[string]any)["custom_url"].(string)
		return u
	}
	if got, want := customURL(s), "https://agents.example.com/jg/deployments/"+id; got != want {
		t.Errorf("with --public-url: custom_url %s, want %s", got, want)
	}
	s.stop(t)

	s = startServe(t, Program{}, data)
	if got, want := customURL(s), s.url+"/deployments/"+id; got != want {
		t.Errorf("restarted without --public-url: custom_url %s, want %s", got, want)
	}
}

func TestParsePublicURL(t *testing.T) {
	for _, c := range []struct{ in, want, err string }{
		{"", "", ""},
		{"https://agents.example.com", "https://agents.example.com", ""},
		{"http://10.0.0.5:8080/jg/", "http://10.0.0.5:8080/jg", ""},
		{"agents.example.com", "", "http:// or https://"},
		{"ftp://agents.example.com", "", "http:// or https://"},
		{"https://", "", "no host"},
		{"https://a.example.com/?x=1", "", "no query"},
		{"https://user:pw@a.example.com", "", "credentials"},
	} {
		got, err := parsePublicURL(c.in)
		if got != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("parsePublicURL(%q) = %q, %v; want %q, an error with %q", c.in, got, err, c.want, c.err)
		}
	}
}
