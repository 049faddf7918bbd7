package seal_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine/controlplane/seal"
)

func ring(t *testing.T, keys ...string) *seal.Keyring {
	t.Helper()
	raw, err := seal.ParseKeys(strings.Join(keys, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := seal.New(raw...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newKey(t *testing.T) string {
	t.Helper()
	k, err := seal.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpen(t *testing.T) {
	k := ring(t, newKey(t))
	for _, v := range []string{"s3cret", "", "ünïcode ✓", strings.Repeat("x", 10000)} {
		s := k.Seal(v)
		if !seal.Sealed(s) || strings.Contains(s, "s3cret") {
			t.Errorf("Seal(%.20q) = %.60q", v, s)
		}
		if got, err := k.Open(s); err != nil || got != v {
			t.Errorf("Open(Seal(%.20q)) = %.20q, %v", v, got, err)
		}
		if again := k.Seal(s); again != s {
			t.Errorf("sealing a sealed value again changed it")
		}
		if k.Seal(v) != s {
			t.Errorf("sealing %.20q twice gave two texts: the folds would not be deterministic", v)
		}
	}
	if got, err := k.Open("written before sealing"); err != nil || got != "written before sealing" {
		t.Errorf("a clear value opens as %q, %v", got, err)
	}
	other := ring(t, newKey(t))
	if _, err := other.Open(k.Seal("x")); err == nil || !strings.Contains(err.Error(), "not in the keyring") {
		t.Errorf("another keyring opened the value: %v", err)
	}
	// A value of another keyring stays as it is: sealed again, it would open as its sealed text.
	if theirs := k.Seal("x"); other.Seal(theirs) != theirs {
		t.Error("a value of a key the keyring lacks was sealed again")
	}
	s := k.Seal("tampered")
	bad := s[:len(s)-2] + "AA"
	if bad == s {
		bad = s[:len(s)-2] + "BB"
	}
	if _, err := k.Open(bad); err == nil {
		t.Error("a tampered value opened")
	}
}

// TestRotation: after a rotation new values are sealed with the new key; values sealed with the
// older one still open.
func TestRotation(t *testing.T) {
	dir := t.TempDir()
	env := func(string) string { return "" }
	before, err := seal.Load(dir, env)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, seal.KeyFileName))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v, %v: want mode 0600", st, err)
	}
	old := before.Seal("v1")
	id, err := seal.Rotate(dir)
	if err != nil {
		t.Fatal(err)
	}
	after, err := seal.Load(dir, env)
	if err != nil {
		t.Fatal(err)
	}
	if after.CurrentID() != id || id == before.CurrentID() {
		t.Errorf("current key %s, rotated to %s, was %s", after.CurrentID(), id, before.CurrentID())
	}
	if got, err := after.Open(old); err != nil || got != "v1" {
		t.Errorf("a value of the older key opens as %q, %v", got, err)
	}
	if s := after.Seal("v2"); !strings.HasPrefix(s, seal.Prefix+id+":") {
		t.Errorf("a new value is sealed as %s, not with the new key %s", s, id)
	}
	if _, err := before.Open(after.Seal("v2")); err == nil {
		t.Error("the keyring before the rotation opened a value of the new key")
	}
}

func TestLoad(t *testing.T) {
	a, b := newKey(t), newKey(t)
	fromEnv, err := seal.Load(t.TempDir(), func(name string) string {
		if name == seal.KeyEnv {
			return a + "," + b
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if fromEnv.CurrentID() != ring(t, a).CurrentID() {
		t.Error("the environment's first key is not the current one")
	}
	if got, err := fromEnv.Open(ring(t, b).Seal("x")); err != nil || got != "x" {
		t.Errorf("the environment's older key does not open: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, seal.KeyFileName), []byte(a+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := seal.Load(dir, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "0600") {
		t.Errorf("a key file readable by others: %v", err)
	}
	for _, bad := range []string{"not base64!", "c2hvcnQ="} {
		if _, err := seal.Load(t.TempDir(), func(string) string { return bad }); err == nil {
			t.Errorf("keyring %q accepted", bad)
		}
	}
}

// FuzzOpen: no text makes Open panic, and only what Seal made opens.
func FuzzOpen(f *testing.F) {
	k, _ := seal.NewKey()
	raw, _ := seal.ParseKeys(k)
	r, _ := seal.New(raw...)
	f.Add(r.Seal("value"))
	f.Add(seal.Prefix + "abcd:")
	f.Add(seal.Prefix)
	f.Add("clear")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := r.Open(s)
		if err == nil && seal.Sealed(s) && r.Seal(v) != s {
			t.Errorf("%q opened as %q, which seals otherwise", s, v)
		}
	})
}

// FuzzParseKeys: no text makes ParseKeys panic; what it accepts New takes or refuses cleanly.
func FuzzParseKeys(f *testing.F) {
	f.Add("a2V5\n# comment\n\n")
	f.Add("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=,BBBB")
	f.Fuzz(func(t *testing.T, s string) {
		keys, err := seal.ParseKeys(s)
		if err == nil {
			_, _ = seal.New(keys...)
		}
	})
}
