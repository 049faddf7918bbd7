package platform

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/tracing"
	"github.com/jetgraph/jetgraph/engine/tracing/forward"
	"github.com/jetgraph/jetgraph/engine/tracing/selftrace"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
	"github.com/jetgraph/jetgraph/projections/traces"
)

// TracingConfig configures the LLM tracing service.
type TracingConfig struct {
	// PricesFile adds model prices to the defaults or overrides them (trace.LoadPrices); empty:
	// the defaults.
	PricesFile string
	// Service tunes ingestion (size limits, API keys, version). Its Retention and Logger are
	// taken from the platform's Log.TraceRetention and Logger.
	Service tracing.Config
	// Project is the tracing project of the engine's own traces: every run executed here is
	// traced into it (engine/tracing/selftrace). Empty: "default".
	Project string
	// NoSelfTrace turns the engine's own traces off.
	NoSelfTrace bool
	// Forward, when set, sends the default tenant's traces (jetgraph's own and what clients
	// send without a key) to another tracing API as well (engine/tracing/forward).
	Forward *forward.Config
}

// tracingParts are the platform's tracing side. It has its own stream, projection file and
// projector (with its own cursor), so that a burst of traces never delays the runtime's
// projections: bbolt has one writer per file.
type tracingParts struct {
	// TraceDB is the trace projection file (traces.db beside projections.db).
	TraceDB *projections.DB
	// TraceProjector keeps TracesView current with eventlog.TraceStream.
	TraceProjector *projections.Projector
	TracesView     *traces.Traces
	Tracing        *tracing.Service
	// TraceObjects is the trace object store: attachments and oversized run payloads.
	TraceObjects *tracing.Objects
	// SelfTrace traces the runs executed here into Tracing; nil with NoSelfTrace.
	SelfTrace *selftrace.Tracer
	// TraceForwarder sends the traces to TracingConfig.Forward's target; nil without it.
	TraceForwarder *forward.Forwarder
}

// TraceDBPath is where the trace projection file of a data folder lives.
func TraceDBPath(data string) string { return filepath.Join(data, "traces.db") }

// openTracing opens the trace object store and projection file and builds the service.
func (p *Platform) openTracing(ctx context.Context) error {
	prices := trace.DefaultPrices()
	if f := p.cfg.Tracing.PricesFile; f != "" {
		var err error
		if prices, err = trace.LoadPrices(f, prices); err != nil {
			return fmt.Errorf("platform: trace prices %s: %w", f, err)
		}
	}
	objects, err := tracing.OpenObjects(ctx, p.Log, p.cfg.Log.TraceRetention)
	if err != nil {
		return err
	}
	db, err := projections.OpenDB(TraceDBPath(p.cfg.Data), p.logger)
	if err != nil {
		return err
	}
	p.TraceDB, p.TraceObjects = db, objects
	// Not synced at each commit, even with --sync always: after an operating-system crash the
	// file is rebuilt from the log anyway (projections.OpenDB), so its fsyncs would buy nothing.
	p.TracesView = traces.NewTraces(db, prices, objects.Get)
	p.TraceProjector = projections.NewProjector(db, p.Log, eventlog.TraceStream, p.TracesView)
	// Nobody waits on a trace write (ingestion answers once the log has it), so small batches
	// wait a little for company: one commit for many of jetgraph's own run traces.
	p.TraceProjector.Linger = traceLinger
	sc := p.cfg.Tracing.Service
	sc.Retention, sc.Logger = p.cfg.Log.TraceRetention, p.logger
	p.Tracing = tracing.New(p.Log, p.TraceProjector, p.TracesView, objects, sc)
	if !p.cfg.Tracing.NoSelfTrace {
		p.SelfTrace = selftrace.New(p.Tracing, selftrace.Config{Project: p.cfg.Tracing.Project, Logger: p.logger})
	}
	if fc := p.cfg.Tracing.Forward; fc != nil {
		c := *fc
		if c.Logger == nil {
			c.Logger = p.logger
		}
		if p.TraceForwarder, err = forward.New(p.Log, objects, c); err != nil {
			return fmt.Errorf("platform: %w", err)
		}
	}
	return nil
}

// traceLinger is the trace projector's Linger.
const traceLinger = 5 * time.Millisecond

// selfTraceStreamer is SelfTrace as a run streamer: nil (no streamer) without it.
func (p *Platform) selfTraceStreamer() runs.Streamer {
	if p.SelfTrace == nil {
		return nil
	}
	return p.SelfTrace
}

// startTracing runs the trace projector (restarting it when it fails) and the retention sweeper
// until ctx ends. It does not wait for the projector to catch up: ingestion needs only the log.
func (p *Platform) startTracing(ctx context.Context) {
	if p.SelfTrace != nil {
		p.wg.Add(1)
		go func() { defer p.wg.Done(); p.SelfTrace.Run(ctx) }()
	}
	p.wg.Add(2)
	go func() {
		defer p.wg.Done()
		for ctx.Err() == nil {
			if err := p.TraceProjector.Run(ctx); err != nil && ctx.Err() == nil {
				p.logger.Error("trace projector stopped, restarting", "err", err)
				_ = engine.Sleep(ctx, time.Second)
			}
		}
	}()
	go func() { defer p.wg.Done(); p.Tracing.RunSweeper(ctx, p.cfg.SweepInterval) }()
	if p.TraceForwarder != nil {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.logger.Info("forwarding traces", "target", p.TraceForwarder.Target())
			for ctx.Err() == nil {
				if err := p.TraceForwarder.Run(ctx); err != nil && ctx.Err() == nil {
					p.logger.Error("trace forwarder stopped, restarting", "err", err)
					_ = engine.Sleep(ctx, time.Second)
				}
			}
		}()
	}
}

// tracingHealth is the trace projector's health.
func (p *Platform) tracingHealth() error {
	if p.TraceProjector == nil {
		return nil
	}
	return p.TraceProjector.Healthy()
}

// closeTracing closes the trace projection file; stop the projector first.
func (p *Platform) closeTracing() {
	if p.TraceDB != nil {
		_ = p.TraceDB.Close()
	}
}
