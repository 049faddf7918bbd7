// Package selftrace makes jetgraph trace itself: every run the scheduler executes becomes a
// trace in jetgraph's own tracing service, in the format the langsmith clients send, so that the
// runs of served graphs show up beside the traces applications send.
//
// A Tracer is a runs.Streamer. Begin opens a root chain span per run attempt (name: the graph
// id; inputs: the run's input) and returns the sink that turns the run's graph events into spans:
//   - a chain span per node task, from its task_start and task_result events, under the root or,
//     in a subgraph, under the span of the task that runs the subgraph (the event's NS);
//   - an llm span per model call, from the graphs' internal trace/llm_start and trace/llm_end
//     events (engine/graphs): inputs and outputs in the native message format of
//     spec/3-trace-format.md, the usage in the output message's usage_metadata, the model in
//     extra.metadata ls_provider / ls_model_name, and a new_token event at the first chunk;
//   - a tool span per tool call (trace/tool_start, trace/tool_end).
//
// End closes the root span with the run's final values (the last root "values" event) or its
// error. Spans carry UUIDv7 ids, the trace_id, the parent_run_id and a dotted_order; they go to
// the project Config.Project ("default" unless set).
//
// The root span's id is the run's id, so the trace of a run is found from the run itself (its
// run_id, which the API, the stream's metadata event and the run's checkpoints carry): no link
// needs to be written into the run record, whose metadata is fixed at creation. A run taken over
// after a crash posts the same root again (an upsert) and adds the new attempt's spans to it.
//
// Spans are buffered per run and appended through the tracing service's ingestion path
// (tracing.Service.IngestEncoded, as a batch of posts with trace ids: what /runs/batch does),
// every Config.FlushInterval while it runs (Run) and when it ends, then with the other runs of
// its tenant that end within endLinger (10 ms), in one message where they fit. Tracing never
// fails a run: an append that fails is logged and its spans dropped.
package selftrace

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/tracing"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
)

// Defaults of Config.
const (
	DefaultProject       = "default"
	DefaultFlushInterval = 2 * time.Second
	// flushTimeout bounds one append.
	flushTimeout = 10 * time.Second
)

// Config tunes a Tracer.
type Config struct {
	// Project is the tracing project of the runs' traces (default DefaultProject).
	Project string
	// FlushInterval is how often the spans of running runs are appended (default
	// DefaultFlushInterval); a run's remaining spans are appended when it ends.
	FlushInterval time.Duration
	Logger        *slog.Logger
}

// Ingester appends traced runs: *tracing.Service.
type Ingester interface {
	IngestEncoded(ctx context.Context, runs []tracing.EncodedRun) (int, error)
}

// Tracer traces the runs executed in this process. It implements runs.Streamer.
type Tracer struct {
	ing Ingester
	cfg Config

	mu   sync.Mutex
	runs map[string]*active // run id -> its trace, while it executes

	// ending counts the final appends of ended runs, made in the background so that a worker is
	// free for its next run at once. The runs that end within endLinger of one another are
	// appended together, in as few messages as their size allows (tracing packs the posts of
	// several traces in one): one message a run, stored, acknowledged and folded, was most of
	// what self-tracing cost (issue 28). slots bounds the runs waiting: a full set makes End
	// wait, so tracing falls behind no further than that.
	ending     sync.WaitGroup
	slots      chan struct{}
	endMu      sync.Mutex
	ended      []*active // waiting for their final append
	endFlusher bool      // a goroutine appends ended (flushEnded)
}

// Bounds of the final appends: how many ended runs wait at most, how long the first waits for
// others, how many are appended at once.
const (
	maxEnding    = 256
	endLinger    = 10 * time.Millisecond
	maxFlushRuns = 128
)

// active is the trace of an executing run, with what its appends need.
type active struct {
	ctx   context.Context // the worker's, without its cancellation: it carries the tenant
	trace *runTrace
	// flushing serialises the appends of the run, so that they land in order.
	flushing sync.Mutex
}

// New returns a Tracer appending to ing.
func New(ing Ingester, cfg Config) *Tracer {
	if cfg.Project == "" {
		cfg.Project = DefaultProject
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Tracer{ing: ing, cfg: cfg, runs: map[string]*active{}, slots: make(chan struct{}, maxEnding)}
}

// Project is the project the runs' traces go to.
func (t *Tracer) Project() string { return t.cfg.Project }

// Begin is runs.Streamer.Begin: it opens the run's root span and returns the sink of its graph
// events.
func (t *Tracer) Begin(ctx context.Context, rec engine.RunRecord) graph.Sink {
	if !traceable(rec.RunID, t.cfg.Project) {
		// Spans are appended without ingestion's checks (tracing.EncodedRun): a run whose
		// spans these would refuse is not traced, as they would have refused all of them.
		t.cfg.Logger.Warn("selftrace: run not traced: its id is not a lowercase UUID, or the project name is too long",
			"run_id", rec.RunID, "project", t.cfg.Project)
		return func(graph.Event) {}
	}
	start := time.Now()
	if rec.Attempt > 1 && !rec.StartedAt.IsZero() {
		start = rec.StartedAt.Time // keep the root where the first attempt put it
	}
	a := &active{ctx: context.WithoutCancel(ctx), trace: newRunTrace(t.cfg.Project, rootSpan(rec, start))}
	t.mu.Lock()
	prev := t.runs[rec.RunID]
	t.runs[rec.RunID] = a
	t.mu.Unlock()
	if prev != nil {
		// An earlier attempt here that never ended (its lease was lost): keep what it did, its
		// open steps ended; the new attempt posts the root again.
		prev.trace.closeOpen("run attempt abandoned", time.Now())
		t.flush(prev)
	}
	return a.trace.handle
}

// Flush is runs.Streamer.Flush: nothing to do, spans are appended at the end and every
// FlushInterval.
func (t *Tracer) Flush(context.Context, engine.RunRecord) {}

// End is runs.Streamer.End: it closes the run's spans and appends what is left of them in the
// background (Wait waits for those appends).
func (t *Tracer) End(ctx context.Context, rec engine.RunRecord, fin engine.RunFinishedData) {
	t.mu.Lock()
	a := t.runs[rec.RunID]
	delete(t.runs, rec.RunID)
	t.mu.Unlock()
	if a == nil {
		return // cancelled before it began here
	}
	a.trace.finish(fin, time.Now())
	t.slots <- struct{}{}
	t.ending.Add(1)
	t.endMu.Lock()
	t.ended = append(t.ended, a)
	start := !t.endFlusher
	t.endFlusher = true
	t.endMu.Unlock()
	if start {
		go t.flushEnded()
	}
}

// flushEnded appends the spans of ended runs, endLinger after the first, together, until none
// is left: it runs only while runs end (no goroutine is left behind at idle).
func (t *Tracer) flushEnded() {
	for {
		time.Sleep(endLinger)
		t.endMu.Lock()
		n := min(len(t.ended), maxFlushRuns)
		if n == 0 {
			t.endFlusher = false
			t.endMu.Unlock()
			return
		}
		batch := slices.Clone(t.ended[:n])
		t.ended = slices.Delete(t.ended, 0, n)
		t.endMu.Unlock()
		t.flushRuns(batch)
		for range batch {
			<-t.slots
			t.ending.Done()
		}
	}
}

// flushRuns appends what the runs of list have not appended yet, the runs of a tenant together.
func (t *Tracer) flushRuns(list []*active) {
	var tenants []string
	byTenant := map[string][]*active{}
	for _, a := range list {
		tenant := engine.TenantFrom(a.ctx)
		if byTenant[tenant] == nil {
			tenants = append(tenants, tenant)
		}
		byTenant[tenant] = append(byTenant[tenant], a)
	}
	for _, tenant := range tenants {
		runs := byTenant[tenant]
		var posts []tracing.EncodedRun
		for _, a := range runs {
			a.flushing.Lock() // until appended: a periodic append of the run lands first
			posts = append(posts, a.trace.take()...)
		}
		if len(posts) > 0 {
			ctx, cancel := context.WithTimeout(runs[0].ctx, flushTimeout)
			if _, err := t.ing.IngestEncoded(ctx, posts); err != nil {
				t.cfg.Logger.Warn("selftrace: spans not appended; dropped", "runs", len(runs), "spans", len(posts), "err", err)
			}
			cancel()
		}
		for _, a := range runs {
			a.flushing.Unlock()
		}
	}
}

// Wait returns once the spans of every run that has ended are appended (or dropped).
func (t *Tracer) Wait() { t.ending.Wait() }

// Run appends the spans of the executing runs every FlushInterval until ctx ends, then waits
// for the appends of ended runs.
func (t *Tracer) Run(ctx context.Context) {
	tick := time.NewTicker(t.cfg.FlushInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			t.Wait()
			return
		case <-tick.C:
			t.mu.Lock()
			list := make([]*active, 0, len(t.runs))
			for _, a := range t.runs {
				list = append(list, a)
			}
			t.mu.Unlock()
			for _, a := range list {
				t.flush(a)
			}
		}
	}
}

// flush appends the spans of a run that changed since its last append.
func (t *Tracer) flush(a *active) {
	a.flushing.Lock()
	defer a.flushing.Unlock()
	posts := a.trace.take()
	if len(posts) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(a.ctx, flushTimeout)
	defer cancel()
	if _, err := t.ing.IngestEncoded(ctx, posts); err != nil {
		t.cfg.Logger.Warn("selftrace: spans not appended; dropped", "trace_id", a.trace.traceID, "spans", len(posts), "err", err)
	}
}

// traceable reports whether a run's spans can go to the trace stream: the run's id (its root
// span's, and the trace's) a UUID as ingestion keeps it, and the project a valid name.
func traceable(runID, project string) bool {
	return trace.IsUUID(runID) && runID == strings.ToLower(runID) && engine.ProjectNameViolation(project) == nil
}

// rootSpan is the root chain span of a run attempt: its id is the run's.
func rootSpan(rec engine.RunRecord, start time.Time) *span {
	k := rec.Kwargs
	graphID := k.GraphID()
	name := graphID
	if name == "" {
		name = rec.AssistantID
	}
	// Traces show what a client configured as answers do: its secrets masked.
	md := engine.MaskMap(rec.Metadata)
	if md == nil {
		md = map[string]any{}
	}
	md["run_id"], md["thread_id"], md["assistant_id"], md["graph_id"], md["run_attempt"] =
		rec.RunID, rec.ThreadID, rec.AssistantID, graphID, max(rec.Attempt, 1)
	inputs := object(k.Input, "input")
	if inputs == nil && k.Command != nil {
		inputs = wrapped("command", encoded(k.Command))
	}
	s := &span{id: rec.RunID, name: name, runType: trace.RunChain, start: start, inputs: inputs,
		extra: map[string]any{"metadata": md}}
	switch tags := k.Config["tags"].(type) { // as decoded from the request, or set in Go
	case []any:
		for _, tag := range tags {
			if tag, ok := tag.(string); ok {
				s.tags = append(s.tags, tag)
			}
		}
	case []string:
		s.tags = append(s.tags, tags...)
	}
	return s
}
