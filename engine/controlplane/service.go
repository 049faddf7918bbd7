package controlplane

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane/seal"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Log is what the control plane needs of the event log.
type Log interface {
	Append(ctx context.Context, e eventlog.Event, expect eventlog.Expect) (uint64, error)
	AppendBatch(ctx context.Context, batch []eventlog.Pending) (uint64, error)
}

// Projector is the control projection's progress: a command answers once its events are
// folded, and decides on the state as of now.
type Projector interface {
	WaitFor(ctx context.Context, seq uint64) error
	CatchUp(ctx context.Context) error
	Version(agg eventlog.Aggregate) (uint64, error)
}

// Reader is the control projection's read side (projections/deployments.View).
type Reader interface {
	// Deployment returns a deployment of tenant ("": of any tenant).
	Deployment(tenant, id string) (DeploymentRecord, bool, error)
	DeploymentByName(tenant, name string) (string, bool, error)
	Deployments(tenant string, keep func(*DeploymentRecord) bool) ([]DeploymentRecord, error)
	Revision(deployment, id string) (RevisionRecord, bool, error)
	Revisions(deployment string) ([]RevisionRecord, error)
	RevisionLog(revision string) (string, error)
	Listener(tenant, id string) (Listener, bool, error)
	ListenerByCompute(tenant, computeType, computeID string) (string, bool, error)
	Listeners(tenant string) ([]Listener, error)
}

// ProjectCreator creates the tracing project a deployment's runs are traced to (the tracing
// service, wired by the assembly: the control plane does not import tracing).
type ProjectCreator interface {
	EnsureProject(ctx context.Context, tenant, name string) error
}

// Service is the control plane's command side: each command checks the request against the
// projection, appends its events to the deployment's subject and answers once they are folded.
type Service struct {
	log       Log
	proj      Projector
	view      Reader
	projects  ProjectCreator
	urls      func(deploymentID string) string
	compute   func(raw []byte, loc ...any) error
	noGitHost string // why git_host revisions cannot run here; "" when they can
	keys      *seal.Keyring
	// beforeCommit, when set (tests only), runs between a command's read of the state and its
	// append: where another writer's event makes the append conflict.
	beforeCommit func(op string)
}

// RefuseGitHost makes every command that would make a git_host revision (create, a patch that
// revises, redeploy) fail with 400 and why: this process cannot build and run them (no data
// namespace can be made on its NATS), and a revision queued regardless would only fail later.
func (s *Service) RefuseGitHost(why string) { s.noGitHost = why }

// refuseGitHost is RefuseGitHost's check of a command on a deployment of source.
func (s *Service) refuseGitHost(op string, source Source) error {
	if s.noGitHost != "" && source == SourceGitHost {
		return engine.E(engine.Op(op), engine.BadRequest, s.noGitHost+".")
	}
	return nil
}

// SealSecrets makes every command seal the deployment's secret values with keys before they
// are appended (deployment and revision events alike), and the pipeline open them where a
// process or a manifest needs them. Without it values are appended as they are (tests).
func (s *Service) SealSecrets(keys *seal.Keyring) { s.keys = keys }

// sealed is d with its secrets' values sealed (those sealed already stay as they are).
func (s *Service) sealed(d Deployment) Deployment {
	d.Secrets = SealedSecrets(s.keys, d.Secrets)
	return d
}

// SealedSecrets is secrets with every value sealed with keys (as they are when keys is nil):
// what a command appends, and what the control projection keeps of an event appended before
// values were sealed.
func SealedSecrets(keys *seal.Keyring, secrets []Secret) []Secret {
	if keys == nil {
		return secrets
	}
	out := make([]Secret, len(secrets))
	for i, sec := range secrets {
		out[i] = Secret{Name: sec.Name, Value: keys.Seal(sec.Value)}
	}
	return out
}

// opened is secrets with their values in clear text, for a process's environment or a
// manifest. A value appended before sealing existed is clear already.
func (s *Service) opened(secrets []Secret) ([]Secret, error) {
	out := make([]Secret, len(secrets))
	for i, sec := range secrets {
		v := sec.Value
		if seal.Sealed(v) {
			if s.keys == nil {
				return nil, fmt.Errorf("secret %s is sealed and this jetgraph has no keyring", sec.Name)
			}
			var err error
			if v, err = s.keys.Open(v); err != nil {
				return nil, fmt.Errorf("secret %s: %w", sec.Name, err)
			}
		}
		out[i] = Secret{Name: sec.Name, Value: v}
	}
	return out, nil
}

// CheckComputeConfig makes POST/PATCH /v2/listeners check a k8s listener's compute_config
// with check (manifests.ParseComputeConfig in the wiring: this package cannot import the
// renderer, which imports it), so that a listener the publisher would refuse at deploy time
// is refused at the command, with every problem at its loc.
func (s *Service) CheckComputeConfig(check func(raw []byte, loc ...any) error) { s.compute = check }

// NewService builds the service. projects may be nil (no tracing project is created); urls
// gives a git_host deployment's custom_url (Deployer.CustomURL), nil for none. A git_host
// deployment's custom_url is not stored: every answer computes it with urls, so that it
// follows the server's current public URL (a record stored with an older one included).
func NewService(log Log, proj Projector, view Reader, projects ProjectCreator, urls func(string) string) *Service {
	return &Service{log: log, proj: proj, view: view, projects: projects, urls: urls}
}

// commitWait bounds how long a command waits for the projection to fold its events.
const commitWait = 10 * time.Second

func (s *Service) catchUp(ctx context.Context, op string) error {
	cctx, cancel := context.WithTimeout(ctx, commitWait)
	defer cancel()
	if err := s.proj.CatchUp(cctx); err != nil {
		return engine.E(engine.Op(op), engine.Unavailable, "The control projection is behind; retry.", err)
	}
	return nil
}

// commit appends events of one aggregate as one message, at version expect, and waits until
// they are folded.
func (s *Service) commit(ctx context.Context, op string, expect eventlog.Expect, events ...eventlog.Event) error {
	return Commit(ctx, s.log, s.proj, op, expect, events...)
}

// Commit appends events of one aggregate as one message, at version expect, and waits until
// proj has folded them: what every control-plane command does (keys too).
func Commit(ctx context.Context, log Log, proj Projector, op string, expect eventlog.Expect, events ...eventlog.Event) error {
	batch := make([]eventlog.Pending, len(events))
	for i, e := range events {
		batch[i] = eventlog.Pending{Event: e, Expect: expect}
	}
	seq, err := log.AppendBatch(ctx, batch)
	if errors.Is(err, eventlog.ErrConflict) {
		return engine.E(engine.Op(op), engine.Conflict, "The resource changed meanwhile; retry.", err)
	}
	if err != nil {
		return engine.E(engine.Op(op), engine.Unavailable, "The event log is unavailable.", err)
	}
	wctx, cancel := context.WithTimeout(ctx, commitWait)
	defer cancel()
	if err := proj.WaitFor(wctx, seq); err != nil {
		return engine.E(engine.Op(op), engine.Unavailable, err)
	}
	return nil
}

// deploymentAgg is a deployment's aggregate. Every control-plane aggregate is filed under the
// log's default tenant: a deployment's owner is in its data (tenant_id), so that its id alone
// names its events (`jetgraph events deployment <id>`, the pipeline's messages).
func deploymentAgg(id string) eventlog.Aggregate {
	return eventlog.Aggregate{Kind: DeploymentKind, Tenant: eventlog.DefaultTenant, ID: id}
}

func notFound(op, id string) error {
	return engine.E(engine.Op(op), engine.NotFound, fmt.Sprintf("Deployment ID %s not found.", id))
}

// deployment reads a tenant's deployment; another tenant's is not found.
func (s *Service) deployment(ctx context.Context, op, id string) (DeploymentRecord, error) {
	if err := s.catchUp(ctx, op); err != nil {
		return DeploymentRecord{}, err
	}
	d, ok, err := s.view.Deployment(engine.TenantFrom(ctx), id)
	switch {
	case err != nil:
		return d, engine.E(engine.Op(op), err)
	case !ok:
		return d, notFound(op, id)
	}
	return d, nil
}

// CreateDeployment creates a deployment and its first revision (POST /v2/deployments).
func (s *Service) CreateDeployment(ctx context.Context, body map[string]any) (Deployment, error) {
	const op = "controlplane.create_deployment"
	tenant := engine.TenantFrom(ctx)
	if err := s.catchUp(ctx, op); err != nil {
		return Deployment{}, err
	}
	d, c := parseCreate(body)
	if err := s.checkPlacement(c, tenant, d); err != nil {
		return Deployment{}, engine.E(engine.Op(op), err)
	}
	if err := c.v.Err(op); err != nil { // every problem of the body, its listener's included
		return Deployment{}, err
	}
	if err := s.refuseGitHost(op, d.Source); err != nil {
		return Deployment{}, err
	}
	if _, taken, err := s.view.DeploymentByName(tenant, d.Name); err != nil || taken {
		if err == nil {
			err = engine.E(engine.Op(op), engine.Exists, fmt.Sprintf("A deployment named %s already exists.", d.Name))
		}
		return Deployment{}, err
	}
	d.ID, d.TenantID, d.Status = uuid.NewString(), tenant, DeploymentAwaitingDatabase
	if d.Source == SourceGitHost {
		if d.SourceConfig.IntegrationID == nil {
			id := GitIntegration.ID
			d.SourceConfig.IntegrationID = &id
		}
		if d.SourceRevisionConfig.GraphConfigPath == nil {
			p := DefaultGraphConfigPath
			d.SourceRevisionConfig.GraphConfigPath = &p
		}
	}
	if s.projects != nil {
		if err := s.projects.EnsureProject(ctx, tenant, d.Name); err != nil {
			return Deployment{}, engine.E(engine.Op(op), err)
		}
	}
	agg := deploymentAgg(d.ID)
	d = s.sealed(d)
	created, err := eventlog.New(agg, DeploymentCreated, DeploymentData{Deployment: d})
	if err != nil {
		return Deployment{}, engine.E(engine.Op(op), err)
	}
	revEvents, err := newRevisionEvents(agg, d, "create", "")
	if err != nil {
		return Deployment{}, engine.E(engine.Op(op), err)
	}
	if err := s.commit(ctx, op, eventlog.At(0), append([]eventlog.Event{created}, revEvents...)...); err != nil {
		return Deployment{}, err
	}
	out, err := s.deployment(ctx, op, d.ID)
	return s.answer(out.Deployment), err
}

// answer is d as the API shows it: a git_host deployment's custom_url is the current one
// (none without a deployer), whatever an older record stored.
func (s *Service) answer(d Deployment) Deployment {
	if d.Source != SourceGitHost || d.ID == "" {
		return d
	}
	d.SourceConfig.CustomURL = nil
	if s.urls != nil {
		u := s.urls(d.ID)
		d.SourceConfig.CustomURL = &u
	}
	return d
}

// newRevisionEvents are the events of a new revision of d: created, then queued.
func newRevisionEvents(agg eventlog.Aggregate, d Deployment, trigger, pushed string) ([]eventlog.Event, error) {
	r := Revision{ID: uuid.NewString(), DeploymentID: d.ID, Status: RevisionCreating, Source: d.Source,
		SourceRevisionConfig: d.SourceRevisionConfig, StatusHistory: []StatusChange{}}
	r.SourceRevisionConfig.RepoCommitSHA = nil
	in := RevisionInputs{Secrets: slices.Clone(d.Secrets), ResourceSpec: d.SourceConfig.ResourceSpec,
		Trigger: trigger, PushedCommit: pushed}
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	in.RepoURL, in.RepoRef = deref(d.SourceConfig.RepoURL), deref(d.SourceRevisionConfig.RepoRef)
	in.GraphConfigPath, in.ImageURI = deref(d.SourceRevisionConfig.GraphConfigPath), deref(d.SourceRevisionConfig.ImageURI)
	in.InstallCommand, in.BuildCommand = deref(d.SourceConfig.InstallCommand), deref(d.SourceConfig.BuildCommand)
	in.ListenerID = deref(d.SourceConfig.ListenerID)
	if d.SourceConfig.ListenerConfig != nil {
		in.Namespace = deref(d.SourceConfig.ListenerConfig.ClusterNamespace)
	}
	created, err := eventlog.New(agg, RevisionCreated, RevisionData{Revision: r, Inputs: in})
	if err != nil {
		return nil, err
	}
	queued, err := eventlog.New(agg, RevisionStatusChanged, RevisionStatusData{RevisionID: r.ID, Status: RevisionQueued})
	if err != nil {
		return nil, err
	}
	return []eventlog.Event{created, queued}, nil
}

// GetDeployment returns a tenant's deployment.
func (s *Service) GetDeployment(ctx context.Context, id string) (Deployment, error) {
	d, err := s.deployment(ctx, "controlplane.get_deployment", id)
	return s.answer(d.Deployment), err
}

// DeploymentFilter is the list's query: every field set must match.
type DeploymentFilter struct {
	NameContains   string
	Statuses       []DeploymentStatus
	DeploymentType string
	IDs            []string
	ImageVersion   string
}

func (f DeploymentFilter) match(d *DeploymentRecord) bool {
	switch {
	case f.NameContains != "" && !strings.Contains(strings.ToLower(d.Name), strings.ToLower(f.NameContains)):
		return false
	case len(f.Statuses) > 0 && !slices.Contains(f.Statuses, d.Status):
		return false
	case f.DeploymentType != "" && (d.SourceConfig.DeploymentType == nil || *d.SourceConfig.DeploymentType != f.DeploymentType):
		return false
	case len(f.IDs) > 0 && !slices.Contains(f.IDs, d.ID):
		return false
	case f.ImageVersion != "" && (d.ImageVersion == nil || *d.ImageVersion != f.ImageVersion):
		return false
	}
	return true
}

// ListDeployments returns a page of the tenant's deployments that match f, newest first, and
// the offset of the next page.
func (s *Service) ListDeployments(ctx context.Context, f DeploymentFilter, offset, limit int) ([]Deployment, int, error) {
	const op = "controlplane.list_deployments"
	if err := s.catchUp(ctx, op); err != nil {
		return nil, 0, err
	}
	all, err := s.view.Deployments(engine.TenantFrom(ctx), f.match)
	if err != nil {
		return nil, 0, engine.E(engine.Op(op), err)
	}
	page := pageOf(all, offset, limit)
	out := make([]Deployment, len(page))
	for i, d := range page {
		out[i] = s.answer(d.Deployment)
	}
	return out, offset + len(out), nil
}

func pageOf[T any](items []T, offset, limit int) []T {
	if offset >= len(items) {
		return []T{}
	}
	items = items[offset:]
	if limit < len(items) {
		items = items[:limit]
	}
	return items
}

// maxCommandAttempts bounds how often a command is tried again after a version conflict.
const maxCommandAttempts = 8

// retryConflicts runs a command that reads the state and appends at the version it read, again
// while its append conflicts (bounded): the pipeline's own events (a status, a log chunk) land
// on the deployment's subject at any time and must not fail a user's request. Each attempt
// reads and validates against the state as of then, so a conflicting change by a user (a
// deletion, another PATCH) is seen and judged by the same rules.
func retryConflicts(ctx context.Context, attempt func() error) error {
	for n := 1; ; n++ {
		err := attempt()
		if err == nil || !engine.Is(engine.Conflict, err) || n == maxCommandAttempts || ctx.Err() != nil {
			return err
		}
	}
}

// UpdateDeployment applies a PATCH: the deployment changes, and a new revision is created
// when the spec's rule says so. A conflict with another event on the deployment is retried
// against the new state (see retryConflicts).
func (s *Service) UpdateDeployment(ctx context.Context, id string, body map[string]any) (Deployment, error) {
	const op = "controlplane.update_deployment"
	err := retryConflicts(ctx, func() error {
		if err := s.catchUp(ctx, op); err != nil {
			return err
		}
		return s.updateOnce(ctx, op, id, body)
	})
	if err != nil {
		return Deployment{}, err
	}
	out, err := s.deployment(ctx, op, id)
	return s.answer(out.Deployment), err
}

// updateOnce reads the deployment (its version first: a state newer than the version read
// conflicts at the append, never the other way round), applies the PATCH and appends it at
// that version.
func (s *Service) updateOnce(ctx context.Context, op, id string, body map[string]any) error {
	agg := deploymentAgg(id)
	version, err := s.proj.Version(agg)
	if err != nil {
		return engine.E(engine.Op(op), err)
	}
	cur, ok, err := s.view.Deployment(engine.TenantFrom(ctx), id)
	switch {
	case err != nil:
		return engine.E(engine.Op(op), err)
	case !ok:
		return notFound(op, id)
	case cur.Status == DeploymentAwaitingDelete:
		return engine.E(engine.Op(op), engine.BadRequest, "The deployment is being deleted.")
	}
	next, revise, err := ParsePatch(body, cur.Deployment)
	if err != nil {
		return err
	}
	if revise {
		if err := s.refuseGitHost(op, cur.Source); err != nil {
			return err
		}
	}
	if next.Source == SourceGitHost {
		next.SourceConfig.CustomURL = nil // computed by every answer, never stored
	}
	next = s.sealed(next)
	updated, err := eventlog.New(agg, DeploymentUpdated, DeploymentData{Deployment: next})
	if err != nil {
		return engine.E(engine.Op(op), err)
	}
	events := []eventlog.Event{updated}
	if revise {
		more, err := newRevisionEvents(agg, next, "patch", "")
		if err != nil {
			return engine.E(engine.Op(op), err)
		}
		events = append(events, more...)
	}
	if s.beforeCommit != nil {
		s.beforeCommit(op)
	}
	return s.commit(ctx, op, eventlog.At(version), events...)
}

// DeleteDeployment starts a deployment's teardown: AWAITING_DELETE until the pipeline has
// stopped its processes and removed its data, then it is gone.
func (s *Service) DeleteDeployment(ctx context.Context, id string) error {
	const op = "controlplane.delete_deployment"
	cur, err := s.deployment(ctx, op, id)
	if err != nil || cur.Status == DeploymentAwaitingDelete {
		return err
	}
	e, err := eventlog.New(deploymentAgg(id), DeploymentStatusChanged, DeploymentStatusData{Status: DeploymentAwaitingDelete})
	if err != nil {
		return engine.E(engine.Op(op), err)
	}
	return s.commit(ctx, op, eventlog.Any, e)
}

// revisionNotFound is a revision's 404.
func revisionNotFound(op, id string) error {
	return engine.E(engine.Op(op), engine.NotFound, fmt.Sprintf("Revision ID %s not found.", id))
}

// ListRevisions returns a page of a deployment's revisions, newest first, those in statuses
// only when given.
func (s *Service) ListRevisions(ctx context.Context, id string, statuses []RevisionStatus, offset, limit int) ([]Revision, int, error) {
	const op = "controlplane.list_revisions"
	if _, err := s.deployment(ctx, op, id); err != nil {
		return nil, 0, err
	}
	all, err := s.view.Revisions(id)
	if err != nil {
		return nil, 0, engine.E(engine.Op(op), err)
	}
	var kept []Revision
	for _, r := range all {
		if len(statuses) == 0 || slices.Contains(statuses, r.Status) {
			kept = append(kept, r.Revision)
		}
	}
	page := pageOf(kept, offset, limit)
	return page, offset + len(page), nil
}

// GetRevision returns a deployment's revision.
func (s *Service) GetRevision(ctx context.Context, id, revisionID string) (Revision, error) {
	r, err := s.revision(ctx, "controlplane.get_revision", id, revisionID)
	return r.Revision, err
}

func (s *Service) revision(ctx context.Context, op, id, revisionID string) (RevisionRecord, error) {
	if _, err := s.deployment(ctx, op, id); err != nil {
		return RevisionRecord{}, err
	}
	r, ok, err := s.view.Revision(id, revisionID)
	switch {
	case err != nil:
		return r, engine.E(engine.Op(op), err)
	case !ok:
		return r, revisionNotFound(op, revisionID)
	}
	return r, nil
}

// RevisionLog returns a revision's whole log: its build's and its deploys' output.
func (s *Service) RevisionLog(ctx context.Context, id, revisionID string) (string, error) {
	const op = "controlplane.revision_log"
	if _, err := s.revision(ctx, op, id, revisionID); err != nil {
		return "", err
	}
	text, err := s.view.RevisionLog(revisionID)
	if err != nil {
		return "", engine.E(engine.Op(op), err)
	}
	return text, nil
}

// Redeploy rolls a revision that was built out again (a rollback to it, or a restart): the
// pipeline deploys its artifact, without a rebuild.
func (s *Service) Redeploy(ctx context.Context, id, revisionID string) (Deployment, error) {
	const op = "controlplane.redeploy"
	r, err := s.revision(ctx, op, id, revisionID)
	if err != nil {
		return Deployment{}, err
	}
	if err := s.refuseGitHost(op, r.Source); err != nil {
		return Deployment{}, err
	}
	if r.Built == nil {
		return Deployment{}, engine.E(engine.Op(op), engine.BadRequest,
			fmt.Sprintf("Revision %s was never built (status %s): only a built revision can be redeployed.", revisionID, r.Status))
	}
	e, err := eventlog.New(deploymentAgg(id), RolloutRequested, RolloutData{RevisionID: revisionID})
	if err != nil {
		return Deployment{}, engine.E(engine.Op(op), err)
	}
	if err := s.commit(ctx, op, eventlog.Any, e); err != nil {
		return Deployment{}, err
	}
	return s.GetDeployment(ctx, id)
}
