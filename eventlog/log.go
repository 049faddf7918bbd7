package eventlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/jetgraph/jetgraph/eventlog/internal/raw"
)

// Stream names. Streams are split by bounded context so that heavy traffic in one (traces) never
// slows another (runs and checkpoints).
const (
	// RuntimeStream holds threads (and the runs and checkpoints on them), assistants, store items,
	// and the system events about them all (a truncation).
	RuntimeStream = "JG_RUNTIME"
	// TraceStream holds LLM traces (runs and feedback, one aggregate per trace) and tracing
	// projects. It is the only stream whose events expire: see Config.TraceRetention.
	TraceStream = "JG_TRACE"
	// OutputStream holds what runs stream (tokens, values, updates, ...), one subject per run,
	// out.<tenant>.<thread_id>.<run_id>, so that any process can serve, join or resume a run's
	// stream. Its messages expire after Config.OutputRetention.
	OutputStream = "JG_OUTPUT"
	// ControlStream holds the deployment control plane: deployments (and their revisions),
	// listeners and API keys. Its events never expire.
	ControlStream = "JG_CONTROL"
)

// DefaultOutputRetention is how long run output is kept when Config.OutputRetention is 0.
const DefaultOutputRetention = 2 * time.Minute

// outputDuplicates is the output stream's duplicate window.
const outputDuplicates = time.Minute

// duplicates is the duplicate window of the streams of events: an append's id is remembered this
// long, so an append sent again (publish, for at most publishFor) is stored once. The server
// keeps every id of the window in memory, about 100 bytes each: at a thousand runs a second and
// five messages a run, 30 seconds of them is 15 MB, where two minutes was 60 (issue 28, memory).
const duplicates = 30 * time.Second

// DefaultTraceRetention is how long trace events are kept when Config.TraceRetention is 0.
const DefaultTraceRetention = 30 * 24 * time.Hour

// streamKinds maps each stream to the aggregate kinds stored in it.
var streamKinds = map[string][]string{
	RuntimeStream: {"thread", "assistant", "store", "system", "cron"},
	TraceStream:   {"trace", "trace_project"},
	OutputStream:  {"out"},
	ControlStream: {"deploy", "listener", "apikey"},
}

// StreamOf returns the stream that holds events of an aggregate kind.
func StreamOf(kind string) (string, error) {
	for s, kinds := range streamKinds {
		for _, k := range kinds {
			if k == kind {
				return s, nil
			}
		}
	}
	return "", fmt.Errorf("eventlog: no stream for aggregate kind %q", kind)
}

// Config says where the log lives.
type Config struct {
	// Dir is the folder of the embedded server's store. Unused with URLs.
	Dir string
	// URLs of external NATS servers (comma-separated form accepted). Empty: embedded server.
	URLs string
	// Listen exposes the embedded server on host:port; empty keeps it in-process only. The
	// server then admits only the holder of the key in CredsFile(Dir), generated on first use.
	Listen string
	// Accounts lets the embedded server (which must listen) hold data namespaces for other
	// processes: see AddAccount. Its own log stays in the global account.
	Accounts bool
	// JetgraphListener says that the listener (with Accounts) is there for jetgraph processes
	// only, the control plane's deployments and commands, not for other programs (as
	// --nats-listen is). With SyncAlways the store is then synced in rounds that its clients
	// wait for, and clients that do not say they wait are refused: see durable.go.
	JetgraphListener bool
	// Creds authenticates the connection to URLs: a NATS credentials file, or the user key file
	// of a listening embedded server (CredsFile of its data folder).
	Creds string
	// Replicas of each stream: 1, or 3 on a cluster.
	Replicas int
	// SyncAlways makes the embedded server fsync every write instead of every SyncInterval.
	SyncAlways bool
	// Logger receives the log's own messages; nil is slog.Default().
	Logger *slog.Logger
	// TraceRetention is the maximum age of the trace stream's events: 0 is
	// DefaultTraceRetention, a negative value keeps them forever.
	TraceRetention time.Duration
	// OutputRetention is the maximum age of the output stream's messages (resumable run
	// streams): 0 is DefaultOutputRetention.
	OutputRetention time.Duration
	// Existing uses the streams as they are, neither creating nor updating them: a command
	// connecting to a running server's log leaves the server's stream settings alone (its
	// retentions, replicas).
	Existing bool
}

// Log is an open event log.
type Log struct {
	cfg     Config
	srv     *server.Server // nil when connected to external servers
	nc      *nats.Conn
	js      jetstream.JetStream
	streams map[string]jetstream.Stream
	log     *slog.Logger
	// known holds, per stream (filled at Open, read-only after), the highest sequence this
	// process knows the stream holds: its last at Open, then each append it acknowledged.
	known map[string]*atomic.Uint64

	// reconnects is closed and replaced whenever the connection is made again (to another
	// server of a cluster, say): subscriptions then check that their consumers survived.
	reconnectMu sync.Mutex
	reconnects  chan struct{}

	// appendObserver, when set, is told the duration of each append (metrics).
	appendObserver atomic.Pointer[func(time.Duration)]

	// bnc and bjs carry the object stores' traffic (blobs.go, objects.go).
	bnc *nats.Conn
	bjs jetstream.JetStream

	blobsMu sync.Mutex
	blobs   map[string]jetstream.ObjectStore // by stream: see blobs.go

	auth *accountAuth // with Config.Accounts: see accounts.go

	// durable, with SyncAlways on an embedded server whose every client waits for its rounds,
	// syncs the store before an append returns (durable.go); nil otherwise.
	durable *groupSync
	// remote, on a log connected to URLs, waits for the rounds of a server that syncs so
	// (durable.go).
	remote *remoteSync

	// leases are the in-process leases of an exclusive log, by bucket (leases_local.go).
	leasesMu sync.Mutex
	leases   map[string]*localLeases
	// ownerStop ends the renewals of an exclusive log's owner mark; ownerDone is closed then.
	ownerStop, ownerDone chan struct{}
}

// Open starts the embedded server or connects to cfg.URLs, and creates the streams if needed.
func Open(ctx context.Context, cfg Config) (*Log, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.Replicas != 1 && cfg.Replicas != 3 {
		return nil, fmt.Errorf("eventlog: open: replicas must be 1 or 3, not %d", cfg.Replicas)
	}
	l := &Log{cfg: cfg, streams: map[string]jetstream.Stream{}, known: map[string]*atomic.Uint64{}, log: cfg.Logger,
		blobs: map[string]jetstream.ObjectStore{}, reconnects: make(chan struct{})}
	// Large bodies travel on a connection of their own: tens of megabytes of object chunks never
	// hold up, behind them on one connection, the appends and lease renewals of the runs.
	var err error
	if cfg.URLs == "" {
		if cfg.grouped() {
			l.durable = newGroupSync(filepath.Join(cfg.Dir, "nats"))
		}
		l.nc, l.bnc, err = l.openEmbedded()
	} else if l.nc, err = connect(cfg, "jetgraph"+syncRoundsName, l.onReconnect); err == nil {
		l.remote = &remoteSync{nc: l.nc}
		l.bnc, err = connect(cfg, "jetgraph-blobs"+syncRoundsName, func() {})
	}
	if err != nil {
		l.Close()
		return nil, err
	}
	if l.js, err = jetstream.New(l.nc); err == nil {
		l.bjs, err = jetstream.New(l.bnc)
	}
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("eventlog: jetstream: %w", err)
	}
	if err := l.ensureStreams(ctx); err != nil {
		l.Close()
		return nil, err
	}
	if l.exclusive() && cfg.Listen != "" {
		if err := l.markOwner(ctx); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// grouped reports whether the embedded server's store is synced in rounds its clients wait for
// (durable.go), instead of by the server at every write: with SyncAlways, when nothing but
// jetgraph processes that wait for the rounds can write to it (no listener, or the control
// plane's).
func (c Config) grouped() bool {
	return c.URLs == "" && c.SyncAlways && (c.Listen == "" || c.Accounts && c.JetgraphListener)
}

// Reconnection to a cluster: a lost server is replaced by another at once (every URL given and
// every server the cluster announces is tried, forever), and a server that stopped answering
// without closing the connection is noticed within a few seconds.
const (
	reconnectWait = 250 * time.Millisecond
	pingInterval  = 2 * time.Second
	maxPingsOut   = 2
	connectWait   = 2 * time.Second
)

// connect opens a connection named name to cfg's servers. It does not wait for one to answer: a
// cluster that is still starting is connected to as soon as it can be. reconnected is called
// whenever the connection is made again.
func connect(cfg Config, name string, reconnected func()) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name(name), nats.ReconnectHandler(func(*nats.Conn) { reconnected() }), nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true),
		nats.ReconnectWait(reconnectWait), nats.ReconnectJitter(100*time.Millisecond, 100*time.Millisecond),
		nats.PingInterval(pingInterval), nats.MaxPingsOutstanding(maxPingsOut), nats.Timeout(connectWait),
		// No publish is buffered while the connection is down: the client would send it after
		// the reconnect, when its caller has long given up (a lease lost, another process
		// doing the step), and the write would land behind the caller's back. A publish while
		// disconnected fails at once, and the caller retries it knowing so.
		nats.ReconnectBufSize(-1),
	}
	if cfg.Creds != "" {
		opt, err := credsOption(cfg.Creds)
		if err != nil {
			return nil, err
		}
		opts = append(opts, opt)
	}
	nc, err := nats.Connect(strings.Join(strings.Fields(strings.ReplaceAll(cfg.URLs, ",", " ")), ","), opts...)
	if err != nil {
		return nil, fmt.Errorf("eventlog: connect: %w", err)
	}
	return nc, nil
}

// openEmbedded starts the embedded server and opens two in-process connections to it: the log's
// and the object stores'. A server that listens admits only the holder of the data folder's user
// key (see CredsFileName), this process too.
func (l *Log) openEmbedded() (nc, bnc *nats.Conn, err error) {
	var opts []nats.Option
	var key nkeys.KeyPair
	if l.cfg.Listen != "" {
		if key, err = listenerKey(l.cfg.Dir); err != nil {
			return nil, nil, err
		}
		opt, err := keyOption(key)
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, opt)
	}
	if l.cfg.Accounts {
		if l.cfg.Listen == "" {
			return nil, nil, errNoAccounts
		}
		pub, err := key.PublicKey()
		if err != nil {
			return nil, nil, fmt.Errorf("eventlog: NATS user key: %w", err)
		}
		// This process's own connections use a key of their own, made now: the data folder's
		// key may be refused until the sync rounds are served.
		self, err := nkeys.CreateUser()
		if err != nil {
			return nil, nil, fmt.Errorf("eventlog: NATS user key: %w", err)
		}
		selfPub, _ := self.PublicKey()
		l.auth = &accountAuth{owner: pub, self: selfPub, users: map[string]*server.Account{},
			grouped: l.durable != nil, log: l.log, imported: map[string]bool{}}
		if opts[0], err = keyOption(self); err != nil {
			return nil, nil, err
		}
	}
	if l.srv, err = startEmbedded(l.cfg, key, l.auth); err != nil {
		return nil, nil, err
	}
	opts = append(opts, nats.InProcessServer(l.srv))
	if nc, err = nats.Connect("", append(slices.Clip(opts), nats.Name("jetgraph"+syncRoundsName))...); err != nil {
		return nil, nil, fmt.Errorf("eventlog: connect: %w", err)
	}
	if bnc, err = nats.Connect("", append(slices.Clip(opts), nats.Name("jetgraph-blobs"+syncRoundsName))...); err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("eventlog: connect: %w", err)
	}
	if l.auth != nil && l.durable != nil {
		if err := l.serveSyncs(nc); err != nil {
			nc.Close()
			bnc.Close()
			return nil, nil, err
		}
		l.auth.ready.Store(true)
	}
	return nc, bnc, nil
}

func startEmbedded(cfg Config, key nkeys.KeyPair, auth *accountAuth) (*server.Server, error) {
	opts := &server.Options{
		ServerName: "jetgraph",
		JetStream:  true,
		StoreDir:   filepath.Join(cfg.Dir, "nats"),
		DontListen: cfg.Listen == "",
		NoSigs:     true,
		NoLog:      true,
		// With no client but jetgraph processes that wait for them, the store is synced in
		// rounds instead (durable.go); a server others write to syncs every write itself.
		SyncAlways:         cfg.SyncAlways && !cfg.grouped(),
		JetStreamMaxMemory: -1,
		JetStreamMaxStore:  -1,
	}
	if cfg.Listen != "" {
		host, port, err := splitHostPort(cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("eventlog: --nats-listen %q: %w", cfg.Listen, err)
		}
		opts.Host, opts.Port = host, port
		if auth != nil {
			// The accounts' users come and go while the server runs: a check of our own
			// admits them, the data folder's key (this process) as before.
			opts.CustomClientAuthentication, opts.AlwaysEnableNonce = auth, true
		} else if err := requireKey(opts, key); err != nil {
			return nil, err
		}
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("eventlog: embedded server: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, errors.New("eventlog: embedded server did not start within 30s")
	}
	return srv, nil
}

func (l *Log) ensureStreams(ctx context.Context) error {
	for name, kinds := range streamKinds {
		subjects := make([]string, len(kinds))
		for i, k := range kinds {
			subjects[i] = k + ".>"
		}
		sc := jetstream.StreamConfig{
			Name:               name,
			Subjects:           subjects,
			Storage:            jetstream.FileStorage,
			Replicas:           l.cfg.Replicas,
			Duplicates:         duplicates,
			AllowAtomicPublish: true,
			AllowDirect:        true,
			// Projections and replay need every event: nothing is ever discarded by age, but
			// traces, which are bounded by TraceRetention.
			Retention: jetstream.LimitsPolicy,
		}
		if name == TraceStream {
			sc.MaxAge = l.cfg.traceMaxAge()
		}
		if name == OutputStream {
			// Output is re-read only to resume a stream; the duplicate window may not exceed it.
			// A message is sent again for at most half a minute (its acknowledgement lost in a
			// failover): a minute of ids is enough to store it once.
			sc.MaxAge = l.cfg.outputMaxAge()
			sc.Duplicates = min(outputDuplicates, sc.MaxAge)
		}
		// A cluster that is still forming is waited for, as long as ctx lets.
		var s jetstream.Stream
		what := "create stream " + name
		if l.cfg.Existing {
			what = "open stream " + name
		}
		err := l.Retry(ctx, what, func(ctx context.Context) error {
			var err error
			if l.cfg.Existing {
				s, err = l.js.Stream(ctx, name)
				return err
			}
			s, err = l.js.CreateOrUpdateStream(ctx, sc)
			return err
		})
		if err != nil {
			return err
		}
		l.streams[name] = s
		l.known[name] = new(atomic.Uint64)
		l.known[name].Store(s.CachedInfo().State.LastSeq)
	}
	return nil
}

// traceMaxAge is the trace stream's MaxAge: 0 (no limit) when retention is negative.
func (c Config) traceMaxAge() time.Duration {
	switch {
	case c.TraceRetention == 0:
		return DefaultTraceRetention
	case c.TraceRetention < 0:
		return 0
	}
	return c.TraceRetention
}

// outputMaxAge is the output stream's MaxAge.
func (c Config) outputMaxAge() time.Duration {
	if c.OutputRetention <= 0 {
		return DefaultOutputRetention
	}
	return c.OutputRetention
}

// onReconnect tells the subscriptions that the connection was made again.
func (l *Log) onReconnect() {
	l.reconnectMu.Lock()
	defer l.reconnectMu.Unlock()
	close(l.reconnects)
	l.reconnects = make(chan struct{})
}

// reconnected returns a channel closed at the next reconnection.
func (l *Log) reconnected() <-chan struct{} {
	l.reconnectMu.Lock()
	defer l.reconnectMu.Unlock()
	return l.reconnects
}

// ServerMessagesIn is the number of messages the embedded server has received from its clients
// (appends, acknowledgements, API requests, key-value operations), for benchmarks that count per
// run; false on a log without an embedded server.
func (l *Log) ServerMessagesIn() (int64, bool) {
	if l.srv == nil {
		return 0, false
	}
	v, err := l.srv.Varz(nil)
	if err != nil {
		return 0, false
	}
	return v.InMsgs, true
}

// Embedded reports whether the log runs an in-process server.
func (l *Log) Embedded() bool { return l.srv != nil }

// ClientURL is the address other processes use to reach the embedded server, when it listens.
func (l *Log) ClientURL() string {
	if l.srv == nil || l.cfg.Listen == "" {
		return ""
	}
	return l.srv.ClientURL()
}

// Healthy returns nil when the connection is up and JetStream answers.
func (l *Log) Healthy(ctx context.Context) error {
	if l.nc == nil || !l.nc.IsConnected() {
		return errors.New("eventlog: not connected")
	}
	if _, err := l.js.AccountInfo(ctx); err != nil {
		return fmt.Errorf("eventlog: jetstream: %w", err)
	}
	return nil
}

// LastSeq returns the sequence of the newest event in stream.
func (l *Log) LastSeq(ctx context.Context, stream string) (uint64, error) {
	s, ok := l.streams[stream]
	if !ok {
		return 0, fmt.Errorf("eventlog: last seq: unknown stream %q", stream)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("eventlog: last seq of %s: %w", stream, err)
	}
	return info.State.LastSeq, nil
}

// StreamCreated returns when stream was created; projections use it to notice a log that was
// wiped and created anew under them.
func (l *Log) StreamCreated(ctx context.Context, stream string) (time.Time, error) {
	s, ok := l.streams[stream]
	if !ok {
		return time.Time{}, fmt.Errorf("eventlog: stream created: unknown stream %q", stream)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("eventlog: info of %s: %w", stream, err)
	}
	return info.Created, nil
}

// ObserveAppends registers f to be told how long each append took.
func (l *Log) ObserveAppends(f func(time.Duration)) { l.appendObserver.Store(&f) }

// Close drains the connection and shuts the embedded server down, flushing its store.
func (l *Log) Close() {
	if l.ownerStop != nil {
		close(l.ownerStop)
		<-l.ownerDone
		l.ownerStop = nil
	}
	for _, nc := range []*nats.Conn{l.nc, l.bnc} {
		if nc != nil {
			_ = nc.Drain()
			nc.Close()
		}
	}
	if l.srv != nil {
		l.srv.Shutdown()
		l.srv.WaitForShutdown()
	}
	if l.durable != nil {
		l.durable.close()
	}
}

// MaxPayload is the largest message the server takes, in bytes (NATS's default, 1 MiB, until
// the connection knows).
func (l *Log) MaxPayload() int {
	if mp := l.nc.MaxPayload(); mp > 0 {
		return int(mp)
	}
	return 1 << 20
}

// Replicas is the replica count of the log's streams, for other JetStream resources to match.
func (l *Log) Replicas() int { return l.cfg.Replicas }

func init() { raw.JetStream = func(l any) jetstream.JetStream { return l.(*Log).js } }

// URLs is the external servers' address the log was opened with (Config.URLs), "" for the
// embedded server.
func (l *Log) URLs() string { return l.cfg.URLs }
