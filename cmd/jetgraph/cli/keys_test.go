package cli

import (
	"strings"
	"testing"
	"time"
)

// TestKeysCommandsServerRunningOrStopped runs `jetgraph keys create/list/revoke --data D` with
// the server of D running (through its embedded NATS) and stopped (the store itself): a key
// made works, the list shows it (never the key), a revoked key is refused.
func TestKeysCommandsServerRunningOrStopped(t *testing.T) {
	const admin = "keys-admin-key-0123456789abcdef"
	t.Setenv(AdminKeyEnv, admin)
	for _, c := range []struct {
		name    string
		running bool
		flags   []string
	}{
		{"server running", true, nil},
		{"server stopped", false, nil},
		// The commands are admitted by a listener that admits only processes waiting for
		// its sync rounds.
		{"server running, --sync always", true, []string{"--sync", "always"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := t.TempDir()
			s := startServe(t, Program{}, data, append([]string{"--trace-retention", "48h"}, c.flags...)...)
			if !c.running {
				s.stop(t)
			}
			// status answers GET /v2/deployments with key, from the running server (or one
			// started for it).
			status := func(key string) int {
				t.Helper()
				srv := s
				if !c.running {
					srv = startServe(t, Program{}, data)
					defer srv.stop(t)
				}
				code, _ := call(t, "GET", srv.url+"/v2/deployments", key, "")
				return code
			}
			keys := func(args ...string) string {
				t.Helper()
				out, stderr, err := run(t, Program{}, append(append([]string{"keys"}, args...), "--data", data)...)
				if err != nil {
					t.Fatalf("keys %s: %v\n%s", strings.Join(args, " "), err, stderr)
				}
				return out
			}

			acme := keyPattern.FindString(keys("create", "--tenant", "acme"))
			if acme == "" {
				t.Fatal("keys create printed no key")
			}
			if code := status(acme); code != 200 {
				t.Errorf("the new key: %d, want 200", code)
			}
			var id string
			out := keys("list")
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, " acme ") {
					id = strings.Fields(line)[0]
				}
			}
			if id == "" || strings.Contains(out, acme) {
				t.Fatalf("keys list (acme's, never a whole key):\n%s", out)
			}
			keys("revoke", id)
			// The command appends the revocation to the log; a running server refuses the key
			// once its projection has folded it (CI once asked a few milliseconds before).
			code := status(acme)
			for deadline := time.Now().Add(10 * time.Second); code != 401 && c.running && time.Now().Before(deadline); code = status(acme) {
				time.Sleep(20 * time.Millisecond)
			}
			if code != 401 {
				t.Errorf("the revoked key: %d, want 401", code)
			}
			if code := status(admin); code != 200 {
				t.Errorf("the admin key: %d, want 200", code)
			}
		})
	}
}

// TestKeysCommandsServerNotListening checks the error when the server holding the data folder
// does not listen for NATS clients (no control plane, no --nats-listen).
func TestKeysCommandsServerNotListening(t *testing.T) {
	data := t.TempDir()
	startServe(t, Program{}, data, "--no-control-plane")
	_, _, err := run(t, Program{}, "keys", "list", "--data", data)
	if err == nil || !strings.Contains(err.Error(), "--nats-listen") {
		t.Errorf("err = %v, want one naming --nats-listen", err)
	}
}
