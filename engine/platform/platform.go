// Package platform assembles one jetgraph process: the event log, the projection file, the
// projectors that keep it current, and the services built on them. cmd/jetgraph wires it to the
// HTTP server and flags; tests use it to run the real thing in a temporary folder.
package platform

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/assistants"
	"github.com/jetgraph/jetgraph/engine/checkpoints"
	"github.com/jetgraph/jetgraph/engine/command"
	"github.com/jetgraph/jetgraph/engine/crons"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/runner"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/store"
	"github.com/jetgraph/jetgraph/engine/streaming"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/engine/truncate"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// Config configures a process.
type Config struct {
	// Data is the folder of the projection file (and of the embedded log).
	Data string
	// Log configures the event log; its Dir defaults to Data.
	Log eventlog.Config
	// Graphs are the graphs served; each gets a system assistant with its entry's Config and
	// Context. Nil serves none.
	Graphs *graphs.Registry
	// SweepInterval is how often expired threads and store items are deleted (default 30s).
	SweepInterval time.Duration
	// CronScanInterval is how often the cron scheduler looks for due ticks (default
	// crons.DefaultScanInterval).
	CronScanInterval time.Duration
	// Tracing configures the LLM tracing service (see tracing.go).
	Tracing TracingConfig
	// Runs configures the run scheduler and its workers. Its Streamer, when set, is given every
	// run's stream besides the platform's own streamers (the output bus and self-tracing).
	Runs runs.Config
	// ShutdownGrace is how long Close lets executing runs finish before it stops them and
	// leaves them to another process (0: stop them at once).
	ShutdownGrace time.Duration
	// StoreIndex is the store's semantic index (nil: store queries match text).
	StoreIndex *store.Index
	// ThreadTTL is the time to live of a thread created without one (nil: none), as
	// langgraph.json's checkpointer.ttl.default_ttl.
	ThreadTTL *engine.TTLSpec
	Logger    *slog.Logger
}

// Platform is a running process's domain side.
type Platform struct {
	Log        *eventlog.Log
	DB         *projections.DB
	Runtime    *projections.Projector
	Threads    *threads.Service
	Assistants *assistants.Service
	Store      *store.Service
	// Graphs are the graphs served (Config.Graphs, never nil).
	Graphs *graphs.Registry
	// Runner executes graphs on threads and answers thread-state reads and updates.
	Runner *runner.Runner
	// Runs creates, schedules and executes runs; RunsView is its projection.
	Runs     *runs.Service
	RunsView *projections.Runs
	// Crons creates, changes and fires crons; CronsView is its projection.
	Crons     *crons.Service
	CronsView *projections.Crons
	// Checkpoints is the graph.Saver of graph runs on threads.
	Checkpoints *checkpoints.Saver
	// Streams publishes what runs stream and follows it for clients (engine/streaming).
	Streams *streaming.Streamer
	// Truncate empties the runtime's data (POST /internal/truncate, served with --dev only).
	Truncate *truncate.Service

	// Views are the projections, for readers outside the services (CLI, tests).
	ThreadsView     *projections.Threads
	AssistantsView  *projections.Assistants
	StoreView       *projections.Store
	CheckpointsView *projections.Checkpoints

	// The tracing side: TraceDB, TraceProjector, TracesView, Tracing (see tracing.go).
	tracingParts

	cfg    Config
	logger *slog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ownLog bool
}

// DBPath is where the projection file of a data folder lives.
func DBPath(data string) string { return filepath.Join(data, "projections.db") }

// Open opens the log (unless l is given) and the projection file, and builds the services. Call
// Start to begin projecting and sweeping.
func Open(ctx context.Context, cfg Config, l *eventlog.Log) (*Platform, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SweepInterval == 0 {
		cfg.SweepInterval = 30 * time.Second
	}
	if cfg.Graphs == nil {
		cfg.Graphs = graphs.NewRegistry()
	}
	p := &Platform{cfg: cfg, logger: cfg.Logger, Graphs: cfg.Graphs}
	if l == nil {
		lc := cfg.Log
		if lc.Dir == "" {
			lc.Dir = cfg.Data
		}
		lc.Logger = cfg.Logger
		var err error
		if l, err = eventlog.Open(ctx, lc); err != nil {
			return nil, err
		}
		p.ownLog = true
	}
	p.Log = l
	db, err := projections.OpenDB(DBPath(cfg.Data), cfg.Logger)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.DB = db
	// Not synced at each commit, even with --sync always: after an operating-system crash the
	// file is rebuilt from the log anyway (projections.OpenDB), so its fsyncs would buy nothing.
	p.ThreadsView = projections.NewThreads(db)
	p.AssistantsView = projections.NewAssistants(db)
	p.StoreView = projections.NewStore(db)
	p.CheckpointsView = projections.NewCheckpoints(db)
	p.RunsView = projections.NewRuns(db)
	p.CronsView = projections.NewCrons(db)
	p.Runtime = projections.NewProjector(db, l, eventlog.RuntimeStream, p.ThreadsView, p.AssistantsView, p.StoreView, p.CheckpointsView, p.RunsView, p.CronsView)
	p.Runtime.BusyLinger = runtimeBusyLinger
	cmds := &command.Runner{Log: l, Projector: p.Runtime}
	p.Threads = threads.New(cmds, p.ThreadsView, cfg.Logger)
	p.Threads.SetDefaultTTL(cfg.ThreadTTL)
	p.Assistants = assistants.New(cmds, p.AssistantsView, p.ThreadsView, cfg.Logger)
	p.Store = store.New(cmds, p.StoreView, cfg.Logger)
	p.Store.SetIndex(cfg.StoreIndex)
	p.Checkpoints = checkpoints.New(l, p.Runtime, p.CheckpointsView)
	p.Threads.ResolveValuesWith(p.Checkpoints.Blob)
	p.Runner = runner.New(p.Assistants, p.Threads, p.Graphs, p.Checkpoints, p.Store)
	rc := cfg.Runs
	rc.Checkpoints = p.Checkpoints
	if rc.Logger == nil {
		rc.Logger = cfg.Logger
	}
	p.Streams = streaming.New(streaming.Config{Bus: l.OutputBus(), Runner: p.Runner, Runs: p.RunsView, Projector: p.Runtime, Logger: cfg.Logger})
	if err := p.openTracing(ctx); err != nil {
		p.Close()
		return nil, err
	}
	// Clients get the runs' stream without the internal trace events; the engine's own tracing
	// (tracing.go) gets all of it.
	rc.Streamer = runs.Streamers(runs.WithoutTrace(p.Streams), p.selfTraceStreamer(), cfg.Runs.Streamer)
	p.Runs = runs.New(rc, l, cmds, p.RunsView, p.ThreadsView, p.Threads, p.Assistants, p.Runner)
	p.Crons = crons.New(cmds, p.CronsView, p.Assistants, p.Threads, p.Runs, cfg.Logger)
	p.Truncate = truncate.New(cmds, p.Runs, func() []string {
		var ids []string
		for _, g := range p.Graphs.IDs() {
			ids = append(ids, assistants.SystemID(g))
		}
		return ids
	})
	return p, nil
}

// Start runs the projector, waits until it has caught up with the log, creates the system
// assistants, and starts the sweepers.
func (p *Platform) Start(ctx context.Context) error {
	runCtx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for runCtx.Err() == nil {
			if err := p.Runtime.Run(runCtx); err != nil {
				p.logger.Error("projector stopped, restarting", "err", err)
				_ = engine.Sleep(runCtx, time.Second)
			}
		}
	}()
	p.startTracing(runCtx)
	if err := p.Runtime.CatchUp(ctx); err != nil {
		return fmt.Errorf("platform: catch up with the log: %w", err)
	}
	if err := p.Assistants.EnsureSystem(ctx, systemGraphs(p.Graphs)); err != nil {
		return fmt.Errorf("platform: system assistants: %w", err)
	}
	if err := p.Runs.Start(runCtx); err != nil {
		return fmt.Errorf("platform: run workers: %w", err)
	}
	p.wg.Add(3)
	go func() { defer p.wg.Done(); p.Crons.Run(runCtx, p.cfg.CronScanInterval) }()
	go func() { defer p.wg.Done(); p.Threads.RunSweeper(runCtx, p.cfg.SweepInterval) }()
	go func() { defer p.wg.Done(); p.Store.RunSweeper(runCtx, p.cfg.SweepInterval) }()
	return nil
}

// systemGraphs lists r's graphs with their system assistants' defaults.
func systemGraphs(r *graphs.Registry) []assistants.SystemGraph {
	var out []assistants.SystemGraph
	for _, e := range r.Entries() {
		out = append(out, assistants.SystemGraph{ID: e.ID, Config: e.Config, Context: e.Context})
	}
	return out
}

// Health returns nil when the log answers and the projectors are healthy. Its error names the
// reason and has a kind (GET /ok answers through the one error mapping): Other (500) when a
// projector halted at an event it cannot fold, which only an operator can mend; Unavailable
// (503) when the log does not answer or a projector failed to read it, which passes by itself.
func (p *Platform) Health(ctx context.Context) error {
	err := errors.Join(p.Log.Healthy(ctx), p.Runtime.Healthy(), p.tracingHealth())
	if err == nil {
		return nil
	}
	kind := engine.Unavailable
	if p.Runtime.Halted() != nil || p.TraceProjector != nil && p.TraceProjector.Halted() != nil {
		kind = engine.Other
	}
	return engine.E(engine.Op("health"), kind, err.Error(), err)
}

// runtimeBusyLinger is the runtime projector's BusyLinger. Under concurrent load a millisecond
// more before a write is readable buys much larger transactions (echo runs at concurrency 64:
// 13 events a transaction instead of 3.5, about 10% more runs a second); a lone writer is not
// delayed.
const runtimeBusyLinger = time.Millisecond

// Close stops the background work and closes the file and the log (if Open opened it).
func (p *Platform) Close() {
	if p.Runs != nil {
		p.Runs.Shutdown(p.cfg.ShutdownGrace)
	}
	if p.Streams != nil {
		p.Streams.Wait(10 * time.Second)
	}
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
	if p.DB != nil {
		_ = p.DB.Close()
	}
	p.closeTracing()
	if p.ownLog && p.Log != nil {
		p.Log.Close()
	}
}
