package controlplane_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	cp "github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/seal"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections/deployments"
	"github.com/jetgraph/jetgraph/projections/deployments/deploymentstest"
)

// envDeployer is a recorder that keeps the secrets each rollout got, and prints them (as a
// graph dumping its environment would) in pieces.
type envDeployer struct {
	*recorder
	mu  sync.Mutex
	got map[string]string // secret name -> value of the last rollout
}

func (e *envDeployer) Deploy(ctx context.Context, spec cp.DeploySpec, log io.Writer) error {
	e.mu.Lock()
	for _, s := range spec.Secrets {
		e.got[s.Name] = s.Value
		half := len(s.Value) / 2
		fmt.Fprintf(log, "env %s=%s", s.Name, s.Value[:half])
		fmt.Fprintf(log, "%s\n", s.Value[half:])
	}
	e.mu.Unlock()
	return e.recorder.Deploy(ctx, spec, log)
}

func (e *envDeployer) secret(name string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.got[name]
}

// sealedPlane is a control plane whose log store and projection file are in folders the test
// reads, its service and fold sealing with ring (none when nil).
func sealedPlane(t *testing.T, store, dbPath string, ring *seal.Keyring) *plane {
	t.Helper()
	l := eventlogtest.OpenDir(t, store)
	view, proj := deploymentstest.OpenAt(t, l, dbPath, func(v *deployments.View) { v.SealSecrets(ring) })
	svc := cp.NewService(l, proj, view, nil, (&recorder{}).CustomURL)
	svc.SealSecrets(ring)
	ctx := engine.WithTenant(context.Background(), "6f1c6a56-8e0a-4c55-9d9f-7d6c4b0c7a01")
	return &plane{log: l, proj: proj, view: view, svc: svc, ctx: ctx}
}

// filesHolding reports which files under dir (or dir itself, a file) hold s.
func filesHolding(t *testing.T, dir, s string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(s)) {
			found = append(found, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// eventually waits until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 20s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSecretsAtRest creates, patches (a new value, then the mask) and redeploys a deployment
// with a secret, and reads the JetStream store's files and the bbolt file's bytes: the value is
// in neither (its deployment's name, written in the same events, is: the files are read), while
// every rollout got the value in clear and its log shows it masked.
func TestSecretsAtRest(t *testing.T) {
	store, dbDir := t.TempDir(), t.TempDir()
	dbPath := filepath.Join(dbDir, "controlplane.db")
	p := sealedPlane(t, store, dbPath, newKeyring(t))
	dep := &envDeployer{recorder: newRecorder(), got: map[string]string{}}
	p.start(t, cp.Ports{Builder: dep.recorder, Deployer: dep})

	const name, second = "vault-marker-app", "an0ther-s3cret-99"
	d, err := p.svc.CreateDeployment(p.ctx, map[string]any{"name": name, "source": "git_host",
		"source_config": map[string]any{"repo_url": "/repos/app"}, "source_revision_config": map[string]any{"repo_ref": "main"},
		"secrets": []any{map[string]any{"name": "TOKEN", "value": testSecret}}})
	if err != nil {
		t.Fatal(err)
	}
	first := *d.LatestRevisionID
	p.waitRevision(t, d.ID, first, cp.RevisionDeployed)
	if got := dep.secret("TOKEN"); got != testSecret {
		t.Fatalf("the rollout got TOKEN=%q, want the clear value", got)
	}
	// A new value, and a second secret kept through its mask.
	d, err = p.svc.UpdateDeployment(p.ctx, d.ID, map[string]any{"secrets": []any{
		map[string]any{"name": "TOKEN", "value": second}, map[string]any{"name": "OTHER", "value": testSecret + "-b"}}})
	if err != nil {
		t.Fatal(err)
	}
	p.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionDeployed)
	d, err = p.svc.UpdateDeployment(p.ctx, d.ID, map[string]any{"secrets": []any{
		map[string]any{"name": "TOKEN", "value": cp.SecretMask}, map[string]any{"name": "OTHER", "value": cp.SecretMask}}})
	if err != nil {
		t.Fatal(err)
	}
	p.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionDeployed)
	if got := dep.secret("TOKEN"); got != second {
		t.Fatalf("after a PATCH of masks the rollout got TOKEN=%q, want %q", got, second)
	}
	// A rollback opens the first revision's value.
	if _, err := p.svc.Redeploy(p.ctx, d.ID, first); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the redeploy", func() bool { return dep.secret("TOKEN") == testSecret })
	log, err := p.svc.RevisionLog(p.ctx, d.ID, *d.LatestRevisionID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log, "env TOKEN="+cp.SecretMask) {
		t.Errorf("the rollout's output is not in the log, masked:\n%s", log)
	}

	for _, where := range []struct{ what, path string }{{"the JetStream store", store}, {"controlplane.db", dbPath}} {
		eventually(t, where.what+" holds the deployment's events", func() bool { return len(filesHolding(t, where.path, name)) > 0 })
		for _, s := range []string{testSecret, second} {
			if found := filesHolding(t, where.path, s); len(found) > 0 {
				t.Errorf("%s holds the secret %q in clear text: %v", where.what, s, found)
			}
		}
	}
}

// TestClearSecretsOfOlderEvents reads a deployment whose events carry its secret in clear text
// (appended before secrets were sealed): its rollouts get the value, a PATCH of the mask keeps
// it, and the projection file, folded with the keyring, holds it sealed.
func TestClearSecretsOfOlderEvents(t *testing.T) {
	store, dbDir := t.TempDir(), t.TempDir()
	dbPath := filepath.Join(dbDir, "controlplane.db")
	ring := newKeyring(t)
	p := sealedPlane(t, store, dbPath, ring)
	older := cp.NewService(p.log, p.proj, p.view, nil, nil) // no keyring: what an older jetgraph appended
	dep := &envDeployer{recorder: newRecorder(), got: map[string]string{}}
	p.start(t, cp.Ports{Builder: dep.recorder, Deployer: dep})

	d, err := older.CreateDeployment(p.ctx, map[string]any{"name": "legacy-app", "source": "git_host",
		"source_config": map[string]any{"repo_url": "/repos/app"}, "source_revision_config": map[string]any{"repo_ref": "main"},
		"secrets": []any{map[string]any{"name": "TOKEN", "value": testSecret}}})
	if err != nil {
		t.Fatal(err)
	}
	p.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionDeployed)
	if got := dep.secret("TOKEN"); got != testSecret {
		t.Fatalf("the rollout of a clear-text secret got %q", got)
	}
	if len(filesHolding(t, store, testSecret)) == 0 {
		t.Fatal("the older event does not hold the clear value: the test tests nothing")
	}
	d, err = p.svc.UpdateDeployment(p.ctx, d.ID, map[string]any{"secrets": []any{map[string]any{"name": "TOKEN", "value": cp.SecretMask}}})
	if err != nil {
		t.Fatal(err)
	}
	p.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionDeployed)
	if got := dep.secret("TOKEN"); got != testSecret {
		t.Fatalf("after a PATCH of the mask the rollout got %q", got)
	}
	eventually(t, "controlplane.db holds the deployment", func() bool { return len(filesHolding(t, dbPath, "legacy-app")) > 0 })
	if found := filesHolding(t, dbPath, testSecret); len(found) > 0 {
		t.Errorf("controlplane.db holds the older event's secret in clear text")
	}
}

// TestSecretOfAMissingKey: a revision whose secret was sealed with a key the keyring no longer
// has fails its rollout with the reason naming the key, never runs with the sealed text.
func TestSecretOfAMissingKey(t *testing.T) {
	p := openPlane(t)
	first := newKeyring(t)
	p.svc.SealSecrets(first)
	dep := &envDeployer{recorder: newRecorder(), got: map[string]string{}}
	stop := p.start(t, cp.Ports{Builder: dep.recorder, Deployer: dep})
	d := p.create(t, "lost-key", "main")
	p.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionDeployed)
	stop()
	p.svc.SealSecrets(newKeyring(t)) // restarted with the key file replaced, the older key not kept
	p.start(t, cp.Ports{Builder: dep.recorder, Deployer: dep})
	if _, err := p.svc.Redeploy(p.ctx, d.ID, *d.LatestRevisionID); err != nil {
		t.Fatal(err)
	}
	var r cp.Revision
	eventually(t, "the redeploy's failure", func() bool {
		r, _ = p.svc.GetRevision(p.ctx, d.ID, *d.LatestRevisionID)
		return r.Status == cp.RevisionDeployFailed
	})
	if r.FailureReason == nil || !strings.Contains(*r.FailureReason, "key "+first.CurrentID()+", which is not in the keyring") {
		t.Errorf("failure_reason %v", r.FailureReason)
	}
	if got := dep.secret("TOKEN"); got != "s3cret" {
		t.Errorf("a rollout got TOKEN=%q", got)
	}
}
