package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/hosting"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/webhooks"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/a2a"
	"github.com/jetgraph/jetgraph/httpapi/authn"
	"github.com/jetgraph/jetgraph/httpapi/tracingapi"
	"github.com/jetgraph/jetgraph/projections"
)

// logConfig turns the flags into the event log's configuration.
func logConfig(o *options) eventlog.Config {
	return eventlog.Config{
		Dir: o.data, URLs: o.natsURL, Listen: o.natsListen, Creds: o.natsCreds, Replicas: o.replicas, SyncAlways: o.sync == "always",
		TraceRetention: o.trace.logRetention(), OutputRetention: o.streamRetention, Logger: o.logger,
	}
}

// serveInfo is written to <data>/serve.json so that other commands find the running server.
type serveInfo struct {
	PID     int    `json:"pid"`
	Addr    string `json:"addr"`
	NATSURL string `json:"nats_url,omitempty"`
	Version string `json:"version"`
}

func serveInfoPath(data string) string { return filepath.Join(data, "serve.json") }

// serve runs the platform until ctx ends or a SIGINT or SIGTERM, then stops gracefully.
func serve(ctx context.Context, o *options) error {
	tuneGC(ctx)
	logger, grace, version := o.logger, o.gracePeriod, o.prog.Version
	lc := logConfig(o)
	if !o.control.off {
		lc = withDeploymentNamespaces(lc) // deployments' data namespaces are accounts of the embedded server
	}
	proj, err := servedProject(o)
	if err != nil {
		return err
	}
	reg := proj.Graphs
	// Listening comes first: the hosts are told where jetgraph's tracing API is.
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.addr, err)
	}
	defer ln.Close()
	var hostTracing *hosting.Tracing
	if !o.trace.noSelfTrace {
		if hostTracing, err = hostTracingOf(ln.Addr()); err != nil {
			return err
		}
	}
	var appCode *graphs.Code
	if proj.HTTP != nil {
		appCode = proj.HTTP.App
	}
	if proj.Auth != nil && o.auth.methods != "" && o.auth.methods != authNone {
		return fmt.Errorf("%s: auth.path (your auth handler) decides who every request is: it cannot go with --auth %s (drop one of them)", o.config, o.auth.methods)
	}
	if err := o.checkProgramAuth(proj.Auth != nil); err != nil {
		return err
	}
	hosts, customApp, userAuth, err := hosting.AttachProject(reg, appCode, proj.Auth, hosting.Options{Python: o.python, Node: o.node, PoolSize: o.hostPool, Logger: logger, Tracing: hostTracing})
	if err != nil {
		return err
	}
	defer func() {
		for _, h := range hosts {
			h.Close()
		}
	}()
	if userAuth != nil { // the API never serves a request its handler cannot judge
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := userAuth.WaitLoaded(wctx)
		cancel()
		if err != nil {
			return fmt.Errorf("%s: auth.path: %w", o.config, err)
		}
	}
	storeIndex, err := o.store.index(proj, o.config)
	if err != nil {
		return err
	}
	if o.store.embed != "" && proj.StoreIndex != nil {
		logger.Warn(o.config + ": store.index: --store-embed " + o.store.embed + " is used instead")
	}
	data, err := filepath.Abs(o.data)
	if err != nil {
		return err
	}
	lock, err := lockData(data)
	if err != nil {
		return err
	}
	defer lock.release()

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	defaultTTL, sweep := threadTTL(proj)
	metrics := httpapi.NewMetrics()
	fields, err := webhooks.ParseFields(o.webhookFields) // checked by the flag already
	if err != nil {
		return fmt.Errorf("--webhook-fields: %w", err)
	}
	hooks, err := webhooks.New(webhooks.Config{Disabled: o.webhooksDisabled || (proj.HTTP != nil && proj.HTTP.DisableWebhooks), Fields: fields, Logger: logger})
	if err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	tracingConfig := o.trace.platform(version)
	if hostTracing != nil {
		tracingConfig.Service.ProcessKeys = map[string]string{hostTracing.Key: engine.DefaultTenant}
	}
	p, err := platform.Open(ctx, platform.Config{
		Data: data, Log: lc, Graphs: reg, Logger: logger, Tracing: tracingConfig,
		Runs: runs.Config{Concurrency: o.workers, RunTimeout: o.runTimeout, LeaseTTL: o.leaseTTL,
			AckWait: o.ackWait, Webhooks: hooks, Logger: logger},
		ShutdownGrace: grace, StoreIndex: storeIndex, ThreadTTL: defaultTTL, SweepInterval: sweep,
	}, nil)
	if err != nil {
		return err
	}
	defer p.Close()
	registerPlatformMetrics(metrics.Registry, p)
	registerTraceMetrics(metrics.Registry, p)
	if err := p.Start(ctx); err != nil {
		return err
	}

	deps := httpapi.Deps{
		Threads: p.Threads, Assistants: p.Assistants, Store: p.Store, Crons: p.Crons, Events: p.Log, Tracing: tracingapi.New(p.Tracing),
		Health: hostsHealth(p.Health, hosts), Metrics: metrics, CORSOrigins: splitList(o.corsOrigins), Logger: logger, Graphs: p.Graphs, Runner: p.Runner, Streams: httpapi.StreamsOf(p.Streams), Outputs: p.Streams, Runs: p.Runs, Pprof: o.pprof,
		Info: serverInfo(version, nil), InfoNow: func() map[string]any { return serverInfo(version, hosts) }, HTTP: proj.HTTP,
	}
	if customApp != nil {
		deps.App = customApp
	}
	if !o.disableA2A {
		deps.A2A = a2a.New(a2a.Deps{Assistants: p.Assistants, Runs: p.Runs, States: p.Runner, Threads: p.Threads, Logger: logger})
	}
	if proj.HTTP != nil && proj.HTTP.ConfigurableHeaders != nil {
		deps.ConfigurableHeaders = *proj.HTTP.ConfigurableHeaders
	}
	var keyChecker authn.KeyChecker
	if !o.control.off {
		cctx, cancel := context.WithCancel(ctx)
		cp, err := openControlPlane(cctx, o, p.Log, data, ln.Addr().String(), p.Tracing)
		if err != nil {
			cancel()
			return err
		}
		defer cp.close()
		defer cancel()
		if err := cp.start(cctx, o.prog.Stderr); err != nil {
			return err
		}
		deps.ControlPlane = cp.routes
		keyChecker = cp.keys
	}
	var auth httpapi.Authenticator
	if userAuth != nil {
		auth = userAuth
		deps.AuthOpenAPI = proj.Auth.OpenAPI
		if proj.Auth.AllowAPIKeys {
			if keyChecker == nil {
				return fmt.Errorf("%s: auth.allow_langsmith_api_keys lets the control plane's API keys in beside your handler: it cannot go with --no-control-plane", o.config)
			}
			keys, err := authn.New(ctx, authn.Config{APIKeys: keyChecker})
			if err != nil {
				return err
			}
			auth = keysBeside{handler: userAuth, keys: keys}
		}
	} else if o.prog.Auth != nil {
		auth = programAuth{o.prog.Auth}
	} else if builtin, err := o.auth.authenticator(ctx, keyChecker, logger); err != nil {
		return err
	} else if builtin != nil {
		auth = builtin
	}
	if auth != nil {
		deps.Auth = auth
		logger.Info("the runtime API authenticates every request", "auth", strings.Join(auth.Methods(), ","))
	}
	warnIfOpen(logger, ln.Addr(), auth)
	if o.dev {
		deps.Truncate = p.Truncate
		logger.Warn("development mode: POST /internal/truncate empties the data")
	}
	srv := httpapi.New(deps)
	url := "http://" + ln.Addr().String()
	info := serveInfo{PID: os.Getpid(), Addr: ln.Addr().String(), NATSURL: p.Log.ClientURL(), Version: version}
	if raw, err := json.Marshal(info); err == nil {
		_ = os.WriteFile(serveInfoPath(data), raw, 0o644)
	}
	defer os.Remove(serveInfoPath(data))
	logger.Info("jetgraph ready", "url", url, "pid", info.PID, "data", data, "version", version,
		"nats", natsDescription(o, p.Log), "sync", o.sync, "graphs", strings.Join(reg.IDs(), ","))

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down", "grace_period", grace)
	// Runs stop being taken now, while HTTP drains: hosted runs stop at their next checkpoint,
	// Go runs may finish, all within the grace period; a run cut off is left to the next
	// process, which resumes it from its last checkpoint. The hosts stop after (deferred).
	for _, h := range hosts {
		h.Drain()
	}
	drained := make(chan struct{})
	go func() { defer close(drained); p.Runs.Shutdown(grace) }()
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err = srv.Shutdown(sctx)
	<-drained
	return err
}

// hostTracingOf is where the graph hosts send their traces: this server's tracing API on the
// address it listens on (loopback when it listens on every interface), with a key of this
// process's own.
func hostTracingOf(addr net.Addr) (*hosting.Tracing, error) {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return nil, fmt.Errorf("hosts' tracing address: %w", err)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.To4() == nil {
			host = "::1"
		}
	}
	key := make([]byte, 24)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("hosts' tracing key: %w", err)
	}
	return &hosting.Tracing{URL: "http://" + net.JoinHostPort(host, port) + "/tracing",
		Key: "jgh_" + base64.RawURLEncoding.EncodeToString(key)}, nil
}

// servedGraphs is the registry the flags ask for: the graphs of --config's graph.json, which
// may name the program's graphs and tools, or by default the program's graphs (jetgraph's: the
// example graphs and the react agent); --graphs keeps only the graphs it names.
func servedGraphs(o *options) (*graphs.Registry, error) {
	proj, err := servedProject(o)
	if err != nil {
		return nil, err
	}
	return proj.Graphs, nil
}

// servedProject is servedGraphs with what --config's file says of the server besides its
// graphs (nothing without --config).
func servedProject(o *options) (*graphs.Project, error) {
	proj := &graphs.Project{Graphs: o.prog.Graphs}
	if proj.Graphs == nil {
		proj.Graphs = graphs.Default()
	}
	if o.config != "" {
		var err error
		warn := func(msg string) { o.logger.Warn(msg) }
		if proj, err = (graphs.Catalog{Graphs: proj.Graphs, Tools: o.prog.Tools, Warn: warn}).LoadProject(o.config); err != nil {
			return nil, err // it names the file, the key and the reason
		}
		// The environment's value of a kept variable reaches the hosts: the file's is dropped.
		for _, name := range splitList(o.keepEnv) {
			delete(proj.Env, name)
			for _, e := range proj.Graphs.Hosted() {
				delete(e.Code.Env, name)
			}
		}
	}
	if names := splitList(o.graphs); len(names) > 0 {
		sel, err := proj.Graphs.Select(names)
		if err != nil {
			return nil, fmt.Errorf("--graphs: %w", err)
		}
		proj.Graphs = sel
	}
	return proj, nil
}

// threadTTL is the platform's default thread TTL and sweep interval from the config's
// checkpointer.ttl (none, and the platform's default interval, without one).
func threadTTL(proj *graphs.Project) (*engine.TTLSpec, time.Duration) {
	t := proj.ThreadTTL
	if t == nil {
		return nil, 0
	}
	var spec *engine.TTLSpec
	if t.Minutes > 0 {
		spec = &engine.TTLSpec{Strategy: "delete", Minutes: t.Minutes}
	}
	return spec, t.SweepInterval
}

func natsDescription(o *options, l *eventlog.Log) string {
	switch {
	case o.natsURL != "":
		return o.natsURL
	case l.ClientURL() != "":
		return "embedded, listening on " + l.ClientURL() + " (credentials: " + eventlog.CredsFile(o.data) + ")"
	}
	return "embedded, in-process"
}

// registerPlatformMetrics exposes the log's append latency and the projection lag.
func registerPlatformMetrics(reg *prometheus.Registry, p *platform.Platform) {
	appendLatency := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "jetgraph_log_append_duration_seconds", Help: "Time to append an event or batch to the log.",
		Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .05, .25},
	})
	p.Log.ObserveAppends(func(d time.Duration) { appendLatency.Observe(d.Seconds()) })
	applied := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "jetgraph_projection_events_applied_total", Help: "Events folded into the projections.",
	})
	batch := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "jetgraph_projection_batch_events", Help: "Events folded per projection transaction.",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 2000},
	})
	applyTime := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "jetgraph_projection_apply_duration_seconds", Help: "Time to fold and commit one projection transaction.",
		Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .05, .25, 1},
	})
	p.Runtime.OnApply = func(n int, d time.Duration) {
		applied.Add(float64(n))
		batch.Observe(float64(n))
		applyTime.Observe(d.Seconds())
	}
	lag := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "jetgraph_projection_lag_events", Help: "Events in the log not yet applied by the local projections.",
		ConstLabels: prometheus.Labels{"stream": eventlog.RuntimeStream},
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		last, err := p.Log.LastSeq(ctx, eventlog.RuntimeStream)
		if err != nil {
			return -1
		}
		return float64(last) - float64(p.Runtime.Applied())
	})
	reg.MustRegister(appendLatency, applied, batch, applyTime, lag, haltedGauge(eventlog.RuntimeStream, p.Runtime))
	registerRunMetrics(reg, p.RunsView)
}

// registerRunMetrics exposes the runs as the runs projection folds them (every process folds
// every run of the log, so each process's figures are the cluster's since it started): runs
// created and ended (by status), how long they ran, and those pending (the queue) and running now.
// The console's Overview charts them.
func registerRunMetrics(reg *prometheus.Registry, runs *projections.Runs) {
	created := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "jetgraph_runs_created_total", Help: "Runs created (folded into the runs projection since the process started).",
	})
	ended := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "jetgraph_runs_ended_total", Help: "Runs ended, by final status (success, error, timeout, interrupted).",
	}, []string{"status"})
	duration := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "jetgraph_run_duration_seconds", Help: "Time from a run's (last attempt's) start to its end.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
	})
	runs.OnRunCreated = created.Inc
	runs.OnRunEnded = func(status string, ran time.Duration) {
		ended.WithLabelValues(status).Inc()
		if ran > 0 {
			duration.Observe(ran.Seconds())
		}
	}
	pending := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "jetgraph_runs_pending", Help: "Runs created and not started yet: the queue.",
	}, func() float64 { p, _ := runs.LiveCounts(); return float64(p) })
	running := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "jetgraph_runs_running", Help: "Runs being executed.",
	}, func() float64 { _, r := runs.LiveCounts(); return float64(r) })
	reg.MustRegister(created, ended, duration, pending, running)
}

// haltedGauge is 1 once the projector of stream has stopped at an event a fold refused (see
// projections.Projector.Halted), 0 before.
func haltedGauge(stream string, pr *projections.Projector) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "jetgraph_projection_halted", Help: "1 when a fold refused an acknowledged event and the projection stopped there (see the ERROR log).",
		ConstLabels: prometheus.Labels{"stream": stream},
	}, func() float64 {
		if pr.Halted() != nil {
			return 1
		}
		return 0
	})
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// dataLock is an exclusive lock on a data folder: two processes must never share one embedded
// store or projection file.
type dataLock struct{ f *os.File }

// lockFile is the file of a data folder that serve and the other commands lock.
const lockFile = "LOCK"

func lockData(data string) (*dataLock, error) {
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, fmt.Errorf("data folder %s: %w", data, err)
	}
	f, err := os.OpenFile(filepath.Join(data, lockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data folder %s: %w", data, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, errDataInUse{data: data}
	}
	return &dataLock{f: f}, nil
}

func (l *dataLock) release() {
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
}

type errDataInUse struct{ data string }

func (e errDataInUse) Error() string {
	return fmt.Sprintf("data folder %s is in use by another jetgraph process (give each process its own --data)", e.data)
}

// hostsHealth is health that also fails, naming the host and its graphs, while a graph host is
// not running (starting, or failing to start): its graphs cannot run then.
func hostsHealth(health func(context.Context) error, hosts []*hosting.Host) func(context.Context) error {
	if len(hosts) == 0 {
		return health
	}
	return func(ctx context.Context) error {
		if err := health(ctx); err != nil {
			return err
		}
		var errs []error
		for _, h := range hosts {
			if err := h.Health(); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) == 0 {
			return nil
		}
		err := errors.Join(errs...)
		return engine.E(engine.Op("health"), engine.Unavailable, err.Error(), err)
	}
}
