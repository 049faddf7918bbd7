package controlplane_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	cp "github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections/deployments"
	"github.com/jetgraph/jetgraph/projections/deployments/deploymentstest"
)

// recorder is a Builder and Deployer written for the pipeline's state-machine tests: it records
// the calls it gets. A ref named "broken" fails to build; a ref starting with "hold" builds
// only once release is closed (or its ctx ends); an artifact of ref "unhealthy" fails to
// deploy.
type recorder struct {
	mu       sync.Mutex
	builds   []string // revision ids
	deploys  []string // revision ids
	removed  []string // deployment ids
	active   map[string]string
	release  chan struct{}
	building chan string // told the revision id of each build that holds
}

func newRecorder() *recorder {
	return &recorder{active: map[string]string{}, release: make(chan struct{}), building: make(chan string, 16)}
}

func (r *recorder) Build(ctx context.Context, spec cp.BuildSpec, log io.Writer) (cp.Artifact, error) {
	r.mu.Lock()
	r.builds = append(r.builds, spec.RevisionID)
	r.mu.Unlock()
	fmt.Fprintf(log, "cloning %s at %s\n", spec.RepoURL, spec.RepoRef)
	if strings.HasPrefix(spec.RepoRef, "hold") {
		r.building <- spec.RevisionID
		select {
		case <-r.release:
		case <-ctx.Done():
			return cp.Artifact{}, ctx.Err()
		}
	}
	if spec.RepoRef == "broken" {
		fmt.Fprintln(log, "graph.json: graphs: required")
		return cp.Artifact{CommitSHA: "sha-broken"}, errors.New("graph.json is invalid: graphs: required")
	}
	return cp.Artifact{Kind: cp.ArtifactConfig, CommitSHA: "sha-" + spec.RepoRef, Config: []byte(`{"graphs":{}}`)}, nil
}

func (r *recorder) Provision(ctx context.Context, tenant, id string) error { return nil }

func (r *recorder) Deploy(ctx context.Context, spec cp.DeploySpec, log io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deploys = append(r.deploys, spec.RevisionID)
	if spec.Artifact.CommitSHA == "sha-unhealthy" {
		fmt.Fprintln(log, "health check on /ok failed: 503")
		return errors.New("the new process failed its health check")
	}
	fmt.Fprintf(log, "started %s, switched traffic\n", spec.RevisionID)
	r.active[spec.DeploymentID] = spec.RevisionID
	return nil
}

func (r *recorder) Remove(ctx context.Context, tenant, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.removed = append(r.removed, id)
	delete(r.active, id)
	return nil
}

func (r *recorder) Serving() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.active)
}

func (r *recorder) Stop(ctx context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.active, id)
	return nil
}

func (r *recorder) CustomURL(id string) string { return "http://localhost:8123/deployments/" + id }
func (r *recorder) Proxy() http.Handler        { return http.NotFoundHandler() }

func (r *recorder) calls() (builds, deploys []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.builds...), append([]string(nil), r.deploys...)
}

// projector is the control projection's progress, and its change signal the tests wait on.
type projector interface {
	cp.Projector
	Changed() <-chan struct{}
}

// plane is a control plane on a real embedded log and projection.
type plane struct {
	log  *eventlog.Log
	proj projector
	view *deployments.View
	svc  *cp.Service
	ctx  context.Context
}

func openPlane(t *testing.T) *plane {
	t.Helper()
	return openPlaneOn(t, eventlogtest.Open(t))
}

// openPlaneOn is openPlane on l: a process of a control plane whose log several share.
func openPlaneOn(t *testing.T, l *eventlog.Log) *plane {
	t.Helper()
	view, proj := deploymentstest.Open(t, l)
	ctx := engine.WithTenant(context.Background(), "6f1c6a56-8e0a-4c55-9d9f-7d6c4b0c7a01")
	return &plane{log: l, proj: proj, view: view, svc: cp.NewService(l, proj, view, nil, (&recorder{}).CustomURL), ctx: ctx}
}

// start runs a pipeline with ports until the returned stop is called (or the test ends).
func (p *plane) start(t *testing.T, ports cp.Ports) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pipe := cp.NewPipeline(p.log, p.proj, p.view, p.svc, ports, cp.PipelineConfig{AckWait: 2 * time.Second, Workers: 2})
	if err := pipe.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); pipe.Wait() }) }
	t.Cleanup(stop)
	return stop
}

// waitRevision waits until the revision's status is want, and returns it.
func (p *plane) waitRevision(t *testing.T, deployment, revision string, want cp.RevisionStatus) cp.Revision {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		ch := p.proj.Changed()
		r, err := p.svc.GetRevision(p.ctx, deployment, revision)
		if err == nil && r.Status == want {
			return r
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("revision %s: status %s (err %v), want %s; history %+v", revision, r.Status, err, want, r.StatusHistory)
		}
	}
}

func (p *plane) create(t *testing.T, name, ref string) cp.Deployment {
	t.Helper()
	d, err := p.svc.CreateDeployment(p.ctx, map[string]any{"name": name, "source": "git_host",
		"source_config": map[string]any{"repo_url": "/repos/" + name}, "source_revision_config": map[string]any{"repo_ref": ref},
		"secrets": []any{map[string]any{"name": "TOKEN", "value": "s3cret"}}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (p *plane) patchRef(t *testing.T, id, ref string) cp.Deployment {
	t.Helper()
	d, err := p.svc.UpdateDeployment(p.ctx, id, map[string]any{"source_revision_config": map[string]any{"repo_ref": ref}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func statuses(r cp.Revision) string {
	var s []string
	for _, h := range r.StatusHistory {
		s = append(s, string(h.Status))
	}
	return strings.Join(s, ",")
}

func TestPipelineDeploysPatchesAndRollsBack(t *testing.T) {
	p := openPlane(t)
	rec := newRecorder()
	p.start(t, cp.Ports{Builder: rec, Deployer: rec})

	d := p.create(t, "app", "main")
	r1 := p.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionDeployed)
	if got, want := statuses(r1), "CREATING,QUEUED,AWAITING_BUILD,BUILDING,AWAITING_DEPLOY,DEPLOYING,DEPLOYED"; got != want {
		t.Errorf("history %s, want %s", got, want)
	}
	if r1.SourceRevisionConfig.RepoCommitSHA == nil || *r1.SourceRevisionConfig.RepoCommitSHA != "sha-main" {
		t.Errorf("commit sha %v", r1.SourceRevisionConfig.RepoCommitSHA)
	}
	if !strings.Contains(r1.LogTail, "cloning /repos/app at main") || !strings.Contains(r1.LogTail, "switched traffic") {
		t.Errorf("log tail %q", r1.LogTail)
	}
	got, err := p.svc.GetDeployment(p.ctx, d.ID)
	if err != nil || got.Status != cp.DeploymentReady || got.ActiveRevisionID == nil || *got.ActiveRevisionID != r1.ID {
		t.Fatalf("deployment after the first revision: %+v %v", got, err)
	}

	d2 := p.patchRef(t, d.ID, "dev")
	r2 := p.waitRevision(t, d.ID, *d2.LatestRevisionID, cp.RevisionDeployed)
	if got, _ := p.svc.GetDeployment(p.ctx, d.ID); *got.ActiveRevisionID != r2.ID || *got.SourceRevisionConfig.RepoCommitSHA != "sha-dev" {
		t.Errorf("active %s, want %s", *got.ActiveRevisionID, r2.ID)
	}

	if _, err := p.svc.Redeploy(p.ctx, d.ID, r1.ID); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for {
		ch := p.proj.Changed()
		if got, _ := p.svc.GetDeployment(p.ctx, d.ID); *got.ActiveRevisionID == r1.ID {
			break
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatal("redeploy of the first revision: active never moved back")
		}
	}
	builds, deploys := rec.calls()
	if len(builds) != 2 || len(deploys) != 3 || deploys[2] != r1.ID {
		t.Errorf("builds %v, deploys %v: a redeploy deploys again without a rebuild", builds, deploys)
	}
	r1 = p.waitRevision(t, d.ID, r1.ID, cp.RevisionDeployed)
	if h := r1.StatusHistory[len(r1.StatusHistory)-2]; h.Status != cp.RevisionDeploying || h.Note != "redeploy" {
		t.Errorf("redeploy history %+v", r1.StatusHistory)
	}
	revs, next, err := p.svc.ListRevisions(p.ctx, d.ID, nil, 0, 20)
	if err != nil || len(revs) != 2 || revs[0].ID != r2.ID || next != 2 {
		t.Errorf("revisions newest first: %v next %d %v", revs, next, err)
	}
	text, err := p.svc.RevisionLog(p.ctx, d.ID, r1.ID)
	if err != nil || strings.Count(text, "switched traffic") != 2 {
		t.Errorf("log %q %v", text, err)
	}
}

func TestPipelineFailures(t *testing.T) {
	p := openPlane(t)
	rec := newRecorder()
	p.start(t, cp.Ports{Builder: rec, Deployer: rec})

	d := p.create(t, "app", "main")
	r1 := p.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionDeployed)

	broken := p.patchRef(t, d.ID, "broken")
	r := p.waitRevision(t, d.ID, *broken.LatestRevisionID, cp.RevisionBuildFailed)
	if r.FailureReason == nil || !strings.Contains(*r.FailureReason, "graph.json is invalid") || !strings.Contains(r.LogTail, "graphs: required") {
		t.Errorf("build failure: reason %v, log %q", r.FailureReason, r.LogTail)
	}
	unhealthy := p.patchRef(t, d.ID, "unhealthy")
	r = p.waitRevision(t, d.ID, *unhealthy.LatestRevisionID, cp.RevisionDeployFailed)
	if r.FailureReason == nil || !strings.Contains(*r.FailureReason, "health check") {
		t.Errorf("deploy failure: reason %v", r.FailureReason)
	}
	if got, _ := p.svc.GetDeployment(p.ctx, d.ID); *got.ActiveRevisionID != r1.ID {
		t.Errorf("active %s after failures, want the first revision %s", *got.ActiveRevisionID, r1.ID)
	}
	if _, err := p.svc.Redeploy(p.ctx, d.ID, *broken.LatestRevisionID); !engine.Is(engine.BadRequest, err) {
		t.Errorf("redeploy of a revision never built: %v, want a BadRequest", err)
	}

	// Without a builder, a revision fails with a reason that says so.
	p2 := openPlane(t)
	p2.start(t, cp.Ports{Deployer: rec})
	d = p2.create(t, "other", "main")
	r = p2.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionBuildFailed)
	if r.FailureReason == nil || !strings.Contains(*r.FailureReason, "no builder") {
		t.Errorf("reason %v", r.FailureReason)
	}
}

func TestPipelineSupersedesQueuedRevisions(t *testing.T) {
	p := openPlane(t)
	rec := newRecorder()
	p.start(t, cp.Ports{Builder: rec, Deployer: rec})

	d := p.create(t, "app", "hold-1")
	first := *d.LatestRevisionID
	<-rec.building // the first revision is building: it is in flight
	second := *p.patchRef(t, d.ID, "v2").LatestRevisionID
	third := *p.patchRef(t, d.ID, "v3").LatestRevisionID
	close(rec.release)
	p.waitRevision(t, d.ID, first, cp.RevisionDeployed)
	r2 := p.waitRevision(t, d.ID, second, cp.RevisionSkipped)
	p.waitRevision(t, d.ID, third, cp.RevisionDeployed)
	if h := r2.StatusHistory[len(r2.StatusHistory)-1]; h.Note != "superseded by revision "+third {
		t.Errorf("skipped note %q", h.Note)
	}
	if builds, _ := rec.calls(); len(builds) != 2 {
		t.Errorf("builds %v: the superseded revision must not be built", builds)
	}
}

func TestPipelineResumesAnInterruptedBuild(t *testing.T) {
	p := openPlane(t)
	first := newRecorder()
	stop := p.start(t, cp.Ports{Builder: first, Deployer: first})
	d := p.create(t, "app", "hold")
	<-first.building
	stop() // the process stops while the revision builds: it stays BUILDING, nothing acknowledged
	if r, _ := p.svc.GetRevision(p.ctx, d.ID, *d.LatestRevisionID); r.Status != cp.RevisionBuilding {
		t.Fatalf("status after the stop: %s", r.Status)
	}

	next := newRecorder()
	close(next.release)
	p.start(t, cp.Ports{Builder: next, Deployer: next})
	r := p.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionDeployed)
	var resumed bool
	for _, h := range r.StatusHistory {
		resumed = resumed || (h.Status == cp.RevisionBuilding && strings.HasPrefix(h.Note, "resumed by "))
	}
	if !resumed {
		t.Errorf("history %+v: no resumption recorded", r.StatusHistory)
	}
}

func TestPipelineRestoresAndDeletes(t *testing.T) {
	p := openPlane(t)
	rec := newRecorder()
	stop := p.start(t, cp.Ports{Builder: rec, Deployer: rec})
	d := p.create(t, "app", "main")
	p.waitRevision(t, d.ID, *d.LatestRevisionID, cp.RevisionDeployed)
	stop()

	// A restarted control plane deploys the active revision again.
	again := newRecorder()
	p.start(t, cp.Ports{Builder: again, Deployer: again})
	deadline := time.After(30 * time.Second)
	for {
		if _, deploys := again.calls(); len(deploys) == 1 && deploys[0] == *d.LatestRevisionID {
			break
		}
		select {
		case <-deadline:
			t.Fatal("the active revision was not deployed again on start")
		case <-time.After(20 * time.Millisecond):
		}
	}

	if err := p.svc.DeleteDeployment(p.ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	for {
		ch := p.proj.Changed()
		got, err := p.svc.GetDeployment(p.ctx, d.ID)
		if engine.Is(engine.NotFound, err) {
			break
		}
		if got.Status != cp.DeploymentAwaitingDelete { // one read: it may be gone by a second
			t.Fatalf("status while deleting: %s", got.Status)
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatal("the deployment was never removed")
		}
	}
	again.mu.Lock()
	defer again.mu.Unlock()
	if len(again.removed) != 1 {
		t.Errorf("Remove calls %v", again.removed)
	}
}
