// Package supervise runs deployments' revisions (controlplane.Deployer): each revision is a
// runtime process of its own (the jetgraph binary with the revision's graph.json or its built
// LangGraph project's langgraph.json, or the program built from the user's module), on a
// loopback port, restarted when it crashes, its data in the deployment's NATS account on the
// control plane's embedded server, behind a reverse proxy at the deployment's custom_url that
// switches to a new revision only once it is healthy.
package supervise

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/build"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Objects is where built programs are kept (eventlog.Objects).
type Objects interface {
	Get(ctx context.Context, name string) ([]byte, error)
	List(ctx context.Context) ([]string, error)
	Delete(ctx context.Context, name string) error
}

// PathPrefix starts every deployment's custom_url on the control plane's server:
// <base>/deployments/<deployment_id>/...
const PathPrefix = "/deployments/"

// fetchTimeout bounds the fetch of a built program from the object store.
const fetchTimeout = 5 * time.Minute

// Defaults of Supervisor's durations.
const (
	DefaultGracePeriod   = 30 * time.Second
	DefaultHealthTimeout = time.Minute
)

// Supervisor runs the revisions of every deployment (controlplane.Deployer).
type Supervisor struct {
	// Dir holds, per deployment, its NATS user key and its processes' data folders
	// (<Dir>/<deployment_id>/<revision_id>, with the built folder of a LangGraph project's
	// revision, which Projects makes there), and the cache of built programs.
	Dir string
	// Jetgraph is the jetgraph binary, which serves config revisions.
	Jetgraph string
	// NATS holds the deployments' data namespaces.
	NATS Namespaces
	// Objects holds the built programs.
	Objects Objects
	// Projects makes built LangGraph projects ready to run here (build.Builder, whose Projects
	// folder is Dir); nil refuses such revisions.
	Projects Projects
	// BaseURL is the control plane server's URL (http://host:port), the base of custom_url.
	BaseURL string
	// GracePeriod is how long a replaced revision's process has to finish the requests and
	// runs in flight before it is killed; 0 is DefaultGracePeriod.
	GracePeriod time.Duration
	// HealthTimeout bounds a new revision's start until its /ok answers; 0 is
	// DefaultHealthTimeout.
	HealthTimeout time.Duration
	// Env is the environment every process starts from, before the deployment's secrets; nil is
	// MinimalEnv(): where the tools are, nothing of the control plane's own secrets.
	Env []string
	// Logger receives the supervisor's messages (starts, crashes, switches); nil is
	// slog.Default().
	Logger *slog.Logger
	// Traces, when set, makes every deployment's processes send their traces to the control
	// plane's tracing API, in the project of the deployment's name, with a key of the
	// deployment's tenant; nil leaves their traces in their own log only.
	Traces *TraceForwarding

	mu   sync.Mutex
	deps map[string]*deployment
}

var _ controlplane.Deployer = (*Supervisor)(nil)

// TraceKeys mints the keys with which deployments' processes send their traces (the control
// plane's keys service): a key of the deployment's tenant, scoped to the deployment, stored
// hashed.
type TraceKeys interface {
	// MintDeploymentKey makes a key of the tenant for the deployment's processes that holder
	// (a process of the control plane) runs, and returns it in clear text.
	MintDeploymentKey(ctx context.Context, tenantID, deploymentID, holder string) (string, error)
	// DeploymentKeyValid reports whether key is a live key of the deployment.
	DeploymentKeyValid(ctx context.Context, key, deploymentID string) (bool, error)
	// RevokeDeploymentKeys revokes every key of the deployment minted for holder ("": any) but
	// keep (a key in clear text, "" for none).
	RevokeDeploymentKeys(ctx context.Context, deploymentID, holder, keep string) error
}

// TraceForwarding is where deployments' processes send their traces: serve's
// --trace-forward-url, with the deployment's name as --trace-forward-project.
type TraceForwarding struct {
	// URL is the control plane's tracing API (http://<addr>/tracing).
	URL string
	// Keys mints the deployments' keys.
	Keys TraceKeys
}

// The environment a process is given to forward its traces (jetgraph serve's
// --trace-forward-url and --trace-forward-project, and the key). Deployment secrets may not use
// these names: the JETGRAPH_ prefix is the platform's.
const (
	TraceForwardURLEnv     = "JETGRAPH_TRACE_FORWARD_URL"
	TraceForwardProjectEnv = "JETGRAPH_TRACE_FORWARD_PROJECT"
	TraceForwardKeyEnv     = "JETGRAPH_TRACE_FORWARD_API_KEY"
)

// TraceKeyFileName is the file of a deployment's folder that holds its trace key in clear text
// (mode 0600, beside its NATS key), so that its processes get the same key after a restart of
// the control plane; it goes with the folder when the deployment is removed.
const TraceKeyFileName = "trace.key"

// MinimalEnv is a revision process's environment before the secrets: PATH and TMPDIR only.
func MinimalEnv() []string {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	if v, ok := os.LookupEnv("PATH"); ok {
		env[0] = "PATH=" + v
	}
	return append(env, "TMPDIR="+os.TempDir())
}

// deployment is the processes of one deployment.
type deployment struct {
	id string
	mu sync.Mutex // serialises Deploy and Remove

	activeMu sync.RWMutex
	active   *proc // the revision the proxy serves

	draining sync.WaitGroup // replaced revisions' processes still stopping
}

func (d *deployment) current() *proc {
	d.activeMu.RLock()
	defer d.activeMu.RUnlock()
	return d.active
}

// stopAll takes the deployment's traffic away and drains and stops all its processes; d.mu
// is held.
func (d *deployment) stopAll(grace time.Duration) {
	d.activeMu.Lock()
	p := d.active
	d.active = nil
	d.activeMu.Unlock()
	if p != nil {
		p.stop(grace)
	}
	d.draining.Wait()
}

// idPattern is what a deployment or revision id may be: it names folders and a NATS account.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

func checkID(op, what, id string) error {
	if !idPattern.MatchString(id) {
		return engine.E(engine.Op(op), engine.Invalid, fmt.Sprintf("%s %q: not a valid id", what, id))
	}
	return nil
}

func (s *Supervisor) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func (s *Supervisor) grace() time.Duration {
	if s.GracePeriod > 0 {
		return s.GracePeriod
	}
	return DefaultGracePeriod
}

func (s *Supervisor) healthTimeout() time.Duration {
	if s.HealthTimeout > 0 {
		return s.HealthTimeout
	}
	return DefaultHealthTimeout
}

// sha256Hex is an artifact's digest; it names the program's file in the cache.
var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// envName is what a secret's name must be: it becomes an environment variable.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// dep returns the deployment's record, made on first use.
func (s *Supervisor) dep(id string) *deployment {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deps == nil {
		s.deps = map[string]*deployment{}
	}
	d := s.deps[id]
	if d == nil {
		d = &deployment{id: id}
		s.deps[id] = d
	}
	return d
}

// lookup returns the deployment's record, nil when it runs nothing here.
func (s *Supervisor) lookup(id string) *deployment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deps[id]
}

// keyFile is the deployment's NATS credentials (mode 0600), its processes' --nats-creds: a user
// key seed on the embedded server, a user JWT and seed on a cluster.
func (s *Supervisor) keyFile(deploymentID string) string {
	return filepath.Join(s.Dir, deploymentID, eventlog.CredsFileName)
}

// Provision creates the deployment's namespace: a NATS account whose only users are the
// credentials its processes are given. It is idempotent, and recovers the account's streams
// after a restart.
func (s *Supervisor) Provision(ctx context.Context, tenant, deploymentID string) error {
	_, err := s.provision(ctx, deploymentID)
	return err
}

// provision is Provision returning the URL the deployment's processes connect to.
func (s *Supervisor) provision(ctx context.Context, deploymentID string) (string, error) {
	const op = "deployments.provision"
	if err := checkID(op, "deployment", deploymentID); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(s.Dir, deploymentID), 0o700); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	url, err := s.NATS.Provision(ctx, deploymentID, s.keyFile(deploymentID))
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	return url, nil
}

// Deploy starts spec's revision, waits for its /ok, switches the deployment's proxy to it and
// drains the revision it replaces in the background.
func (s *Supervisor) Deploy(ctx context.Context, spec controlplane.DeploySpec, log io.Writer) error {
	const op = "deployments.deploy"
	if err := checkID(op, "deployment", spec.DeploymentID); err != nil {
		return err
	}
	if err := checkID(op, "revision", spec.RevisionID); err != nil {
		return err
	}
	d := s.dep(spec.DeploymentID)
	d.mu.Lock()
	defer d.mu.Unlock()
	natsURL, err := s.provision(ctx, spec.DeploymentID)
	if err != nil {
		return err
	}
	old := d.current()
	if old != nil && old.revision == spec.RevisionID {
		// It serves, or its supervisor is starting it again after a crash: wait for that.
		if err := old.waitHealthy(ctx, s.healthTimeout()); err != nil {
			return engine.E(engine.Op(op), engine.Unavailable, fmt.Sprintf("revision %s: %v", spec.RevisionID, err))
		}
		fmt.Fprintf(log, "revision %s already serves\n", spec.RevisionID)
		return nil
	}
	for _, sec := range spec.Secrets {
		if !envName.MatchString(sec.Name) {
			return engine.E(engine.Op(op), engine.Invalid, fmt.Sprintf("secret name %q: not an environment variable name", sec.Name))
		}
	}
	p, err := s.newProc(ctx, spec, natsURL, log)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "starting revision %s: %s on %s\n", spec.RevisionID, filepath.Base(p.program), p.addr)
	started := time.Now()
	p.start(s.logger())
	if err := p.waitHealthy(ctx, s.healthTimeout()); err != nil {
		p.stop(0)
		fmt.Fprintf(log, "%s\n--- the process's output ---\n%s", err, p.outputTail())
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return engine.E(engine.Op(op), engine.Unavailable, fmt.Sprintf("revision %s: %v", spec.RevisionID, err))
	}
	d.activeMu.Lock()
	d.active = p
	d.activeMu.Unlock()
	fmt.Fprintf(log, "revision %s healthy in %v; traffic switched to it\n", spec.RevisionID, time.Since(started).Round(time.Millisecond))
	s.logger().Info("deployment switched", "deployment", spec.DeploymentID, "revision", spec.RevisionID, "addr", p.addr)
	if old != nil {
		d.draining.Add(1)
		go func() {
			defer d.draining.Done()
			old.stop(s.grace())
			s.logger().Info("revision drained and stopped", "deployment", spec.DeploymentID, "revision", old.revision)
		}()
		fmt.Fprintf(log, "revision %s drains and stops (grace period %v)\n", old.revision, s.grace())
	}
	return nil
}

// newProc prepares spec's process: its data folder, its graph.json, its program (fetched from
// the object store and checked against the artifact's digest, for a built one), its
// environment and flags.
func (s *Supervisor) newProc(ctx context.Context, spec controlplane.DeploySpec, natsURL string, log io.Writer) (*proc, error) {
	const op = "deployments.deploy"
	dir := filepath.Join(s.Dir, spec.DeploymentID, spec.RevisionID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var program string
	cfg := filepath.Join(dir, "graph.json")
	var extra, extraEnv []string
	switch spec.Artifact.Kind {
	case controlplane.ArtifactConfig:
		program = s.Jetgraph
	case controlplane.ArtifactBinary:
		var err error
		if program, err = s.program(ctx, spec.Artifact); err != nil {
			return nil, err
		}
	case controlplane.ArtifactProject:
		program = s.Jetgraph
		var err error
		if cfg, extra, extraEnv, err = s.projectRun(ctx, spec, log); err != nil {
			return nil, err
		}
	default:
		return nil, engine.E(engine.Op(op), engine.Invalid, fmt.Sprintf("artifact kind %q does not run here", spec.Artifact.Kind))
	}
	if spec.Artifact.Kind != controlplane.ArtifactProject {
		if err := os.WriteFile(cfg, spec.Artifact.Config, 0o600); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
	}
	addr, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	env := s.Env
	if env == nil {
		env = MinimalEnv()
	}
	env = append(append(append([]string{}, env...), "HOME="+dir), extraEnv...)
	for _, sec := range spec.Secrets {
		env = append(env, sec.Name+"="+sec.Value)
	}
	if s.Traces != nil {
		key, err := s.traceKey(ctx, spec)
		if err != nil {
			return nil, err
		}
		env = append(env, TraceForwardURLEnv+"="+s.Traces.URL, TraceForwardProjectEnv+"="+spec.DeploymentName,
			TraceForwardKeyEnv+"="+key)
	}
	// A data folder per process, not per revision: a revision rolled back to while its previous
	// process still drains must not wait for that process's lock. The projections in it are
	// rebuilt from the deployment's log; stop removes the folder.
	data := filepath.Join(dir, fmt.Sprintf("data-%d", time.Now().UnixNano()))
	args := []string{"serve", "--addr", addr, "--data", data,
		"--nats-url", natsURL, "--nats-creds", s.keyFile(spec.DeploymentID),
		"--config", cfg, "--grace-period", s.grace().String(), "--trace-project", spec.DeploymentName,
		"--log-format", "json"}
	args = append(args, extra...)
	p, err := newProc(spec.DeploymentID, spec.RevisionID, program, args, env, addr, data, filepath.Join(dir, "process.log"))
	if p != nil {
		for _, sec := range spec.Secrets {
			p.secrets = append(p.secrets, sec.Value)
		}
	}
	return p, err
}

// holder names this supervisor among a cluster's: its host and folder.
func (s *Supervisor) holder() string {
	host, _ := os.Hostname()
	dir, err := filepath.Abs(s.Dir)
	if err != nil {
		dir = s.Dir
	}
	return host + ":" + dir
}

// traceKeyFile is the deployment's trace key file.
func (s *Supervisor) traceKeyFile(deploymentID string) string {
	return filepath.Join(s.Dir, deploymentID, TraceKeyFileName)
}

// traceKey returns the key the deployment's processes send their traces with: the one of its
// key file while it is valid, else a new one, minted and written there (mode 0600), the
// deployment's other keys revoked. It is never logged.
func (s *Supervisor) traceKey(ctx context.Context, spec controlplane.DeploySpec) (string, error) {
	const op = "deployments.trace_key"
	path := s.traceKeyFile(spec.DeploymentID)
	if raw, err := os.ReadFile(path); err == nil {
		key := strings.TrimSpace(string(raw))
		ok, err := s.Traces.Keys.DeploymentKeyValid(ctx, key, spec.DeploymentID)
		if err != nil {
			return "", fmt.Errorf("%s: %w", op, err)
		}
		if ok {
			return key, nil
		}
	}
	holder := s.holder()
	key, err := s.Traces.Keys.MintDeploymentKey(ctx, spec.Tenant, spec.DeploymentID, holder)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	if err := writeFileAtomic(path, []byte(key+"\n")); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	// A key this process lost with its file (or replaced) is of no use: only the new one stays.
	// The keys other processes of a cluster run the deployment with are theirs.
	if err := s.Traces.Keys.RevokeDeploymentKeys(ctx, spec.DeploymentID, holder, key); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	return key, nil
}

// program returns the path of a built revision's program in the cache, fetching it from the
// object store on first use; a program whose sha256 is not the artifact's digest is refused.
func (s *Supervisor) program(ctx context.Context, art controlplane.Artifact) (string, error) {
	const op = "deployments.deploy"
	if !sha256Hex.MatchString(art.Digest) {
		return "", engine.E(engine.Op(op), engine.Invalid, fmt.Sprintf("artifact digest %q is not a sha256", art.Digest))
	}
	cache := filepath.Join(s.Dir, ".programs")
	path := filepath.Join(cache, art.Digest)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	// Without a deadline, the object store bounds the whole transfer by its request timeout
	// (seconds): too short for tens of megabytes on a busy machine.
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, fetchTimeout)
		defer cancel()
	}
	bin, err := s.Objects.Get(ctx, art.Object)
	if err != nil {
		return "", fmt.Errorf("%s: fetch the program %s: %w", op, art.Object, err)
	}
	if sum := sha256.Sum256(bin); hex.EncodeToString(sum[:]) != art.Digest {
		return "", engine.E(engine.Op(op), engine.Invalid, fmt.Sprintf("the program %s has not the artifact's digest %s", art.Object, art.Digest))
	}
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	tmp, err := os.CreateTemp(cache, "fetch-")
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(bin)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o700)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return "", fmt.Errorf("%s: cache the program: %w", op, err)
	}
	return path, nil
}

// Remove drains and stops the deployment's processes, deletes its account's streams, revokes
// its trace keys, deletes its programs and its folder. It is idempotent.
func (s *Supervisor) Remove(ctx context.Context, tenant, deploymentID string) error {
	const op = "deployments.remove"
	if err := checkID(op, "deployment", deploymentID); err != nil {
		return err
	}
	d := s.dep(deploymentID)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopAll(s.grace())
	if err := s.NATS.Remove(ctx, deploymentID, s.keyFile(deploymentID)); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if s.Traces != nil {
		if err := s.Traces.Keys.RevokeDeploymentKeys(ctx, deploymentID, "", ""); err != nil {
			return fmt.Errorf("%s: revoke the trace keys: %w", op, err)
		}
	}
	names, err := s.Objects.List(ctx)
	if err != nil {
		return fmt.Errorf("%s: list the programs: %w", op, err)
	}
	for _, name := range names {
		if strings.HasPrefix(name, build.ObjectPrefix(deploymentID)) {
			if err := s.Objects.Delete(ctx, name); err != nil {
				return fmt.Errorf("%s: delete the program %s: %w", op, name, err)
			}
		}
	}
	if err := os.RemoveAll(filepath.Join(s.Dir, deploymentID)); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	s.mu.Lock()
	delete(s.deps, deploymentID)
	s.mu.Unlock()
	return nil
}

// Serving is the revision each deployment runs here, by deployment id.
func (s *Supervisor) Serving() map[string]string {
	s.mu.Lock()
	deps := make([]*deployment, 0, len(s.deps))
	for _, d := range s.deps {
		deps = append(deps, d)
	}
	s.mu.Unlock()
	out := map[string]string{}
	for _, d := range deps {
		if p := d.current(); p != nil {
			out[d.id] = p.revision
		}
	}
	return out
}

// Stop drains and stops the deployment's processes here; its namespace, programs and folder
// stay (the process that removes the deployment deletes them). It is idempotent.
func (s *Supervisor) Stop(ctx context.Context, deploymentID string) error {
	d := s.lookup(deploymentID)
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopAll(s.grace())
	return nil
}

// Close drains and stops every deployment's processes (the control plane is stopping); their
// data stay, and Deploy starts them again.
func (s *Supervisor) Close() {
	s.mu.Lock()
	deps := make([]*deployment, 0, len(s.deps))
	for _, d := range s.deps {
		deps = append(deps, d)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, d := range deps {
		wg.Go(func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.stopAll(s.grace())
		})
	}
	wg.Wait()
}

// CustomURL is the deployment's URL on the control plane's server.
func (s *Supervisor) CustomURL(deploymentID string) string {
	return strings.TrimSuffix(s.BaseURL, "/") + PathPrefix + deploymentID
}
