package controlplane_test

import (
	"strings"
	"testing"
	"time"

	cp "github.com/jetgraph/jetgraph/engine/controlplane"
)

// waitServing waits until every recorder runs revision want of the deployment ("" nothing).
func waitServing(t *testing.T, deployment, want string, recs ...*recorder) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		all := true
		for _, r := range recs {
			if r.Serving()[deployment] != want {
				all = false
			}
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			for i, r := range recs {
				t.Errorf("process %d runs %q", i, r.Serving()[deployment])
			}
			t.Fatalf("deployment %s: not every process runs %q", deployment, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEveryProcessRunsTheActiveRevision runs two control planes' pipelines on one log, as two
// processes of a cluster: whichever rolls a revision out, both run it once it is DEPLOYED (a
// load balancer may send the deployment's requests to either), after a patch and after a
// rollback too; a process started later runs the active revisions at once; a deleted
// deployment runs nowhere.
func TestEveryProcessRunsTheActiveRevision(t *testing.T) {
	p := openPlane(t)
	a, b := newRecorder(), newRecorder()
	p.start(t, cp.Ports{Builder: a, Deployer: a})
	p.start(t, cp.Ports{Builder: b, Deployer: b})

	d := p.create(t, "app", "main")
	r1 := p.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionDeployed)
	waitServing(t, d.ID, r1.ID, a, b)

	r2 := p.waitRevision(t, d.ID, *p.patchRef(t, d.ID, "dev").LatestRevisionID, cp.RevisionDeployed)
	waitServing(t, d.ID, r2.ID, a, b)

	if _, err := p.svc.Redeploy(p.ctx, d.ID, r1.ID); err != nil {
		t.Fatal(err)
	}
	waitServing(t, d.ID, r1.ID, a, b)
	if got, _ := p.svc.GetDeployment(p.ctx, d.ID); *got.ActiveRevisionID != r1.ID {
		t.Fatalf("active %s after the rollback, want %s", *got.ActiveRevisionID, r1.ID)
	}
	// A follower's switch is not a rollout: the first revision's log has its two rollouts
	// (create, rollback), not the other process's switches.
	if text, err := p.svc.RevisionLog(p.ctx, d.ID, r1.ID); strings.Count(text, "switched traffic") != 2 {
		t.Errorf("the first revision's log (%v):\n%s", err, text)
	}

	c := newRecorder() // a process that starts now
	p.start(t, cp.Ports{Builder: c, Deployer: c})
	waitServing(t, d.ID, r1.ID, a, b, c)

	if err := p.svc.DeleteDeployment(p.ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	waitServing(t, d.ID, "", a, b, c)
	a.mu.Lock()
	b.mu.Lock()
	c.mu.Lock()
	removed := len(a.removed) + len(b.removed) + len(c.removed)
	c.mu.Unlock()
	b.mu.Unlock()
	a.mu.Unlock()
	if removed != 1 {
		t.Errorf("the deployment's data removed %d times, want once (by the pipeline's worker)", removed)
	}
}
