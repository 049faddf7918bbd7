package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine/controlplane/seal"
)

// TestSecretsRotateKey: serve makes the key file (0600) on first start; `secrets rotate-key`
// puts a new key in front and keeps the old one, so values sealed before still open and new
// ones are sealed with the new key.
func TestSecretsRotateKey(t *testing.T) {
	t.Setenv(seal.KeyEnv, "")
	data := t.TempDir()
	if _, _, err := run(t, Program{}, "secrets", "rotate-key", "--data", data); err == nil {
		t.Fatal("rotate-key without a key file: no error")
	}
	startServe(t, Program{}, data).stop(t)
	path := filepath.Join(data, seal.KeyFileName)
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("serve's key file: %v, %v", st, err)
	}
	before, err := seal.Load(data, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	old := before.Seal("v1")
	out, _, err := run(t, Program{}, "secrets", "rotate-key", "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	after, err := seal.Load(data, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, after.CurrentID()) || after.CurrentID() == before.CurrentID() {
		t.Errorf("rotate-key said %q; current key %s, was %s", out, after.CurrentID(), before.CurrentID())
	}
	if v, err := after.Open(old); err != nil || v != "v1" {
		t.Errorf("a value of the older key opens as %q, %v", v, err)
	}
	t.Setenv(seal.KeyEnv, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	if _, _, err := run(t, Program{}, "secrets", "rotate-key", "--data", data); err == nil || !strings.Contains(err.Error(), seal.KeyEnv) {
		t.Errorf("rotate-key with the keyring in the environment: %v", err)
	}
}
