package eventlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
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
)

// DefaultOutputRetention is how long run output is kept when Config.OutputRetention is 0.
const DefaultOutputRetention = 2 * time.Minute

// DefaultTraceRetention is how long trace events are kept when Config.TraceRetention is 0.
const DefaultTraceRetention = 30 * 24 * time.Hour

// streamKinds maps each stream to the aggregate kinds stored in it.
var streamKinds = map[string][]string{
	RuntimeStream: {"thread", "assistant", "store", "system"},
	TraceStream:   {"trace", "trace_project"},
	OutputStream:  {"out"},
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
	// Listen exposes the embedded server on host:port; empty keeps it in-process only.
	Listen string
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
}

// Log is an open event log.
type Log struct {
	cfg     Config
	srv     *server.Server // nil when connected to external servers
	nc      *nats.Conn
	js      jetstream.JetStream
	streams map[string]jetstream.Stream
	log     *slog.Logger

	// appendObserver, when set, is told the duration of each append (metrics).
	appendObserver atomic.Pointer[func(time.Duration)]

	// bnc and bjs carry the object stores' traffic (blobs.go, ObjectStore).
	bnc *nats.Conn
	bjs jetstream.JetStream

	blobsMu sync.Mutex
	blobs   map[string]jetstream.ObjectStore // by stream: see blobs.go
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
	l := &Log{cfg: cfg, streams: map[string]jetstream.Stream{}, log: cfg.Logger, blobs: map[string]jetstream.ObjectStore{}}
	var err error
	if cfg.URLs == "" {
		if l.srv, err = startEmbedded(cfg); err != nil {
			return nil, err
		}
	}
	// Large bodies travel on a connection of their own: tens of megabytes of object chunks never
	// hold up, behind them on one connection, the appends and lease renewals of the runs.
	if l.nc, err = l.connect("jetgraph"); err == nil {
		l.bnc, err = l.connect("jetgraph-blobs")
	}
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("eventlog: connect: %w", err)
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
	return l, nil
}

// connect opens a connection to the embedded server (in-process) or to cfg.URLs.
func (l *Log) connect(name string) (*nats.Conn, error) {
	if l.srv != nil {
		return nats.Connect("", nats.InProcessServer(l.srv), nats.Name(name))
	}
	return nats.Connect(strings.Join(strings.Fields(strings.ReplaceAll(l.cfg.URLs, ",", " ")), ","),
		nats.Name(name), nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true),
		nats.ReconnectWait(250*time.Millisecond))
}

func startEmbedded(cfg Config) (*server.Server, error) {
	opts := &server.Options{
		ServerName:         "jetgraph",
		JetStream:          true,
		StoreDir:           filepath.Join(cfg.Dir, "nats"),
		DontListen:         cfg.Listen == "",
		NoSigs:             true,
		NoLog:              true,
		SyncAlways:         cfg.SyncAlways,
		JetStreamMaxMemory: -1,
		JetStreamMaxStore:  -1,
	}
	if cfg.Listen != "" {
		host, port, err := splitHostPort(cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("eventlog: --nats-listen %q: %w", cfg.Listen, err)
		}
		opts.Host, opts.Port = host, port
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
			Duplicates:         2 * time.Minute,
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
			sc.MaxAge = l.cfg.outputMaxAge()
			sc.Duplicates = min(sc.Duplicates, sc.MaxAge)
		}
		s, err := l.js.CreateOrUpdateStream(ctx, sc)
		if err != nil {
			return fmt.Errorf("eventlog: create stream %s: %w", name, err)
		}
		l.streams[name] = s
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

// Embedded reports whether the log runs an in-process server.
func (l *Log) Embedded() bool { return l.srv != nil }

// ClientURL is the address other processes use to reach the embedded server, when it listens.
func (l *Log) ClientURL() string {
	if l.srv == nil || l.cfg.Listen == "" {
		return ""
	}
	return l.srv.ClientURL()
}

// JetStream exposes the JetStream context for the parts of jetgraph that need KV or object stores.
func (l *Log) JetStream() jetstream.JetStream { return l.js }

// ObjectStore returns the object store bucket, creating it (file storage, the log's replicas) if
// it does not exist yet. Creating an existing bucket with the same config changes nothing. Its
// traffic goes on the log's connection for large bodies.
func (l *Log) ObjectStore(ctx context.Context, bucket string) (jetstream.ObjectStore, error) {
	obs, err := l.bjs.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket:   bucket,
		Storage:  jetstream.FileStorage,
		Replicas: l.cfg.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("eventlog: object store %s: %w", bucket, err)
	}
	return obs, nil
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
}

// Replicas is the replica count of the log's streams, for other JetStream resources to match.
func (l *Log) Replicas() int { return l.cfg.Replicas }
