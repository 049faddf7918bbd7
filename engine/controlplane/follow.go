package controlplane

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

// Every process of a cluster serves every deployment: the process whose pipeline worker rolls
// a revision out switches to it first (health-checked; DEPLOYED only after that switch), and
// every other process follows once the projection says DEPLOYED, running the active revision
// of each deployment in a process of its own behind its own custom_url proxy. So a load
// balancer may send a deployment's requests to any of them, and the loss of one process loses
// none of the deployments. The follower is also what deploys the active revisions again when a
// process starts.

// DefaultFollowInterval is how often a process compares what it runs with the active revisions
// when PipelineConfig.FollowInterval is 0, besides each time the projection changes (when the
// projector tells): it retries what failed and notices nothing else.
const DefaultFollowInterval = 5 * time.Second

// followRetry is how long the follower waits before it tries again a deployment whose active
// revision failed to start here.
const followRetry = 10 * time.Second

// local serialises, per deployment, this process's switches: the pipeline's rollout, from
// Deploy until DEPLOYED is folded, and the follower's, from its reading of the projection until
// its Deploy returns, so that the follower never rolls a deployment back to the revision a
// rollout in this process has just replaced.
type local struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func (l *local) lock(deploymentID string) func() {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*sync.Mutex{}
	}
	m := l.locks[deploymentID]
	if m == nil {
		m = &sync.Mutex{}
		l.locks[deploymentID] = m
	}
	l.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// follow runs this process's share of every deployment until ctx ends.
func (p *Pipeline) follow(ctx context.Context) {
	if p.ports.Deployer == nil {
		return
	}
	interval := p.cfg.FollowInterval
	if interval <= 0 {
		interval = DefaultFollowInterval
	}
	notifier, _ := p.proj.(interface{ Changed() <-chan struct{} })
	failed := map[string]time.Time{} // deployment id -> when its revision failed to start here
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		var changed <-chan struct{} // nil: only the ticker
		if notifier != nil {
			changed = notifier.Changed()
		}
		p.followOnce(ctx, failed)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-changed:
		}
	}
}

// followOnce starts, here, the active revision of every deployment that runs another one (or
// none) here, and stops what runs here of deployments that are gone or being deleted.
func (p *Pipeline) followOnce(ctx context.Context, failed map[string]time.Time) {
	if err := p.proj.CatchUp(ctx); err != nil {
		return
	}
	running := p.ports.Deployer.Serving()
	deps, err := p.view.Deployments("", func(d *DeploymentRecord) bool { return d.Source == SourceGitHost })
	if err != nil {
		p.cfg.Logger.Error("controlplane: follow the active revisions", "err", err)
		return
	}
	seen := make(map[string]bool, len(deps))
	for _, d := range deps {
		seen[d.ID] = true
		cur := running[d.ID]
		if d.Status == DeploymentReady && d.ActiveRevisionID != nil && *d.ActiveRevisionID == cur {
			continue // the usual case, decided without reading the revisions
		}
		if want, ok := p.wanted(d.ID); !ok || want == cur || time.Since(failed[d.ID]) < followRetry {
			continue
		}
		if err := p.followOne(ctx, d.ID); err != nil && ctx.Err() == nil {
			failed[d.ID] = time.Now()
			p.cfg.Logger.Error("controlplane: this process could not run a deployment's active revision; retried",
				"deployment_id", d.ID, "err", err)
		} else {
			delete(failed, d.ID)
		}
	}
	for id := range running {
		if seen[id] {
			continue
		}
		// Gone from the projection: deleted (through another process, which removed its data).
		unlock := p.local.lock(id)
		if err := p.ports.Deployer.Stop(ctx, id); err != nil && ctx.Err() == nil {
			p.cfg.Logger.Error("controlplane: stop a deleted deployment's processes", "deployment_id", id, "err", err)
		}
		unlock()
	}
}

// wanted is the revision this process should run for deployment id ("" none) as the
// projection says now, and false while a rollout of it is under way: its worker switches, and
// the follower follows when it is done.
func (p *Pipeline) wanted(id string) (string, bool) {
	d, ok, err := p.view.Deployment("", id)
	if err != nil {
		return "", false
	}
	if !ok || d.Status == DeploymentAwaitingDelete {
		return "", true
	}
	if d.Status != DeploymentReady || d.PendingRollout != "" {
		return "", false
	}
	revs, err := p.view.Revisions(id)
	if err != nil {
		return "", false
	}
	for _, r := range revs {
		if r.Status == RevisionAwaitingDeploy || r.Status == RevisionDeploying {
			return "", false
		}
	}
	if d.ActiveRevisionID == nil {
		return "", true
	}
	return *d.ActiveRevisionID, true
}

// followOne makes this process run what deployment id wants, deciding again under the
// deployment's local lock.
func (p *Pipeline) followOne(ctx context.Context, id string) error {
	unlock := p.local.lock(id)
	defer unlock()
	if err := p.proj.CatchUp(ctx); err != nil {
		return err
	}
	want, ok := p.wanted(id)
	if !ok || want == p.ports.Deployer.Serving()[id] {
		return nil
	}
	if want == "" {
		return p.ports.Deployer.Stop(ctx, id)
	}
	d, found, err := p.view.Deployment("", id)
	if err != nil || !found {
		return err
	}
	r, found, err := p.view.Revision(id, want)
	if err != nil {
		return err
	}
	if !found || r.Built == nil {
		return engine.E(engine.Op("controlplane.follow"), engine.NotFound, "the active revision "+want+" has no artifact")
	}
	spec, err := p.deploySpec(d.Deployment, r)
	if err != nil {
		return err
	}
	var out bytes.Buffer // a follower's switch is not the revision's rollout: its log stays the worker's
	err = p.ports.Deployer.Deploy(ctx, spec, &out)
	if err == nil {
		p.cfg.Logger.Info("controlplane: this process runs the deployment's active revision", "deployment_id", id, "revision_id", want)
	}
	return err
}
