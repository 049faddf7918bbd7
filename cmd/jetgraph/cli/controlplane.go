package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/keys"
	"github.com/jetgraph/jetgraph/engine/controlplane/manifests"
	"github.com/jetgraph/jetgraph/engine/controlplane/seal"
	"github.com/jetgraph/jetgraph/engine/controlplane/supervise"
	"github.com/jetgraph/jetgraph/engine/controlplane/watch"
	"github.com/jetgraph/jetgraph/engine/tracing"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/httpapi/controlapi"
	"github.com/jetgraph/jetgraph/projections"
	"github.com/jetgraph/jetgraph/projections/deployments"
)

// controlOptions are the flags of the deployment control plane.
type controlOptions struct {
	off          bool
	operatorKey  string // --nats-operator-key
	systemCreds  string // --nats-system-creds
	pollInterval time.Duration
	ackWait      time.Duration
	workers      int
	publicURL    string // the external base URL of custom_url; "" is http://<the address served on>
}

// addControlFlags adds serve's control-plane flags.
func addControlFlags(f *pflag.FlagSet, c *controlOptions) {
	f.BoolVar(&c.off, "no-control-plane", false, "do not serve the deployment control plane (/v2/deployments, /v2/listeners, /v1/integrations)")
	f.DurationVar(&c.pollInterval, "build-poll-interval", 30*time.Second, "how often the refs of build_on_push deployments are checked for new commits (0: never)")
	f.DurationVar(&c.ackWait, "control-ack-wait", 10*time.Second, "how soon another process takes over the revision pipeline steps of a process that died (renewed every third of it)")
	f.IntVar(&c.workers, "control-workers", 4, "deployments whose pipeline steps this process works on at once")
	f.StringVar(&c.operatorKey, "nats-operator-key", "", "with --nats-url: the operator's signing key (an SO... seed file) of a NATS cluster in operator mode, so that git_host deployments get an account each on it (see `jetgraph nats init`)")
	f.StringVar(&c.systemCreds, "nats-system-creds", "", "with --nats-operator-key: credentials of a system account user, which pushes the deployments' accounts to the cluster's resolver")
	f.Var(checked(&c.publicURL, "", func(v string) error { _, err := parsePublicURL(v); return err }), "public-url",
		"the server's external base URL (behind a proxy: https://host[/prefix]), the base of every deployment's custom_url (default: http://<--addr>)")
}

// parsePublicURL checks --public-url: an http or https URL with a host, no query or fragment;
// it returns it without a trailing slash ("" stays "").
func parsePublicURL(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return "", fmt.Errorf("%q: %w", v, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("%q: want an http:// or https:// URL", v)
	case u.Host == "":
		return "", fmt.Errorf("%q: no host", v)
	case strings.ContainsAny(v, "?#") || u.User != nil: // "?" and "#" alone too: custom_url appends a path
		return "", fmt.Errorf("%q: no query, fragment or credentials in a public URL", v)
	}
	return strings.TrimRight(v, "/"), nil
}

// AdminKeyEnv names the environment variable that sets the admin API key instead of the one
// generated on first start (automation).
const AdminKeyEnv = "JETGRAPH_ADMIN_KEY"

// ControlPlaneEnv is what the pipeline's ports are built from.
type ControlPlaneEnv struct {
	Log    *eventlog.Log
	Data   string // the data folder
	Addr   string // the HTTP address the server listens on
	Logger *slog.Logger
	// OperatorKey and SystemCreds make deployments' namespaces on an external NATS cluster in
	// operator mode (--nats-operator-key, --nats-system-creds).
	OperatorKey, SystemCreds string
	// TraceKeys, when set, mints the keys with which the deployments' processes send their
	// traces to this server's tracing API (http://<Addr>/tracing); nil: they keep them.
	TraceKeys supervise.TraceKeys
	// PublicURL is the server's external base URL (--public-url), the base of custom_url;
	// "" is http://<Addr>.
	PublicURL string
}

// baseURL is the base of the deployments' custom_url.
func (env ControlPlaneEnv) baseURL() string {
	if env.PublicURL != "" {
		return env.PublicURL
	}
	return "http://" + env.Addr
}

// errNoNamespaces is why git_host deployments are refused on an external NATS without the
// operator's key.
const errNoNamespaces = "git_host deployments need a data namespace (a NATS account) of their own: this jetgraph runs on an external NATS (--nats-url) without --nats-operator-key and --nats-system-creds, so it cannot make accounts there"

// controlPlanePorts builds the builder, deployer, manifest publisher and ref watcher of the
// revision pipeline (engine/controlplane/build, supervise, manifests, watch), and what stops
// them. Deployments' data namespaces are accounts of the embedded server or, on an external
// NATS cluster, accounts the operator's key makes on it; without that key the builder and
// deployer are left out, and git_host deployments are refused at the command (unsupported is
// why), external_container ones (manifests) still work.
var controlPlanePorts = func(ctx context.Context, env ControlPlaneEnv) (ports controlplane.Ports, stop func(), unsupported string, err error) {
	ports = controlplane.Ports{Publisher: &manifests.Publisher{}, Watcher: watch.Git{}}
	var ns supervise.Namespaces
	closeNS := func() {}
	switch {
	case env.Log.Embedded():
		ns = supervise.EmbeddedAccounts{Log: env.Log}
	case env.OperatorKey == "" && env.SystemCreds == "":
		env.Logger.Warn("control plane: " + errNoNamespaces + "; only external_container deployments are served")
		return ports, closeNS, errNoNamespaces, nil
	case env.OperatorKey == "" || env.SystemCreds == "":
		return ports, nil, "", errors.New("--nats-operator-key and --nats-system-creds go together")
	default:
		op, err := eventlog.OpenOperator(env.Log.URLs(), env.OperatorKey, env.SystemCreds)
		if err != nil {
			return ports, nil, "", err
		}
		ns, closeNS = supervise.ClusterAccounts{Operator: op}, op.Close
	}
	b, s, err := revisionRunners(ctx, env.Log, ns, env.Data, env.baseURL())
	if err != nil {
		closeNS()
		return controlplane.Ports{}, nil, "", err
	}
	s.Logger = env.Logger
	if env.TraceKeys != nil {
		s.Traces = &supervise.TraceForwarding{URL: "http://" + env.Addr + "/tracing", Keys: env.TraceKeys}
	}
	ports.Builder, ports.Deployer = b, s
	return ports, func() { s.Close(); closeNS() }, "", nil
}

// ControlDBPath is where the control plane's projection file of a data folder lives.
func ControlDBPath(data string) string { return filepath.Join(data, "controlplane.db") }

// controlPlane is the control plane of a serving process: its projection, services, pipeline
// and HTTP routes.
type controlPlane struct {
	db     *projections.DB
	proj   *projections.Projector
	view   *deployments.View
	svc    *controlplane.Service
	keys   *keys.Service
	pipe   *controlplane.Pipeline
	routes *controlapi.Handlers
	logger *slog.Logger
	stop   func() // drains and stops the deployments' processes
	wg     sync.WaitGroup
}

// tracingProjects creates a deployment's tracing project with the tracing service.
type tracingProjects struct{ t *tracing.Service }

// EnsureProject creates the project of that name for tenant, or finds it.
func (tp tracingProjects) EnsureProject(ctx context.Context, tenant, name string) error {
	_, err := tp.t.CreateProject(engine.WithTenant(ctx, tenant), name, nil, nil, true)
	return err
}

// openControlPlane opens the control projection file and builds the control plane on l.
func openControlPlane(ctx context.Context, o *options, l *eventlog.Log, data, addr string, tr *tracing.Service) (*controlPlane, error) {
	db, err := projections.OpenDB(ControlDBPath(data), o.logger)
	if err != nil {
		return nil, err
	}
	db.SyncAlways(o.sync == "always")
	public, err := parsePublicURL(o.control.publicURL)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("--public-url %w", err)
	}
	// The secrets' key: the environment's, else the data folder's file, made on first start.
	ring, err := seal.Load(data, os.Getenv)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("control plane: secrets key: %w", err)
	}
	if o.natsURL != "" && os.Getenv(seal.KeyEnv) == "" {
		// Each process of a cluster seals with its keyring: one whose key file differs from the
		// others' cannot open their deployments' secrets (their rollouts fail naming the key).
		o.logger.Warn("control plane: the secrets key is this data folder's; every process on this NATS needs the same keyring: set "+seal.KeyEnv+" on all of them, or copy the file",
			"key_file", filepath.Join(data, seal.KeyFileName), "key_id", ring.CurrentID())
	}
	c := &controlPlane{db: db, view: deployments.New(db), logger: o.logger}
	c.view.SealSecrets(ring)
	c.proj = projections.NewProjector(db, l, eventlog.ControlStream, c.view)
	c.keys = keys.New(l, c.proj, c.view)
	env := ControlPlaneEnv{Log: l, Data: data, Addr: addr, PublicURL: public, Logger: o.logger,
		OperatorKey: o.control.operatorKey, SystemCreds: o.control.systemCreds}
	var projects controlplane.ProjectCreator
	if tr != nil {
		// The tracing API takes the control plane's keys, and the deployments' processes send
		// their traces there, into the project of the deployment's name, with a key of its tenant.
		projects = tracingProjects{tr}
		tr.UseKeys(c.keys)
		env.TraceKeys = c.keys
	}
	ports, stop, unsupported, err := controlPlanePorts(ctx, env)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("control plane: %w", err)
	}
	c.stop = stop
	var urls func(string) string
	var proxy = ports.Deployer
	if proxy != nil {
		urls = ports.Deployer.CustomURL
	}
	c.svc = controlplane.NewService(l, c.proj, c.view, projects, urls)
	c.svc.SealSecrets(ring)
	if unsupported != "" {
		c.svc.RefuseGitHost(unsupported)
	}
	c.svc.CheckComputeConfig(func(raw []byte, loc ...any) error {
		_, err := manifests.ParseComputeConfig(raw, loc...)
		return err
	})
	c.pipe = controlplane.NewPipeline(l, c.proj, c.view, c.svc, ports, controlplane.PipelineConfig{
		AckWait: o.control.ackWait, PollInterval: o.control.pollInterval, Workers: o.control.workers, Logger: o.logger})
	if proxy != nil {
		c.routes = controlapi.New(c.svc, c.keys, l, proxy.Proxy())
	} else {
		c.routes = controlapi.New(c.svc, c.keys, l, nil)
	}
	return c, nil
}

// start runs the projector, makes the admin key on first start (printing it to stderr once),
// and starts the pipeline, until ctx ends.
func (c *controlPlane) start(ctx context.Context, stderr io.Writer) error {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for ctx.Err() == nil {
			if err := c.proj.Run(ctx); err != nil && ctx.Err() == nil {
				c.logger.Error("control projector stopped, restarting", "err", err)
				_ = engine.Sleep(ctx, time.Second)
			}
		}
	}()
	key, err := c.keys.EnsureAdmin(ctx, os.Getenv(AdminKeyEnv))
	if err != nil {
		return fmt.Errorf("control plane: admin key: %w", err)
	}
	if key != "" {
		// Printed, never logged: this is the only time the key is seen in clear text.
		fmt.Fprintf(stderr, "\njetgraph control plane admin API key (shown once; store it now, use it as X-Api-Key):\n\n    %s\n\n", key)
	}
	return c.pipe.Start(ctx)
}

// close waits for the projector and the pipeline once ctx ended, drains and stops the
// deployments' processes, then closes the file.
func (c *controlPlane) close() {
	c.pipe.Wait()
	c.wg.Wait()
	c.stop()
	_ = c.db.Close()
}
