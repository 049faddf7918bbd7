package controlplane

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane/scrub"
	"github.com/jetgraph/jetgraph/eventlog"
)

// PipelineConfig tunes the revision pipeline.
type PipelineConfig struct {
	// AckWait is how long a pipeline message waits for its worker's word before another
	// process takes it over (and the lease's TTL): a process killed mid-build leaves its
	// revision to another after about this long.
	AckWait time.Duration
	// PollInterval is how often build_on_push refs are checked; 0 turns the poller off.
	PollInterval time.Duration
	// Workers is how many deployments this process works on at once.
	Workers int
	// FollowInterval is how often this process makes sure it runs every deployment's active
	// revision; 0 is DefaultFollowInterval.
	FollowInterval time.Duration
	// Logger receives the pipeline's messages; nil is slog.Default().
	Logger *slog.Logger
}

// Ports are the pipeline's builder, deployer, manifest publisher and ref watcher. A nil one
// makes the revisions that need it fail with a reason that says so.
type Ports struct {
	Builder   Builder
	Deployer  Deployer
	Publisher ManifestPublisher
	Watcher   RefWatcher
}

// Names of the pipeline's JetStream resources.
const (
	pipelineConsumer = "jg_controlplane"
	leaseBucket      = "jg_controlplane_leases"
	// maxResumes is how often a revision is resumed after an interruption before it is
	// INTERRUPTED for good (a build that kills its process every time).
	maxResumes = 3
	// maxLogEvent is how much of its end a step's output keeps past stepLogBudget.
	maxLogEvent = 512 << 10
)

// Pipeline drives revisions from QUEUED to DEPLOYED (or a failure), deployments from
// AWAITING_DATABASE to READY and from AWAITING_DELETE to gone. It is a reconciler behind a
// durable JetStream consumer on every deployment event: a message only says "this deployment
// changed"; its worker holds the deployment's lease (at most one worker per deployment in the
// cluster, so at most one revision in flight) and does whatever the projection says is left,
// appending each step as an event. A process killed at any step leaves the message
// unacknowledged and the lease expiring: another process (or this one restarted) redoes the
// step that was in flight.
type Pipeline struct {
	log    *eventlog.Log
	proj   Projector
	view   Reader
	svc    *Service
	ports  Ports
	cfg    PipelineConfig
	holder string
	leases *eventlog.Leases
	queue  *eventlog.DispatchQueue
	local  local
	wg     sync.WaitGroup
}

// NewPipeline builds the pipeline; Start runs it.
func NewPipeline(log *eventlog.Log, proj Projector, view Reader, svc *Service, ports Ports, cfg PipelineConfig) *Pipeline {
	if cfg.AckWait <= 0 {
		cfg.AckWait = 10 * time.Second
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &Pipeline{log: log, proj: proj, view: view, svc: svc, ports: ports, cfg: cfg,
		holder: fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))}
}

// Start opens the consumer and the leases, and runs the workers, the follower (which deploys
// every active revision in this process, again after a restart: see follow.go) and the poller
// until ctx ends. Wait waits for them.
func (p *Pipeline) Start(ctx context.Context) error {
	var err error
	if p.leases, err = p.log.OpenLeases(ctx, leaseBucket, p.cfg.AckWait); err != nil {
		return fmt.Errorf("controlplane: leases: %w", err)
	}
	p.queue, err = p.log.OpenDispatch(ctx, eventlog.DispatchConfig{Name: pipelineConsumer,
		Filter: DeploymentKind + ".>", AckWait: p.cfg.AckWait, Stream: eventlog.ControlStream})
	if err != nil {
		return fmt.Errorf("controlplane: consumer: %w", err)
	}
	p.wg.Add(1)
	go func() { defer p.wg.Done(); p.follow(ctx) }()
	for range p.cfg.Workers {
		p.wg.Add(1)
		go func() { defer p.wg.Done(); p.work(ctx) }()
	}
	if p.cfg.PollInterval > 0 && p.ports.Watcher != nil {
		p.wg.Add(1)
		go func() { defer p.wg.Done(); p.poll(ctx) }()
	}
	return nil
}

// Wait returns once every goroutine of Start has returned (ctx ended).
func (p *Pipeline) Wait() { p.wg.Wait() }

// work pulls pipeline messages until ctx ends.
func (p *Pipeline) work(ctx context.Context) {
	for ctx.Err() == nil {
		pull, err := p.queue.Pull(1)
		if err != nil {
			_ = engine.Sleep(ctx, time.Second)
			continue
		}
		stop := context.AfterFunc(ctx, pull.Stop)
		for {
			d, err := pull.Next()
			if err != nil {
				break
			}
			p.handle(ctx, d)
		}
		stop()
		pull.Stop()
	}
}

// handle reconciles the deployment a message names, under its lease.
func (p *Pipeline) handle(ctx context.Context, d *eventlog.Dispatch) {
	parts := strings.Split(d.Subject(), ".")
	if len(parts) != 4 {
		_ = d.Term()
		return
	}
	id := parts[2]
	if parts[3] == RevisionLogged {
		// A piece of a revision's log changes nothing left to do; a build streams one a
		// second, which would otherwise each wait for the lease its own build holds.
		_ = d.Ack()
		return
	}
	if seq, err := d.Seq(); err == nil {
		wctx, cancel := context.WithTimeout(ctx, p.cfg.AckWait)
		err = p.proj.WaitFor(wctx, seq)
		cancel()
		if err != nil {
			_ = d.Nak(time.Second)
			return
		}
	}
	done := p.withLease(ctx, id, d, func(ctx context.Context) {
		if err := p.reconcile(ctx, id); err != nil && ctx.Err() == nil {
			p.cfg.Logger.Error("controlplane: pipeline step failed; retried", "deployment_id", id, "err", err)
			_ = d.Nak(p.cfg.AckWait / 2)
			return
		}
		if ctx.Err() != nil {
			_ = d.Nak(0) // stopping, or the lease lost: the step in flight is redone by whoever takes it
			return
		}
		_ = d.Ack()
	})
	if !done {
		_ = d.Nak(p.cfg.AckWait / 4) // another worker has the deployment: it sees this change too
	}
}

// withLease runs f holding the deployment's lease (eventlog.Held: renewed while f runs, the
// message d kept in progress meanwhile); f's ctx ends when the lease is lost, or could have
// expired while the log was unreachable, before another process can take the deployment's
// step over. It reports false when another holder has the lease.
func (p *Pipeline) withLease(ctx context.Context, deploymentID string, d *eventlog.Dispatch, f func(ctx context.Context)) bool {
	held, err := p.leases.Hold(ctx, "deploy-"+deploymentID, p.holder)
	if err != nil {
		return false
	}
	defer func() { _ = held.Release() }()
	held.Progress(p.cfg.AckWait/3, d)
	f(held.Context())
	if lost := held.Lost(); lost != nil {
		p.cfg.Logger.Warn("controlplane: the deployment's lease was lost; its step in flight is left to whoever takes it",
			"deployment_id", deploymentID, "err", lost)
	}
	return true
}

// reconcile does what is left for a deployment, one step at a time, until nothing is.
func (p *Pipeline) reconcile(ctx context.Context, id string) error {
	for ctx.Err() == nil {
		more, err := p.step(ctx, id)
		if err != nil || !more {
			return err
		}
	}
	return ctx.Err()
}

// step does one thing for the deployment and reports whether there may be more.
func (p *Pipeline) step(ctx context.Context, id string) (bool, error) {
	if err := p.proj.CatchUp(ctx); err != nil {
		return false, err
	}
	d, ok, err := p.view.Deployment("", id)
	if err != nil || !ok {
		return false, err
	}
	tenant, agg := d.TenantID, deploymentAgg(id)
	switch d.Status {
	case DeploymentAwaitingDelete:
		// Until the deletion is folded: this process's follower must not start the
		// deployment again behind the removal (follow.go).
		defer p.local.lock(id)()
		if p.ports.Deployer != nil && d.Source == SourceGitHost {
			if err := p.ports.Deployer.Remove(ctx, tenant, id); err != nil {
				return false, err
			}
		}
		if err := p.removeManifests(ctx, d.Deployment); err != nil {
			return false, err
		}
		return false, p.emit(ctx, agg, DeploymentDeleted, struct{}{})
	case DeploymentAwaitingDatabase:
		if p.ports.Deployer != nil && d.Source == SourceGitHost {
			if err := p.ports.Deployer.Provision(ctx, tenant, id); err != nil {
				return false, err
			}
		}
		return true, p.emit(ctx, agg, DeploymentStatusChanged, DeploymentStatusData{Status: DeploymentReady})
	}
	revs, err := p.view.Revisions(id)
	if err != nil {
		return false, err
	}
	if d.PendingRollout != "" {
		for _, r := range revs {
			if r.ID == d.PendingRollout {
				return true, p.deploy(ctx, agg, d.Deployment, r, "redeploy")
			}
		}
	}
	// A revision not started yet is superseded by any newer one: only the newest waits.
	for i := 1; i < len(revs); i++ {
		if r := revs[i]; !r.Status.Terminal() && !r.Status.started() {
			return true, p.emit(ctx, agg, RevisionStatusChanged, RevisionStatusData{RevisionID: r.ID,
				Status: RevisionSkipped, Note: "superseded by revision " + revs[0].ID})
		}
	}
	pick := pickRevision(revs)
	if pick == nil {
		return false, nil
	}
	r := *pick
	switch r.Status {
	case RevisionCreating:
		return true, p.emit(ctx, agg, RevisionStatusChanged, RevisionStatusData{RevisionID: r.ID, Status: RevisionQueued})
	case RevisionQueued:
		return true, p.emit(ctx, agg, RevisionStatusChanged, RevisionStatusData{RevisionID: r.ID, Status: RevisionAwaitingBuild})
	case RevisionAwaitingBuild, RevisionBuilding:
		return true, p.build(ctx, agg, d.Deployment, r)
	case RevisionAwaitingDeploy, RevisionDeploying:
		return true, p.deploy(ctx, agg, d.Deployment, r, "")
	}
	return false, nil
}

// pickRevision is the revision to work on: the one in flight (started before), else the
// newest one if it is not done.
func pickRevision(revs []RevisionRecord) *RevisionRecord {
	for i := len(revs) - 1; i >= 0; i-- { // oldest first: revs is newest first
		if revs[i].Status.started() {
			return &revs[i]
		}
	}
	if len(revs) > 0 && !revs[0].Status.Terminal() {
		return &revs[0]
	}
	return nil
}

// resumes counts how often a revision entered status s: more than once means a process died
// in it and it was resumed.
func resumes(r RevisionRecord, s RevisionStatus) int {
	n := 0
	for _, h := range r.StatusHistory {
		if h.Status == s {
			n++
		}
	}
	return n
}

// enter appends the revision's move into status s, or, when a process died in s already,
// a resumption (or INTERRUPTED once it was resumed maxResumes times). It reports whether to
// go on with the step.
func (p *Pipeline) enter(ctx context.Context, agg eventlog.Aggregate, r RevisionRecord, s RevisionStatus) (bool, error) {
	note := ""
	if r.Status == s {
		if resumes(r, s) > maxResumes {
			reason := fmt.Sprintf("interrupted %d times in %s: the process doing it stopped each time", maxResumes+1, s)
			if err := p.logLine(ctx, agg, r.ID, fmt.Sprintf("%s: %s", RevisionInterrupted, reason)); err != nil {
				return false, err
			}
			return false, p.emit(ctx, agg, RevisionStatusChanged, RevisionStatusData{RevisionID: r.ID, Status: RevisionInterrupted, Reason: reason})
		}
		note = "resumed by " + p.holder + " after the process doing it stopped"
	}
	return true, p.emit(ctx, agg, RevisionStatusChanged, RevisionStatusData{RevisionID: r.ID, Status: s, Note: note})
}

// logLine appends line to a revision's log, on a line of its own (the log of a step cut short
// may end mid-line).
func (p *Pipeline) logLine(ctx context.Context, agg eventlog.Aggregate, revisionID, line string) error {
	text, err := p.view.RevisionLog(revisionID)
	if err != nil {
		return err
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		line = "\n" + line
	}
	_, err = p.append(ctx, agg, RevisionLogged, RevisionLogData{RevisionID: revisionID, Text: line + "\n"})
	return err
}

func (p *Pipeline) build(ctx context.Context, agg eventlog.Aggregate, d Deployment, r RevisionRecord) error {
	if goOn, err := p.enter(ctx, agg, r, RevisionBuilding); err != nil || !goOn {
		return err
	}
	secrets, serr := p.opened(r.Inputs.Secrets)
	out := p.stepLog(ctx, agg, r.ID, d, secrets)
	var art Artifact
	var err error
	failed := RevisionBuildFailed
	switch {
	case serr != nil:
		err = serr
	case d.Source == SourceGitHost:
		if p.ports.Builder == nil {
			err = errors.New("this jetgraph has no builder for git_host revisions")
			break
		}
		art, err = p.ports.Builder.Build(ctx, BuildSpec{DeploymentID: d.ID, RevisionID: r.ID, RepoURL: r.Inputs.RepoURL,
			RepoRef: r.Inputs.RepoRef, GraphConfigPath: r.Inputs.GraphConfigPath, InstallCommand: r.Inputs.InstallCommand,
			BuildCommand: r.Inputs.BuildCommand, Secrets: secrets}, out)
	case d.Source == SourceExternalContainer:
		// Nothing is built from an image: publishing its manifests is the rollout, so a
		// failure there (the repository unreachable, a push refused) is DEPLOY_FAILED.
		failed = RevisionDeployFailed
		art, err = p.publish(ctx, d, r, secrets, "", out)
	default:
		err = fmt.Errorf("source %s cannot be built", d.Source)
	}
	reason := p.outcome(ctx, out, failed, err)
	if lerr := out.Close(); lerr != nil {
		return fmt.Errorf("controlplane: the build's log: %w", lerr)
	}
	if ctx.Err() != nil {
		return ctx.Err() // stopping: whoever takes over resumes the build
	}
	if err != nil {
		return p.emit(ctx, agg, RevisionStatusChanged, RevisionStatusData{RevisionID: r.ID, Status: failed,
			Reason: reason, CommitSHA: art.CommitSHA})
	}
	return p.emit(ctx, agg, RevisionStatusChanged, RevisionStatusData{RevisionID: r.ID, Status: RevisionAwaitingDeploy,
		CommitSHA: art.CommitSHA, Artifact: &art})
}

// outcome ends a step's log with the line that says why it failed (status: reason) when err is
// a failure (not the process stopping), and returns the reason, scrubbed of the secrets.
func (p *Pipeline) outcome(ctx context.Context, out *stepOutput, status RevisionStatus, err error) string {
	if err == nil || ctx.Err() != nil {
		return ""
	}
	reason := out.scrub.String(err.Error())
	out.line(fmt.Sprintf("%s: %s", status, strings.Join(strings.Fields(reason), " ")))
	return reason
}

// opened is a revision's secrets in clear text (see Service.SealSecrets).
func (p *Pipeline) opened(secrets []Secret) ([]Secret, error) {
	if p.svc == nil {
		return secrets, nil
	}
	return p.svc.opened(secrets)
}

// publish commits r's manifests to its listener's GitOps repository; why is "redeploy" for a
// rollback to r (a new commit of its manifests).
func (p *Pipeline) publish(ctx context.Context, d Deployment, r RevisionRecord, secrets []Secret, why string, out io.Writer) (Artifact, error) {
	if p.ports.Publisher == nil {
		return Artifact{}, errors.New("this jetgraph has no manifest publisher for external_container revisions")
	}
	l, ok, err := p.view.Listener(d.TenantID, r.Inputs.ListenerID)
	if err != nil {
		return Artifact{}, err
	}
	if !ok {
		return Artifact{}, fmt.Errorf("listener %s not found", r.Inputs.ListenerID)
	}
	raw, err := json.Marshal(l)
	if err != nil {
		return Artifact{}, err
	}
	return p.ports.Publisher.Publish(ctx, ManifestSpec{Tenant: d.TenantID, DeploymentID: d.ID, DeploymentName: d.Name,
		RevisionID: r.ID, ImageURI: r.Inputs.ImageURI, Secrets: secrets, ResourceSpec: r.Inputs.ResourceSpec,
		Namespace: r.Inputs.Namespace, Listener: raw, Rollout: why}, out)
}

// removeManifests takes an external_container deployment's folder out of the repository of
// every listener its revisions were published to (idempotent: a step redone after a crash
// finds nothing to remove). A listener deleted since has nothing left to remove.
func (p *Pipeline) removeManifests(ctx context.Context, d Deployment) error {
	rm, ok := p.ports.Publisher.(ManifestRemover)
	if d.Source != SourceExternalContainer || !ok {
		return nil
	}
	revs, err := p.view.Revisions(d.ID)
	if err != nil {
		return err
	}
	done := map[string]bool{}
	for _, r := range revs {
		id := r.Inputs.ListenerID
		if id == "" || done[id] {
			continue
		}
		done[id] = true
		l, ok, err := p.view.Listener(d.TenantID, id)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		raw, err := json.Marshal(l)
		if err != nil {
			return err
		}
		if err := rm.Remove(ctx, raw, d.Name, io.Discard); err != nil {
			return fmt.Errorf("removing the manifests of %s: %w", d.Name, err)
		}
	}
	return nil
}

func agg(d Deployment) eventlog.Aggregate { return deploymentAgg(d.ID) }

func (p *Pipeline) deploySpec(d Deployment, r RevisionRecord) (DeploySpec, error) {
	secrets, err := p.opened(r.Inputs.Secrets)
	return p.deploySpecWith(d, r, secrets), err
}

// deploy rolls r out; why is "redeploy" for a rollout asked for by a redeploy.
func (p *Pipeline) deploy(ctx context.Context, agg eventlog.Aggregate, d Deployment, r RevisionRecord, why string) error {
	if why == "" {
		if goOn, err := p.enter(ctx, agg, r, RevisionDeploying); err != nil || !goOn {
			return err
		}
	} else if err := p.emit(ctx, agg, RevisionStatusChanged, RevisionStatusData{RevisionID: r.ID, Status: RevisionDeploying, Note: why}); err != nil {
		return err
	}
	defer p.local.lock(d.ID)() // until the outcome is folded: see follow.go
	secrets, err := p.opened(r.Inputs.Secrets)
	out := p.stepLog(ctx, agg, r.ID, d, secrets)
	var built *Artifact
	switch {
	case err != nil:
	case r.Built == nil:
		err = errors.New("the revision has no artifact")
	case r.Built.Kind == ArtifactManifests && why != "":
		// A rollback: the repository holds a newer revision's manifests, and the cluster
		// applies what the repository holds.
		var art Artifact
		if art, err = p.publish(ctx, d, r, secrets, why, out); err == nil {
			built = &art
			fmt.Fprintf(out, "revision %s's manifests are commit %s of the GitOps repository: applying them is the cluster's job (Argo CD, Flux)\n", r.ID, art.GitOpsCommit)
		}
	case r.Built.Kind == ArtifactManifests:
		fmt.Fprintf(out, "manifests committed as %s: applying them is the cluster's job (Argo CD, Flux)\n", r.Built.GitOpsCommit)
	case p.ports.Deployer == nil:
		err = errors.New("this jetgraph has no deployer")
	default:
		err = p.ports.Deployer.Deploy(ctx, p.deploySpecWith(d, r, secrets), out)
	}
	reason := p.outcome(ctx, out, RevisionDeployFailed, err)
	if lerr := out.Close(); lerr != nil {
		return fmt.Errorf("controlplane: the rollout's log: %w", lerr)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return p.emit(ctx, agg, RevisionStatusChanged, RevisionStatusData{RevisionID: r.ID, Status: RevisionDeployFailed, Reason: reason, Note: why})
	}
	return p.emit(ctx, agg, RevisionStatusChanged, RevisionStatusData{RevisionID: r.ID, Status: RevisionDeployed, Note: why, Artifact: built})
}

// deploySpecWith is r's DeploySpec with its secrets opened already.
func (p *Pipeline) deploySpecWith(d Deployment, r RevisionRecord, secrets []Secret) DeploySpec {
	return DeploySpec{Tenant: d.TenantID, DeploymentID: d.ID, DeploymentName: d.Name, RevisionID: r.ID,
		Artifact: *r.Built, Secrets: secrets}
}

// stepLog streams a step's output to the revision's log while the step runs (see stepLog),
// the values of the secrets (the revision's and the deployment's own) masked; the step closes
// it before it appends its status. Output written while stopping is appended too: the log of an
// interrupted attempt is followed by the resumed one's.
func (p *Pipeline) stepLog(ctx context.Context, agg eventlog.Aggregate, revisionID string, d Deployment, secrets []Secret) *stepOutput {
	log := newStepLog(func(text string) error {
		_, err := p.append(ctx, agg, RevisionLogged, RevisionLogData{RevisionID: revisionID, Text: strings.ToValidUTF8(text, "?")})
		if err != nil {
			p.cfg.Logger.Warn("controlplane: appending a revision's log; kept for the next append", "revision_id", revisionID, "err", err)
		}
		return err
	})
	var values []string
	for _, s := range secrets {
		values = append(values, s.Value)
	}
	for _, s := range d.Secrets {
		if open, err := p.opened([]Secret{s}); err == nil { // one that does not open is in no one's output
			values = append(values, open[0].Value)
		}
	}
	return &stepOutput{log: log, scrub: scrub.NewWriter(log, values)}
}

// emit appends one event of the pipeline and waits until it is folded. The deployment's lease
// makes this worker its only writer of pipeline events.
func (p *Pipeline) emit(ctx context.Context, agg eventlog.Aggregate, typ string, data any) error {
	seq, err := p.append(ctx, agg, typ, data)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitWait)
	defer cancel()
	return p.proj.WaitFor(wctx, seq)
}

// append appends one event of the pipeline without waiting for the projection (a piece of a
// revision's log: the step's next event, which is waited for, comes after it on the subject).
// It is written even while stopping: a step done is recorded, not done twice.
func (p *Pipeline) append(ctx context.Context, agg eventlog.Aggregate, typ string, data any) (uint64, error) {
	e, err := eventlog.New(agg, typ, data)
	if err != nil {
		return 0, err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitWait)
	defer cancel()
	return p.log.Append(wctx, e, eventlog.Any)
}

// poll creates a revision of every build_on_push deployment whose ref moved.
func (p *Pipeline) poll(ctx context.Context) {
	t := time.NewTicker(p.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.pollOnce(ctx)
		}
	}
}

// pollOnce checks every build_on_push ref once.
func (p *Pipeline) pollOnce(ctx context.Context) {
	deps, err := p.view.Deployments("", func(d *DeploymentRecord) bool {
		return d.Source == SourceGitHost && d.Status == DeploymentReady && d.SourceConfig.BuildOnPush != nil &&
			*d.SourceConfig.BuildOnPush && d.LatestRevisionID != nil
	})
	if err != nil {
		return
	}
	for _, d := range deps {
		latest, ok, err := p.view.Revision(d.ID, *d.LatestRevisionID)
		if err != nil || !ok || !latest.Status.Terminal() {
			continue // the newest revision is still in flight: its commit is not known yet
		}
		known := latest.Inputs.PushedCommit
		if latest.SourceRevisionConfig.RepoCommitSHA != nil {
			known = *latest.SourceRevisionConfig.RepoCommitSHA
		}
		head, err := p.ports.Watcher.Head(ctx, latest.Inputs.RepoURL, latest.Inputs.RepoRef)
		if err != nil {
			p.cfg.Logger.Warn("controlplane: build_on_push: ref unreadable", "deployment_id", d.ID, "err", engine.MaskURLs(err.Error()))
			continue
		}
		if known == "" || head == known {
			continue
		}
		if err := p.svc.pushRevision(ctx, d.Deployment, head); err != nil && !engine.Is(engine.Conflict, err) {
			p.cfg.Logger.Warn("controlplane: build_on_push: new revision", "deployment_id", d.ID, "err", err)
		}
	}
}

// pushRevision creates a revision of d for a pushed commit, unless d changed meanwhile (a
// Conflict: another process's poller was first, or a PATCH).
func (s *Service) pushRevision(ctx context.Context, d Deployment, head string) error {
	const op = "controlplane.push_revision"
	a := agg(d)
	version, err := s.proj.Version(a)
	if err != nil {
		return engine.E(engine.Op(op), err)
	}
	events, err := newRevisionEvents(a, s.sealed(d), "push", head)
	if err != nil {
		return engine.E(engine.Op(op), err)
	}
	return s.commit(ctx, op, eventlog.At(version), events...)
}
