// Package tracing is the LLM tracing service that the official langsmith clients send their
// traces to: it validates ingested runs, feedback and attachments and appends them to the trace
// stream (one aggregate per trace), keeps attachments and oversized payloads in a JetStream
// object store, and answers run queries, statistics and projects from the trace projection.
//
// Ingestion answers as soon as the events are on the log: it never waits for the projection, so
// a burst of traces never slows the runtime, whose stream, projector and projection file are
// separate. Reads see what the trace projector has applied.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
	"github.com/jetgraph/jetgraph/projections/traces"
)

// Defaults of Config.
const (
	// DefaultSizeLimit is the request size the clients are told to stay under (/info).
	DefaultSizeLimit = 25165824
	// DefaultBatchLimit is the number of runs per request the clients are told (/info).
	DefaultBatchLimit = 100
	// maxFramingAllowance bounds what is accepted beyond SizeLimit (an eighth of it): the
	// clients count their payloads, not the multipart headers around them.
	maxFramingAllowance = 1 << 20
)

// Config tunes the service.
type Config struct {
	// Version is jetgraph's own version, reported by /info as jetgraph_version.
	Version string
	// SizeLimit is the advertised largest request body, in bytes; bodies (and decompressed
	// bodies) over SizeLimit plus an eighth (at most 1 MiB) for framing are refused (413).
	// 0: DefaultSizeLimit.
	SizeLimit int64
	// BatchLimit is the advertised number of runs per request. 0: DefaultBatchLimit.
	BatchLimit int
	// Retention is how long traces are kept (the trace stream's MaxAge); negative: forever.
	// 0: eventlog.DefaultTraceRetention.
	Retention time.Duration
	// APIKeys maps accepted x-api-key values to tenants. Empty (the single-user setup): every
	// key, or none, is the default tenant, but the keys of UseKeys (see Tenant).
	APIKeys map[string]string
	// ProcessKeys maps the keys jetgraph gives the processes it starts (its graph hosts'
	// langsmith library) to their tenants: accepted whatever else is, without making the
	// service refuse other keys as APIKeys does.
	ProcessKeys map[string]string
	Logger      *slog.Logger
}

// Service is the tracing service.
type Service struct {
	log     *eventlog.Log
	proj    *projections.Projector
	view    *traces.Traces
	objects *Objects
	cfg     Config
	logger  *slog.Logger
	clock   func() time.Time
	// maxEvent is the largest run payload kept in an event; larger ones go to the object store.
	maxEvent int
	// maxMessage bounds the events packed in one log message.
	maxMessage int
	// keys resolves the keys of UseKeys.
	keys atomic.Pointer[KeyResolver]
}

// New returns the service appending to l, reading view (kept by proj), and storing attachments
// and large payloads in objects.
func New(l *eventlog.Log, proj *projections.Projector, view *traces.Traces, objects *Objects, cfg Config) *Service {
	if cfg.SizeLimit <= 0 {
		cfg.SizeLimit = DefaultSizeLimit
	}
	if cfg.BatchLimit <= 0 {
		cfg.BatchLimit = DefaultBatchLimit
	}
	if cfg.Retention == 0 {
		cfg.Retention = eventlog.DefaultTraceRetention
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Service{log: l, proj: proj, view: view, objects: objects, cfg: cfg, logger: cfg.Logger, clock: time.Now}
	payload := l.MaxPayload()
	// Keep room for the envelopes, and keep events under the object-store threshold of the
	// design (512 KiB) so that a message carries several of them.
	s.maxEvent = min(512<<10, payload/2)
	s.maxMessage = payload - 64<<10
	return s
}

// APIVersion is the langsmith API version /info announces: the clients compare it with the
// version each of their features needs, and jetgraph serves the v1 ingestion and reads and the
// v2 run, trace and thread reads that their generation 0.16 introduced (the newer JS client
// warns below it). Features of later versions (address resolution, 0.18) are not served.
const APIVersion = "0.16.0"

// Ingestion tuning announced to the clients in batch_ingest_config. The Python client's sender
// reads every one of them without a default (it dies on a missing key).
const (
	// scaleUpQsizeTrigger is the queue length above which a client starts another sender.
	scaleUpQsizeTrigger = 200
	// scaleUpNthreadsLimit bounds the senders a client runs.
	scaleUpNthreadsLimit = 32
	// scaleDownNemptyTrigger is how many empty polls stop an extra sender.
	scaleDownNemptyTrigger = 4
)

// BatchIngestConfig is how the clients are told to batch what they send.
type BatchIngestConfig struct {
	UseMultipartEndpoint   bool  `json:"use_multipart_endpoint"`
	SizeLimit              int   `json:"size_limit"`
	SizeLimitBytes         int64 `json:"size_limit_bytes"`
	ScaleUpQsizeTrigger    int   `json:"scale_up_qsize_trigger"`
	ScaleUpNthreadsLimit   int   `json:"scale_up_nthreads_limit"`
	ScaleDownNemptyTrigger int   `json:"scale_down_nempty_trigger"`
}

// InstanceFlags are the optional features the clients may use. sdb_query_enabled is never
// set: it would send the clients' reads to endpoints of another storage backend.
type InstanceFlags struct {
	GzipBodyEnabled        bool `json:"gzip_body_enabled"`
	ZstdCompressionEnabled bool `json:"zstd_compression_enabled"`
}

// Info is the answer of GET /info: what the clients need to know to send batches and to decide
// which API generation to call.
type Info struct {
	Version           string            `json:"version"`
	BatchIngestConfig BatchIngestConfig `json:"batch_ingest_config"`
	InstanceFlags     InstanceFlags     `json:"instance_flags"`
	// JetgraphVersion is the server's own version (the clients ignore it).
	JetgraphVersion string `json:"jetgraph_version"`
}

// Info is the answer of GET /info.
func (s *Service) Info() Info {
	return Info{
		Version: APIVersion,
		BatchIngestConfig: BatchIngestConfig{
			UseMultipartEndpoint: true, SizeLimit: s.cfg.BatchLimit, SizeLimitBytes: s.cfg.SizeLimit,
			ScaleUpQsizeTrigger: scaleUpQsizeTrigger, ScaleUpNthreadsLimit: scaleUpNthreadsLimit,
			ScaleDownNemptyTrigger: scaleDownNemptyTrigger,
		},
		InstanceFlags:   InstanceFlags{GzipBodyEnabled: true, ZstdCompressionEnabled: true},
		JetgraphVersion: s.cfg.Version,
	}
}

// BodyLimit is the largest request body accepted, compressed or decompressed.
func (s *Service) BodyLimit() int64 {
	return s.cfg.SizeLimit + min(s.cfg.SizeLimit/8, maxFramingAllowance)
}

// KeyResolver finds the tenant of an API key that another part of jetgraph issued: the control
// plane's keys (engine/controlplane/keys), so that a tenant's key reads and writes that tenant's
// traces. The tracing service owns this interface; the assembly gives it the keys (UseKeys).
type KeyResolver interface {
	// ResolveKey returns the tenant key acts for (with tenantHeader, X-Tenant-Id, the one it
	// names, when the key may choose). known is false for a key the resolver does not know and
	// does not claim; an error (engine.Unauthorized) refuses the request: a revoked key, a key
	// that has the resolver's form but is unknown, a tenant the key may not act for.
	ResolveKey(ctx context.Context, key, tenantHeader string) (tenant string, known bool, err error)
}

// UseKeys makes the service accept the keys r knows besides Config.APIKeys (nil: none).
func (s *Service) UseKeys(r KeyResolver) {
	if r == nil {
		s.keys.Store(nil)
		return
	}
	s.keys.Store(&r)
}

// Tenant returns the tenant an x-api-key value (and the X-Tenant-Id header, for the keys of
// UseKeys) stands for, or an Unauthorized error. A missing key, an empty one, or "undefined"
// (what the JS client sends when none is configured) is the default tenant. A key of
// Config.APIKeys or Config.ProcessKeys is its tenant, a key the KeyResolver knows its tenant. Any other key is refused
// when Config.APIKeys is set (or the resolver claims it), else it is the default tenant: the
// single-user setup, where every client's key is accepted.
func (s *Service) Tenant(ctx context.Context, key, tenantHeader string) (string, error) {
	t, _, err := s.KeyTenant(ctx, key, tenantHeader)
	return t, err
}

// KeyTenant is Tenant, and whether a key said so (keyed): a request with no key, or with one no
// list knows in the single-user setup, acts for the default tenant without proving anything,
// which a server that authenticates its runtime API must not allow.
func (s *Service) KeyTenant(ctx context.Context, key, tenantHeader string) (tenant string, keyed bool, err error) {
	const op = "tracing.tenant"
	if key == "" || key == "undefined" {
		return engine.DefaultTenant, false, nil
	}
	if t, ok := s.cfg.APIKeys[key]; ok {
		return t, true, nil
	}
	if t, ok := s.cfg.ProcessKeys[key]; ok {
		return t, true, nil
	}
	if r := s.keys.Load(); r != nil {
		t, known, err := (*r).ResolveKey(ctx, key, tenantHeader)
		if err != nil {
			if engine.Is(engine.Unauthorized, err) || engine.Is(engine.Invalid, err) {
				return "", false, err
			}
			return "", false, engine.E(engine.Op(op), engine.Unavailable, "The API keys cannot be read; retry.", err)
		}
		if known {
			return t, true, nil
		}
	}
	if len(s.cfg.APIKeys) > 0 {
		return "", false, engine.E(engine.Op(op), engine.Unauthorized, "Invalid API key.")
	}
	return engine.DefaultTenant, false, nil
}

// Healthy reports the trace projector's health.
func (s *Service) Healthy() error { return s.proj.Healthy() }

// Sweep deletes, in rounds of at most 1000, the traces older than the retention, and returns
// how many it deleted.
func (s *Service) Sweep() (int, error) {
	if s.cfg.Retention < 0 {
		return 0, nil
	}
	before := s.clock().Add(-s.cfg.Retention)
	total := 0
	for {
		n, err := s.view.Expire(before, 1000)
		total += n
		if err != nil || n < 1000 {
			return total, err
		}
	}
}

// RunSweeper sweeps expired traces every interval until ctx ends.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := s.Sweep(); err != nil {
				s.logger.Error("tracing: sweep failed", "err", err)
			} else if n > 0 {
				s.logger.Info("tracing: deleted expired traces", "count", n)
			}
		}
	}
}

// view runs f on the projection, wrapping a failure.
func (s *Service) read(op string, f func(v *traces.TraceView) error) error {
	if err := s.view.View(f); err != nil {
		var ee *engine.Error
		if errors.As(err, &ee) {
			return err
		}
		return engine.E(engine.Op(op), fmt.Errorf("read the trace projection: %w", err))
	}
	return nil
}

// GetRun returns a run, with its descendants' tokens and costs rolled up into it.
func (s *Service) GetRun(ctx context.Context, id string) (*trace.Run, error) {
	var run *trace.Run
	err := s.read("tracing.get_run", func(v *traces.TraceView) error {
		r, ok, err := v.Run(engine.TenantFrom(ctx), id)
		if err != nil {
			return err
		}
		if !ok {
			return engine.E(engine.Op("tracing.get_run"), engine.NotFound, fmt.Sprintf("Run %s not found", id))
		}
		run = r
		return nil
	})
	if err == nil {
		err = s.withFeedbackStats(engine.TenantFrom(ctx), run)
	}
	return run, err
}

func init() {
	// A trace's events (its runs' posts and patches, its feedback) share one subject in the
	// log: the server keeps an index entry per subject, and nothing selects them by type.
	eventlog.ShareSubjects(traces.TraceKind)
	// Nothing reads a trace's events by its subject nor appends them with a condition: the
	// events of several traces share messages (see ingest.append).
	eventlog.PackAcross(traces.TraceKind)
}

// traceAggregate names a trace in the log.
func traceAggregate(tenant, traceID string) eventlog.Aggregate {
	return eventlog.Aggregate{Kind: traces.TraceKind, Tenant: tenant, ID: traceID}
}
