package runs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/checkpoints"
	"github.com/jetgraph/jetgraph/engine/command"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/runner"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/engine/webhooks"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Names of the JetStream resources the scheduler uses.
const (
	DispatchConsumer = "JG_DISPATCH"
	LeaseBucket      = "JG_LEASES"
)

func init() {
	// A thread's events share one subject in the log (fewer entries in the server's subject
	// index), except its runs' creations, which the dispatch queue selects by subject.
	eventlog.ShareSubjects(engine.KindThread, engine.RunCreatedEvent)
}

var (
	errShutdown = errors.New("runs: the process is shutting down")
	errTimeout  = errors.New("runs: run timed out")
)

// Start makes this process a worker: it pulls the dispatch queue (one durable consumer shared by
// every process, filtered on run creations) and drains threads under leases until Shutdown.
func (s *Service) Start(ctx context.Context) error {
	leases, err := s.log.OpenLeases(ctx, LeaseBucket, s.cfg.LeaseTTL)
	if err != nil {
		return fmt.Errorf("runs: %w", err)
	}
	s.leases = leases
	queue, err := s.log.OpenDispatch(ctx, eventlog.DispatchConfig{
		Name: DispatchConsumer, Filter: "thread.*.*." + engine.RunCreatedEvent, AckWait: s.cfg.AckWait,
	})
	if err != nil {
		return fmt.Errorf("runs: %w", err)
	}
	cons := dispatchQueue(queue)
	msgs, err := s.pull(cons)
	if err != nil {
		return fmt.Errorf("runs: consume: %w", err)
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	// A fixed set of workers takes the messages, rather than a goroutine per message: a worker's
	// stack grows once to what running a graph needs, not again for every run (issue 28).
	work := make(chan *eventlog.Dispatch)
	for range s.cfg.Concurrency {
		go func() {
			for msg := range work {
				s.handle(runCtx, msg)
				s.wg.Done()
			}
		}()
	}
	go func() {
		defer close(work)
		wait := 100 * time.Millisecond
		for {
			msg, err := msgs.Next()
			if err != nil {
				// Stopped by Shutdown, or the iterator gave up (its consumer was lost in a
				// failover): pull anew until Shutdown.
				if s.stopping.Load() {
					return
				}
				s.logger.Warn("runs: dispatch consumer lost, pulling again", "err", err)
				time.Sleep(wait)
				wait = min(2*wait, 2*time.Second)
				if next, err := s.pull(cons); err == nil {
					msgs = next
				}
				continue
			}
			wait = 100 * time.Millisecond
			s.wg.Add(1)
			work <- msg // waits for a free worker
		}
	}()
	return nil
}

// dispatchQueue is what a worker needs of the dispatch queue (eventlog.DispatchQueue gives it):
// pulls of run creations, each delivered to one worker at a time until it acknowledges it.
type dispatchQueue interface {
	Pull(batch int) (*eventlog.DispatchPull, error)
}

// delivery is a delivered message of the dispatch queue (an *eventlog.Dispatch), as the worker
// settles it.
type delivery interface {
	Subject() string
	Seq() (uint64, error)
	Ack() error
	Nak(delay time.Duration) error
	InProgress() error
	Term() error
}

// pull starts pulling dispatch messages from cons, as many as there are workers. It is what
// Shutdown stops.
func (s *Service) pull(cons dispatchQueue) (*eventlog.DispatchPull, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping.Load() {
		return nil, errShutdown
	}
	msgs, err := cons.Pull(s.cfg.Concurrency)
	if err != nil {
		return nil, err
	}
	s.msgs = msgs
	return msgs, nil
}

// Shutdown stops taking work, lets executing runs finish for up to grace, then stops them
// without ending them and releases their threads so that another process resumes them.
func (s *Service) Shutdown(grace time.Duration) {
	s.mu.Lock()
	msgs := s.msgs
	first := !s.stopping.Swap(true)
	s.mu.Unlock()
	if msgs == nil {
		return
	}
	if first { // a second Shutdown (serve's drain, then Close) waits for the same runs
		msgs.Stop()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(grace):
	}
	s.mu.Lock()
	for _, cancel := range s.running {
		cancel(errShutdown)
	}
	s.mu.Unlock()
	s.stop()
	<-done
}

// threadOf reads tenant and thread from a dispatch message's subject, thread.<tenant>.<id>.<type>.
func threadOf(subject string) (tenant, thread string, ok bool) {
	parts := strings.Split(subject, ".")
	if len(parts) != 4 || parts[0] != "thread" {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// unservedGraphWait is how long a run whose graph this process does not serve is left for a
// process that does, before it fails here.
const unservedGraphWait = 30 * time.Second

// handle drains the thread of a dispatch message if it can take its lease.
func (s *Service) handle(ctx context.Context, msg delivery) {
	tenant, thread, ok := threadOf(msg.Subject())
	if !ok {
		_ = msg.Term()
		return
	}
	ctx = engine.WithTenant(ctx, tenant)
	held, err := s.leases.Hold(ctx, tenant+"."+thread, s.cfg.Worker)
	if err != nil {
		// Another worker drains this thread: ask again soon, in case it finishes first.
		_ = msg.Nak(250 * time.Millisecond)
		return
	}
	defer func() {
		// Given up in the background: the worker is free for its next thread meanwhile.
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			_ = held.Release()
		}()
	}()
	held.Progress(s.cfg.AckWait/3, msg)
	// The thread is drained under its lease: a lease lost (taken over, or not renewed in time
	// while the log is unreachable) stops the run before another worker can start it again,
	// and nothing of the thread is written here from then on.
	ctx = held.Context()
	// The run that sent the message must be in the local projection before the queue is read;
	// later runs of the thread are there once they are the worker's own writes or come with
	// messages of their own.
	if seq, err := msg.Seq(); err != nil || s.projector.WaitFor(ctx, seq) != nil {
		_ = msg.Nak(time.Second)
		return
	}
	// The end of the run executed last (its id and the sequence of its end), which the local
	// projection may not show yet: the thread is done when no other run is active, and the next
	// run starts from the state that end left.
	var ended string
	var endSeq uint64
	for {
		rec, ok, err := s.runs.Next(tenant, thread, ended)
		if err != nil {
			_ = msg.Nak(time.Second)
			return
		}
		if !ok {
			_ = msg.Ack()
			return
		}
		if endSeq > 0 {
			if err := s.projector.WaitFor(ctx, endSeq); err != nil {
				_ = msg.Nak(time.Second)
				return
			}
			ended, endSeq = "", 0
			continue
		}
		if wait := time.Until(rec.RunAt.Time); !rec.RunAt.IsZero() && wait > 0 {
			_ = msg.Nak(wait)
			return
		}
		if rec.Cancel == "" && !s.runner.Serves(ctx, rec.AssistantID) && time.Since(rec.CreatedAt.Time) < unservedGraphWait {
			// Another process on this log (the next or the previous revision of a deployment)
			// has the run's graph: it takes the run. Past the wait, the run fails here with the
			// reason, so a graph that no process serves never leaves a run pending forever.
			s.logger.Info("runs: run left to a process that serves its graph", "run_id", rec.RunID, "assistant_id", rec.AssistantID)
			_ = msg.Nak(500 * time.Millisecond)
			return
		}
		if endSeq, err = s.execute(ctx, rec); err != nil {
			s.logger.Warn("runs: run not finished here", "run_id", rec.RunID, "thread_id", thread, "err", err)
			_ = msg.Nak(time.Second)
			return
		}
		ended = rec.RunID
	}
}

// execute runs one run to its end and records the end, and returns the end's sequence (0 when
// the run had ended meanwhile). It returns an error when the run was left for another worker
// (lease lost, shutdown).
func (s *Service) execute(ctx context.Context, rec engine.RunRecord) (uint64, error) {
	agg := threads.Aggregate(ctx, rec.ThreadID)
	if rec.Cancel != "" {
		return s.finish(ctx, agg, runEnd{rec: rec}, nil, func() (eventlog.Event, error) { return s.endEvent(agg, rec, rec.Cancel) })
	}
	attempt := rec.Attempt + 1
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.mu.Lock()
	s.running[rec.RunID] = cancel // before the start: a cancel finds the run executing (start.go)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.running, rec.RunID)
		s.mu.Unlock()
	}()
	// The start is appended now, or with the run's first write (see start.go).
	deferred := s.deferCheckpoints(rec)
	var started uint64
	var later *laterStart
	var head string
	var err error
	if deferred != nil && s.log.Exclusive() {
		later, head, err = s.beginLater(ctx, agg, rec, attempt, cancel)
		if err == nil {
			deferred.Before(later.append)
		}
	} else {
		started, head, err = s.start(ctx, agg, rec, attempt)
	}
	if err != nil {
		return 0, err
	}
	rec.Attempt, rec.Status = attempt, engine.RunRunning
	if attempt == 1 {
		rec.Checkpoint = head
	}

	if s.cfg.RunTimeout > 0 {
		var stop context.CancelFunc
		runCtx, stop = context.WithTimeoutCause(runCtx, s.cfg.RunTimeout, errTimeout)
		defer stop()
	}
	go s.watch(runCtx, cancel, agg.Tenant, rec)

	req := s.request(rec)
	if deferred != nil {
		req.Saver = deferred
	}
	if s.cfg.Streamer != nil {
		req.Sink = s.cfg.Streamer.Begin(ctx, rec)
	}
	if attempt > 1 {
		// Taken over after a crash: continue from the run's last checkpoint, if it made one.
		if cps, err := s.runner.State(ctx, graph.Ref{ThreadID: rec.ThreadID}, false); err == nil && cps != nil && cps.Metadata["run_id"] == rec.RunID {
			req.Input, req.Command, req.CheckpointID = nil, nil, ""
		}
	}
	out, runErr := s.runner.Run(runCtx, req)
	cause := context.Cause(runCtx)
	if cause == nil && errors.Is(out.Err, graphs.ErrDrained) {
		cause = out.Err // stopped at a checkpoint for the shutdown: not over, left as a shutdown leaves it
	}
	if errors.Is(cause, graphs.ErrDrained) {
		// The checkpoint it stopped at is what the next process resumes from: appended now,
		// under the lease this attempt still holds.
		if deferred != nil {
			if err := deferred.Flush(ctx); err != nil {
				later.stop()
				deferred.Discard()
				return 0, errors.Join(cause, err)
			}
		}
		later.stop() // appended with the checkpoint, or not needed: nothing of the run was written
		return 0, cause
	}
	if errors.Is(cause, eventlog.ErrLeaseLost) || errors.Is(cause, errShutdown) {
		later.stop()
		deferred.Discard()
		return 0, cause
	}
	if s.cfg.Streamer != nil {
		s.cfg.Streamer.Flush(ctx, rec)
	}
	// What the run kept goes in the message of its end (appended before, after the start, when
	// it would not fit: Deferred.Before), and so does its start when not appended yet; the end
	// of a start appended is decided against the run record as the start left it.
	var cancelled errCancelled
	isCancelled := errors.As(cause, &cancelled)
	var kept []eventlog.Event
	if isCancelled && cancelled.action == ActionRollback {
		deferred.Discard() // the run is deleted with its checkpoints
	} else if kept, err = deferred.Take(ctx, finishBudget); err != nil {
		later.stop()
		return 0, err
	}
	start, startSeq, pending := later.take()
	if startSeq > 0 {
		started = startSeq
	}
	if err := s.projector.WaitFor(ctx, started); err != nil {
		return 0, err
	}
	end := runEnd{rec: rec}
	if pending {
		end.start = &start
	}
	if isCancelled {
		seq, err := s.finish(ctx, agg, end, kept, func() (eventlog.Event, error) { return s.endEvent(agg, rec, cancelled.action) })
		if err == nil && s.cfg.Streamer != nil {
			ended := rec
			ended.Cancel = cancelled.action // not an interrupt of the graph's, whatever the projection shows
			s.cfg.Streamer.End(ctx, ended, engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunInterrupted})
		}
		return seq, err
	}
	fin := engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunSuccess}
	switch {
	case errors.Is(cause, errTimeout):
		fin.Status, fin.Error = engine.RunFailed, &engine.RunError{Class: "TimeoutError", Message: fmt.Sprintf("Run exceeded its timeout of %s", s.cfg.RunTimeout), Cause: cause}
	case runErr != nil:
		fin.Status, fin.Error = engine.RunFailed, graph.RunErrorOf(runErr)
		if e := new(engine.Error); errors.As(runErr, &e) && e.Detail != "" {
			fin.Error.Message = e.Detail
		}
	case out.Err != nil:
		fin.Status, fin.Error = engine.RunFailed, graph.RunErrorOf(out.Err)
	case out.Interrupted:
		fin.Status = engine.RunInterrupted
	}
	if fin.Status == engine.RunFailed {
		s.logFailure(ctx, rec, out.Assistant, context.Cause(runCtx), runErr, out.Err)
	}
	if fin.Status == engine.RunSuccess {
		// A wait here may see the end folded before the append answers: it waits for settle.
		s.results.end(rec.RunID)
	}
	seq, err := s.finish(ctx, agg, end, kept, func() (eventlog.Event, error) {
		return eventlog.New(agg, engine.RunFinishedEvent, fin)
	})
	if fin.Status == engine.RunSuccess {
		var values graph.State
		if err == nil && seq > 0 { // this end, not an end appended meanwhile, was stored
			values = out.Values
		}
		s.results.settle(rec.RunID, values)
	}
	if err != nil {
		return 0, err
	}
	if fin.Status == engine.RunInterrupted && seq > 0 {
		// The stream's end reads what the run stopped on from the thread's state.
		if err := s.projector.WaitFor(ctx, seq); err != nil {
			return 0, err
		}
	}
	if s.cfg.Streamer != nil {
		s.cfg.Streamer.End(ctx, rec, fin)
	}
	s.afterRun(ctx, rec, fin, out.Values)
	return seq, nil
}

// request is the runner request of a run record's kwargs.
func (s *Service) request(rec engine.RunRecord) runner.Request {
	k := rec.Kwargs
	return runner.Request{RunID: rec.RunID, ThreadID: rec.ThreadID, AssistantID: rec.AssistantID, Input: k.Input,
		Command: commandOf(k.Command), Config: k.Config, Context: k.Context, Metadata: rec.Metadata,
		CheckpointID: string(k.CheckpointID), InterruptBefore: k.InterruptBefore, InterruptAfter: k.InterruptAfter,
		StreamModes: append([]engine.StreamMode{}, k.StreamMode...), // not nil: a run without modes needs none
		Durability:  k.Durability}
}

// commandOf is the graph command of a run's command as recorded ({update, goto, resume}), nil
// for none or for an update that is not an object (as the client's JSON would not decode).
func commandOf(m map[string]any) *graph.Command {
	if m == nil {
		return nil
	}
	cmd := graph.Command{Goto: m["goto"], Resume: m["resume"]}
	switch u := m["update"].(type) {
	case map[string]any:
		cmd.Update = u
	case nil:
	default:
		return nil
	}
	return &cmd
}

// finishBudget is room left beside a run's kept checkpoints for the event that ends it.
const finishBudget = 64 << 10

// deferCheckpoints returns the saver that keeps the checkpoints of a run whose durability is
// "async" (the default) or "exit", nil for "sync". A nil *checkpoints.Deferred takes and
// discards nothing. A run that streams "checkpoints" or "debug" saves synchronously whatever its
// durability: those events carry each checkpoint as read back from the thread.
func (s *Service) deferCheckpoints(rec engine.RunRecord) *checkpoints.Deferred {
	if s.cfg.Checkpoints == nil {
		return nil
	}
	if rec.Kwargs.Streams(engine.StreamCheckpoints, engine.StreamDebug) {
		return nil
	}
	switch rec.Kwargs.Durability {
	case engine.DurabilitySync:
		return nil
	case engine.DurabilityExit:
		return s.cfg.Checkpoints.Defer(0)
	default:
		return s.cfg.Checkpoints.Defer(s.cfg.AsyncFlush)
	}
}

// runEnd is the run that finish ends: rec as it executed, and its start when that is not
// appended yet (start, appended first in the end's message: the log still holds the run at the
// attempt before rec's).
type runEnd struct {
	rec   engine.RunRecord
	start *eventlog.Event
}

// finish appends the event that ends the run, after kept (the run's checkpoints not yet
// appended) in the same message, and after the run's start when that was not appended yet, if
// the run is still this attempt's. The version check of the message's first event fences them
// all. It returns the end's sequence (0 when the run had ended already) without waiting for the
// local projection, except for a temporary run, whose thread is deleted next.
func (s *Service) finish(ctx context.Context, agg eventlog.Aggregate, run runEnd, kept []eventlog.Event, event func() (eventlog.Event, error)) (uint64, error) {
	rec := run.rec
	appendEnd := s.cmd.Append
	if rec.Temporary {
		appendEnd = s.cmd.Run
	}
	return appendEnd(ctx, "runs.finish", func() (command.Decision, error) {
		cur, ok, err := s.runs.State(agg.Tenant, agg.ID, rec.RunID)
		if err != nil {
			return nil, err
		}
		if !ok || !cur.Active() {
			return nil, nil // already ended
		}
		attempt := rec.Attempt
		if run.start != nil {
			attempt-- // the start in this message makes it rec's
		}
		if cur.Attempt != attempt {
			return nil, errors.New("runs: another worker took the run over")
		}
		expect, err := s.cmd.Version(agg)
		if err != nil {
			return nil, err
		}
		e, err := event()
		if err != nil {
			return nil, err
		}
		d := make(command.Decision, 0, len(kept)+2)
		if run.start != nil {
			d = append(d, eventlog.Pending{Event: *run.start, Expect: eventlog.Any})
		}
		for _, k := range kept {
			d = append(d, eventlog.Pending{Event: k, Expect: eventlog.Any})
		}
		d = append(d, eventlog.Pending{Event: e, Expect: eventlog.Any})
		d[0].Expect = expect
		return d, nil
	})
}

// watch cancels the run's context when a cancel request for it reaches the projection, from
// whatever process it came, or when the run is gone: its thread was deleted, and the run stops
// as a rolled back one, appending nothing that would bring the thread back.
func (s *Service) watch(ctx context.Context, cancel context.CancelCauseFunc, tenant string, rec engine.RunRecord) {
	for {
		changed := s.runs.Watch(tenant, rec.ThreadID, rec.RunID)
		cur, ok, err := s.runs.State(tenant, rec.ThreadID, rec.RunID)
		if err == nil && (!ok || cur.Cancel != "") {
			s.runs.Unwatch(tenant, rec.ThreadID, rec.RunID, changed)
			action := cur.Cancel
			if !ok {
				action = ActionRollback
			}
			cancel(errCancelled{action})
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			s.runs.Unwatch(tenant, rec.ThreadID, rec.RunID, changed)
			return
		}
	}
}

// afterRun calls the webhook and removes a temporary run's thread.
func (s *Service) afterRun(ctx context.Context, rec engine.RunRecord, fin engine.RunFinishedData, values graph.State) {
	if rec.Webhook != "" && s.cfg.Webhooks != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.deliver(context.WithoutCancel(ctx), rec, fin, values)
		}()
	}
	if rec.Temporary {
		if err := s.threads.Delete(ctx, rec.ThreadID); err != nil && !engine.Is(engine.NotFound, err) {
			s.logger.Warn("runs: deleting a temporary thread", "thread_id", rec.ThreadID, "err", err)
		}
	}
}

func (s *Service) deliver(ctx context.Context, rec engine.RunRecord, fin engine.RunFinishedData, values graph.State) {
	now := engine.At(time.Now())
	p := webhooks.Payload{
		RunID: rec.RunID, ThreadID: rec.ThreadID, AssistantID: rec.AssistantID, Status: fin.Status,
		CreatedAt: rec.CreatedAt, UpdatedAt: now, RunStartedAt: rec.StartedAt, RunEndedAt: now,
		Metadata: rec.Metadata, Kwargs: &rec.Kwargs, MultitaskStrategy: rec.MultitaskStrategy, Values: values,
	}
	if rec.Temporary {
		p.ThreadID = ""
	}
	if fin.Error != nil {
		p.Error = fin.Error
	}
	res := s.cfg.Webhooks.Deliver(ctx, rec.Webhook, p)
	events, err := webhooks.Events(threads.Aggregate(ctx, rec.ThreadID), res)
	if err != nil || len(events) == 0 {
		return
	}
	for _, e := range events {
		if _, err := s.log.Append(ctx, e, eventlog.Any); err != nil {
			s.logger.Warn("runs: recording a webhook delivery", "run_id", rec.RunID, "err", err)
		}
	}
}
