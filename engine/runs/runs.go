// Package runs makes runs durable: creating one appends it to its thread's log under optimistic
// concurrency (so the multitask strategy is decided against the thread as it is), workers on any
// process pick pending runs up through a JetStream work consumer, drain one thread at a time
// under a lease, and a run whose worker dies is taken over and resumed from its last checkpoint.
//
// Invariants:
//   - The runs of a thread execute one at a time, in creation order (run ids are UUIDv7).
//   - Every state change of a run is an event on its thread's subject; the run record and the
//     thread's status are projections of them.
//   - A dispatch message is acknowledged only after its thread has no pending run left, so a
//     worker that dies leaves its messages to be delivered again.
package runs

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/assistants"
	"github.com/jetgraph/jetgraph/engine/checkpoints"
	"github.com/jetgraph/jetgraph/engine/command"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/runner"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/engine/webhooks"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// Config tunes the scheduler.
type Config struct {
	// Worker names this process in run_started events; default host-pid.
	Worker string
	// Concurrency is how many threads this process drains at once (default 10).
	Concurrency int
	// LeaseTTL is how long a thread's lease outlives its holder (default DefaultLeaseTTL); the
	// holder renews it every LeaseTTL/3, and stops the thread's run when it could not for
	// eventlog.GiveUpAfter(LeaseTTL), before another worker can take the thread over.
	LeaseTTL time.Duration
	// AckWait is how long a dispatch message waits for its worker before another gets it
	// (default DefaultAckWait); a worker in progress says so every AckWait/3.
	AckWait time.Duration
	// RunTimeout bounds every run; 0 is none.
	RunTimeout time.Duration
	// Webhooks delivers completion calls; nil disables them.
	Webhooks *webhooks.Deliverer
	// Streamer publishes what runs stream; nil streams nothing.
	Streamer Streamer
	// Checkpoints, when set, lets runs of durability "async" (the default) and "exit" keep their
	// checkpoints in memory and append them with the event that ends the run; without it every
	// checkpoint is appended as it is made ("sync").
	Checkpoints *checkpoints.Saver
	// AsyncFlush is how long an "async" run keeps a checkpoint before appending it while the run
	// goes on (default 100ms).
	AsyncFlush time.Duration
	// StartAfter is how long a run that keeps its checkpoints in memory may go on before its
	// start is appended on its own, when it wrote nothing to its thread and did not end first
	// (default 100ms; see start.go).
	StartAfter time.Duration
	Logger     *slog.Logger
}

// Streamer publishes a run's stream: Begin before the run executes (the "metadata" event) and
// returns the sink for its graph events; Flush once the graph has returned, before the run's end
// is recorded, waits until what the run published is stored (so that whoever sees the run ended
// finds its output); End after it ended (an "error" event for a failure, then "end"). An attempt
// taken over after a crash begins again with its attempt number.
type Streamer interface {
	Begin(ctx context.Context, rec engine.RunRecord) graph.Sink
	Flush(ctx context.Context, rec engine.RunRecord)
	End(ctx context.Context, rec engine.RunRecord, fin engine.RunFinishedData)
}

// Takeover of the runs of a process that died: its leases expire DefaultLeaseTTL after their
// last renewal and its dispatch messages come back DefaultAckWait after their last in-progress
// acknowledgement, so another process resumes its runs within about that (a redelivered message
// whose thread is still leased asks again every 250ms). A worker renews each lease it holds and
// acknowledges each message in progress every third of that: two small messages a second for a
// run that lasts more than a second, none for shorter runs, none at idle.
const (
	DefaultLeaseTTL = 3 * time.Second
	DefaultAckWait  = 3 * time.Second
)

// Service creates, schedules, executes, cancels and reports runs.
type Service struct {
	cfg        Config
	log        *eventlog.Log
	cmd        *command.Runner
	projector  *projections.Projector
	runs       *projections.Runs
	threadView *projections.Threads
	threads    *threads.Service
	assistants *assistants.Service
	runner     *runner.Runner
	logger     *slog.Logger

	results results // final values of runs executed here, for the waits of this process

	mu       sync.Mutex
	running  map[string]context.CancelCauseFunc // run id -> cancel of its execution here
	wg       sync.WaitGroup
	stop     context.CancelFunc
	msgs     *eventlog.DispatchPull // the current pull of the dispatch queue
	stopping atomic.Bool            // Shutdown began
	leases   *eventlog.Leases       // threads' leases: one worker drains a thread at a time
}

// New returns the run service. Call Start to make this process a worker.
func New(cfg Config, l *eventlog.Log, cmd *command.Runner, runsView *projections.Runs, threadView *projections.Threads,
	th *threads.Service, as *assistants.Service, r *runner.Runner) *Service {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 10
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = DefaultAckWait
	}
	if cfg.AsyncFlush <= 0 {
		cfg.AsyncFlush = 100 * time.Millisecond
	}
	if cfg.StartAfter <= 0 {
		cfg.StartAfter = defaultStartAfter
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Worker == "" {
		host, _ := os.Hostname()
		cfg.Worker = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8])
	}
	return &Service{cfg: cfg, log: l, cmd: cmd, projector: cmd.Projector, runs: runsView, threadView: threadView,
		threads: th, assistants: as, runner: r, logger: cfg.Logger, running: map[string]context.CancelCauseFunc{}}
}

// Create is a request to create a run.
type Create struct {
	ThreadID          string // "" for a stateless run on a temporary thread
	IfNotExists       string // engine.IfNotExistsReject (default) or engine.IfNotExistsCreate
	AssistantID       string
	Input             any
	Command           map[string]any
	Config            map[string]any
	Context           map[string]any
	Metadata          map[string]any
	StreamMode        []engine.StreamMode
	StreamSubgraphs   bool // the run's stream sends its subgraphs' events too
	InterruptBefore   []string
	InterruptAfter    []string
	CheckpointID      string
	Webhook           string
	FeedbackKeys      []string
	Durability        engine.Durability
	MultitaskStrategy string  // default enqueue
	AfterSeconds      float64 // start no sooner than this
	OnCompletion      string  // stateless runs: engine.OnCompletionDelete (default) or engine.OnCompletionKeep
	// RunID, when set, is the run's id (a UUIDv7) instead of a new one, and makes the creation
	// idempotent: a run of that id already on the thread is returned as it is, nothing appended.
	// A cron's fire records the id first, so that whichever process completes the fire creates
	// the run once.
	RunID string
	// NewThreadID, for a run without ThreadID, is the id of the thread made for it (default a
	// new UUID); the thread is reused if it exists, for the same reason as RunID.
	NewThreadID string
	// Await says the caller calls WaitEnd next: the values the run ends with here are kept for
	// it from before the run exists (a fast run may end before WaitEnd is called).
	Await bool
}

// RejectDetail is the reference servers' text for a run refused by the reject strategy.
const RejectDetail = "Thread is already running a task. Wait for it to finish or choose a different multitask strategy."

// Create validates and records a run; workers pick it up. It returns the run as recorded
// (status pending).
func (s *Service) Create(ctx context.Context, c Create) (engine.RunRecord, error) {
	const op = "runs.create"
	newID := c.RunID == "" // (the rules' check may give the run its id before it is recorded)
	// The assistant is read as the platform does; authorizeCreate asks the user's rules whether
	// they may (system assistants they always may, which a filtered read would hide).
	a, err := s.assistants.Resolve(engine.Asked(ctx), c.AssistantID)
	if err != nil {
		if engine.Is(engine.NotFound, err) {
			return engine.RunRecord{}, assistants.NoAssistant(op, c.AssistantID)
		}
		return engine.RunRecord{}, err
	}
	if c.MultitaskStrategy == "" {
		c.MultitaskStrategy = engine.MultitaskEnqueue
	}
	filter, err := s.authorizeCreate(ctx, op, &c, a)
	if err != nil {
		return engine.RunRecord{}, err
	}
	ctx = engine.Asked(ctx)
	if err := s.keepSecrets(ctx, &c, a); err != nil {
		return engine.RunRecord{}, err
	}
	temporary := false
	if c.ThreadID == "" {
		tc := threads.Create{Metadata: newThreadMetadata(c, a)}
		if c.NewThreadID != "" {
			tc.ThreadID, tc.IfExists = c.NewThreadID, engine.IfExistsDoNothing
		}
		th, err := s.threads.Create(ctx, tc)
		if err != nil {
			return engine.RunRecord{}, err
		}
		c.ThreadID, temporary = th.ThreadID, c.OnCompletion != engine.OnCompletionKeep
	} else if _, resume := c.Command["resume"]; resume || c.IfNotExists == engine.IfNotExistsCreate {
		// Otherwise the decision below reads the thread: a missing one, or one the filter hides,
		// is refused there. (A resume's check reads the thread's status: not one the user may
		// not see.)
		if th, err := s.threads.Info(ctx, c.ThreadID); engine.Is(engine.NotFound, err) {
			if _, err := s.threads.Create(ctx, threads.Create{ThreadID: c.ThreadID, IfExists: engine.IfExistsDoNothing,
				Metadata: newThreadMetadata(c, a)}); err != nil {
				return engine.RunRecord{}, err
			}
		} else if err != nil {
			return engine.RunRecord{}, err
		} else if !filter.Match(th.Metadata) {
			return engine.RunRecord{}, threads.NotFound("threads.get", c.ThreadID)
		}
	}
	if err := s.checkResume(ctx, c); err != nil {
		return engine.RunRecord{}, err
	}

	rec := s.record(ctx, c, a)
	rec.Temporary, rec.Kwargs.Temporary = temporary, temporary
	agg := threads.Aggregate(ctx, c.ThreadID)
	if c.Await {
		s.results.expect(rec.RunID)
	}
	if newID {
		// A new id: the worker that picks the run up takes its record from memory, not the
		// file, even when it does so before this call returns.
		s.runs.HoldCreating(agg.Tenant, rec)
	}
	existing := false
	_, err = s.cmd.Run(ctx, op, func() (command.Decision, error) {
		if c.RunID != "" {
			old, ok, err := s.runs.Get(agg.Tenant, agg.ID, c.RunID)
			if err != nil {
				return nil, engine.E(engine.Op(op), err)
			}
			if existing = ok; ok {
				rec = old
				return nil, nil
			}
		}
		active, err := s.runs.ActiveIDs(agg.Tenant, agg.ID)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		if len(active) > 0 && c.MultitaskStrategy == engine.MultitaskReject {
			return nil, engine.E(engine.Op(op), engine.Conflict, RejectDetail)
		}
		expect, err := s.cmd.Version(agg)
		if err != nil {
			return nil, err
		}
		data := engine.RunCreatedData{Run: rec}
		th, err := s.threads.Info(ctx, c.ThreadID)
		if err != nil {
			return nil, err
		}
		if !filter.Match(th.Metadata) {
			return nil, threads.NotFound("threads.get", c.ThreadID)
		}
		if cfg := runner.ThreadConfig(a.Config, th.Config, c.Config); cfg != nil && !reflect.DeepEqual(cfg, th.Config) {
			data.ThreadConfig = cfg
		}
		created, err := eventlog.New(agg, engine.RunCreatedEvent, data)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		d := command.Decision{{Event: created, Expect: expect}}
		if c.MultitaskStrategy == engine.MultitaskInterrupt || c.MultitaskStrategy == engine.MultitaskRollback {
			for _, id := range active {
				e, err := eventlog.New(agg, engine.RunCancelRequestedEvent, engine.RunCancelRequestedData{RunID: id, Action: c.MultitaskStrategy})
				if err != nil {
					return nil, engine.E(engine.Op(op), err)
				}
				d = append(d, eventlog.Pending{Event: e, Expect: eventlog.Any})
			}
		}
		return d, nil
	})
	if err != nil {
		if c.Await {
			s.results.forget(rec.RunID)
		}
		s.runs.Release(agg.Tenant, agg.ID, rec.RunID)
		return engine.RunRecord{}, err
	}
	if !newID && !existing {
		s.runs.Hold(agg.Tenant, rec) // (folded: a run of a given id may have existed)
	}
	if !existing && (c.MultitaskStrategy == engine.MultitaskInterrupt || c.MultitaskStrategy == engine.MultitaskRollback) {
		s.cancelLocal(agg.Tenant, agg.ID)
	}
	// The run as created: a worker may already have moved it on.
	return rec, nil
}

// keepSecrets replaces the masked placeholders of c (a client sending back what an answer
// showed) with the secrets stored in the assistant's and the thread's config, and refuses,
// before anything is appended, a placeholder with no stored secret (a masked webhook URL always:
// a new run has none stored).
func (s *Service) keepSecrets(ctx context.Context, c *Create, a engine.Assistant) error {
	if !engine.HasMasked(c.Config) && !engine.HasMasked(c.Context) && !engine.HasMasked(c.Webhook) {
		return nil
	}
	var threadConfig map[string]any
	if c.ThreadID != "" {
		th, err := s.threads.Info(ctx, c.ThreadID)
		if err != nil && !engine.Is(engine.NotFound, err) {
			return err
		}
		threadConfig = th.Config
	}
	var v engine.Violations
	c.Config = engine.KeepSecretsMap(&v, c.Config, runner.BaseConfig(a.Config, threadConfig), "body", "config")
	c.Context = engine.KeepSecretsMap(&v, c.Context, a.Context, "body", "context")
	c.Webhook = engine.KeepSecretURL(&v, c.Webhook, nil, "body", "webhook")
	return v.Err("runs.create")
}

// checkResume refuses, before anything is appended, a resume on a thread that is idle or failed
// and has no pending interrupt: there is nothing to resume. (Behind an active run the thread
// may well be interrupted by the time this run starts; the run itself fails then.)
func (s *Service) checkResume(ctx context.Context, c Create) error {
	if _, ok := c.Command["resume"]; !ok || c.ThreadID == "" {
		return nil
	}
	th, err := s.threads.Info(ctx, c.ThreadID)
	if err != nil {
		return err
	}
	if th.Status == engine.ThreadBusy || th.Status == engine.ThreadInterrupted || len(th.Interrupts) > 0 {
		return nil
	}
	return engine.E(engine.Op("runs.create"), engine.Invalid, []engine.FieldError{{
		Loc: []any{"body", "command", "resume"}, Type: "value_error",
		Msg: fmt.Sprintf("Cannot resume: thread %s has no pending interrupt", c.ThreadID),
	}})
}

// record builds the run record of a creation request, with the kwargs the API shows.
func (s *Service) record(ctx context.Context, c Create, a engine.Assistant) engine.RunRecord {
	runID := c.RunID
	if runID == "" {
		runID = newRunID()
	}
	configurable := map[string]any{}
	if cf, ok := c.Config["configurable"].(map[string]any); ok {
		for k, v := range cf {
			configurable[k] = v
		}
	}
	configurable["run_id"], configurable["thread_id"], configurable["graph_id"], configurable["assistant_id"] =
		runID, c.ThreadID, a.GraphID, a.AssistantID
	engine.SetAuthConfigurable(ctx, configurable)
	configurable["checkpoint_id"] = nil
	if c.CheckpointID != "" {
		configurable["checkpoint_id"] = c.CheckpointID
	}
	config := map[string]any{}
	for k, v := range c.Config {
		config[k] = v
	}
	config["configurable"] = configurable
	config["metadata"] = map[string]any{"created_by": "system"}
	streamMode := c.StreamMode
	if streamMode == nil {
		streamMode = []engine.StreamMode{engine.StreamValues}
	}
	kwargs := engine.RunKwargs{
		Input: c.Input, Command: nilIfEmpty(c.Command), Config: config, Context: orEmpty(c.Context),
		Webhook: engine.OptString(c.Webhook), StreamMode: streamMode, Subgraphs: c.StreamSubgraphs,
		FeedbackKeys: nilIfEmpty(c.FeedbackKeys), InterruptBefore: nilIfEmpty(c.InterruptBefore),
		InterruptAfter: nilIfEmpty(c.InterruptAfter), CheckpointID: engine.OptString(c.CheckpointID),
		Durability: c.Durability,
	}
	now := engine.At(time.Now())
	rec := engine.RunRecord{Run: engine.Run{
		RunID: runID, ThreadID: c.ThreadID, AssistantID: a.AssistantID, Status: engine.RunPending,
		CreatedAt: now, UpdatedAt: now,
		Metadata: orEmpty(c.Metadata), Kwargs: kwargs, MultitaskStrategy: c.MultitaskStrategy,
	}, Webhook: c.Webhook}
	if c.AfterSeconds > 0 {
		rec.RunAt = engine.At(time.Now().Add(time.Duration(c.AfterSeconds * float64(time.Second))))
	}
	return rec
}

// newThreadMetadata is the metadata of the thread a run creates: its graph and assistant and
// the run's metadata (as the user's rules left it: an owner), so that the user reaches the
// thread they made, as in the reference. A cron's run carries the cron's metadata, so the thread
// a cron's run keeps is its owner's too, though no rules are asked when a cron fires.
func newThreadMetadata(c Create, a engine.Assistant) map[string]any {
	md := map[string]any{"graph_id": a.GraphID, "assistant_id": a.AssistantID}
	for k, v := range c.Metadata {
		md[k] = v
	}
	return md
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// nilIfEmpty is m, or nil when m is empty: an empty command or list is recorded as null.
func nilIfEmpty[M ~map[string]any | ~[]string](m M) M {
	if len(m) == 0 {
		return nil
	}
	return m
}

// NotFound is the error for a run that does not exist.
func NotFound(op string) error { return engine.E(engine.Op(op), engine.NotFound, "Run not found") }

// Get returns a run of a thread, catching up with the log once before it says NotFound (the run
// may have been created through another process).
func (s *Service) Get(ctx context.Context, thread, run string) (engine.RunRecord, error) {
	ctx, err := s.access(ctx, "runs.get", engine.ActionRead, thread, run, nil)
	if err != nil {
		return engine.RunRecord{}, err
	}
	rec, ok, err := s.runs.Get(engine.TenantFrom(ctx), thread, run)
	if err == nil && !ok {
		if cerr := s.projector.CatchUp(ctx); cerr == nil {
			rec, ok, err = s.runs.Get(engine.TenantFrom(ctx), thread, run)
		}
	}
	if err != nil {
		return rec, engine.E(engine.Op("runs.get"), err)
	}
	if !ok {
		return rec, NotFound("runs.get")
	}
	return rec, nil
}

// GetByID returns a run whose thread is not named (stateless runs).
func (s *Service) GetByID(ctx context.Context, run string) (engine.RunRecord, error) {
	thread, ok, err := s.runs.ThreadOf(engine.TenantFrom(ctx), run)
	if err != nil {
		return engine.RunRecord{}, engine.E(engine.Op("runs.get"), err)
	}
	if !ok {
		return engine.RunRecord{}, NotFound("runs.get")
	}
	return s.Get(ctx, thread, run)
}

// List returns a thread's runs, newest first.
func (s *Service) List(ctx context.Context, thread, status string, limit, offset int) ([]engine.RunRecord, error) {
	if _, err := s.threads.Info(ctx, thread); err != nil { // threads.read, as the reference asks
		return nil, err
	}
	return s.runs.List(engine.TenantFrom(ctx), thread, status, limit, offset)
}

// Wait blocks until the run has ended and returns it.
func (s *Service) Wait(ctx context.Context, thread, run string) (engine.RunRecord, error) {
	ctx, err := s.access(ctx, "runs.wait", engine.ActionRead, thread, run, nil)
	if err != nil {
		return engine.RunRecord{}, err
	}
	if _, err := s.waitState(ctx, thread, run); err != nil {
		rec, _ := s.Get(context.WithoutCancel(ctx), thread, run)
		return rec, err
	}
	return s.Get(ctx, thread, run)
}

// WaitEnd is Wait for a run whose record the caller holds as created (its kwargs never change):
// it reads only the run's state. For a run that succeeded in this process it also returns the
// values the run ended with (nil otherwise: read the thread's state); a run created with Await
// keeps them even when it ended before this call.
func (s *Service) WaitEnd(ctx context.Context, rec engine.RunRecord) (engine.RunRecord, graph.State, error) {
	s.results.expect(rec.RunID)
	st, err := s.waitState(ctx, rec.ThreadID, rec.RunID)
	values := s.results.take(ctx, rec.RunID)
	if err != nil {
		return rec, nil, err
	}
	if st == nil {
		return rec, nil, NotFound("runs.wait")
	}
	st.Onto(&rec)
	if rec.Status != engine.RunSuccess {
		values = nil
	}
	return rec, values, nil
}

// waitState blocks until the run has ended and returns its state, or nil when the run does not
// exist (deleted). A run this process does not know yet may have been created through another
// one: it catches up with the log once before it says so.
func (s *Service) waitState(ctx context.Context, thread, run string) (*projections.RunState, error) {
	tenant := engine.TenantFrom(ctx)
	caughtUp := false
	for {
		changed := s.runs.Watch(tenant, thread, run)
		st, ok, err := s.runs.State(tenant, thread, run)
		if err == nil && !ok && !caughtUp {
			caughtUp = true
			if cerr := s.projector.CatchUp(ctx); cerr == nil {
				st, ok, err = s.runs.State(tenant, thread, run)
			}
		}
		if err != nil || !ok || !st.Active() {
			s.runs.Unwatch(tenant, thread, run, changed)
			if err != nil {
				return nil, engine.E(engine.Op("runs.wait"), err)
			}
			if !ok {
				return nil, nil
			}
			return &st, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			s.runs.Unwatch(tenant, thread, run, changed)
			return nil, engine.E(engine.Op("runs.wait"), engine.Unavailable, ctx.Err())
		}
	}
}
