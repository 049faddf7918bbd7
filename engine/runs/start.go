package runs

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/command"
	"github.com/jetgraph/jetgraph/eventlog"
)

// A run's start (run_started: its attempt, its worker, the checkpoint it starts from) is
// appended before anything else the run writes to its thread. A run that keeps its checkpoints
// in memory (durability "async" or "exit", see deferCheckpoints) writes nothing to the thread
// until its first flush or its end, so on a log no other process appends to (Exclusive) its
// start waits for that write and goes in the same message, or is appended alone once the run
// has gone on for Config.StartAfter: a short run is one message, not two (issue 28: a message
// fewer for every echo run).
//
// An eager start is also the run's barrier: its version check fails while the projection lags
// the log, so the run never starts from an older state than the log's. A later start waits
// instead for the projection to have folded all the log holds (Log.Known: on an Exclusive log
// every append is this process's), and the head it read then is the one its start names. A
// write to the thread while the run goes on, before its start is appended, is in the log before
// the start, but the run started from the head its start names, as it does from any write made
// while it runs: its checkpoints follow that head.
//
// Until its start is appended the log shows the run pending, as it is until a worker takes it:
//
//   - a cancel in that time finds it executing here (Service.executing) and requests it, as for
//     a running run: the worker's end appends the start, what the run kept (an interrupt), and
//     the end, in one message. Should the start be refused (the run ended otherwise), the run
//     is stopped and nothing of it appended: either the run's start and all it wrote are in
//     the log, or none of it;
//   - a process that dies in that time leaves the run pending, and it runs again as the same
//     attempt; nothing of it was written (its first flush would have carried the start).

// errRunChanged is a start refused because the run is no longer the pending run the worker took.
var errRunChanged = errors.New("runs: the run changed before it started")

// start records that attempt of the run begins, unless the run changed meanwhile (another
// worker took it, or it was cancelled): the version check is the fence. It returns the event's
// sequence without waiting for the local projection (the run executes meanwhile, and its end
// waits for it, see finish), and the thread's head checkpoint the run starts from.
//
// The head is read after the thread's version, so it is at least as new as the version the
// append expects: a head older than the log's (the previous run's end not folded yet) fails
// the version check, and the decision is made again once the projection caught up.
func (s *Service) start(ctx context.Context, agg eventlog.Aggregate, rec engine.RunRecord, attempt int) (uint64, string, error) {
	var head string
	seq, err := s.cmd.Append(ctx, "runs.start", func() (command.Decision, error) {
		if err := s.startable(agg, rec, false); err != nil {
			return nil, err
		}
		expect, err := s.cmd.Version(agg)
		if err != nil {
			return nil, err
		}
		if head, err = s.threadView.Head(agg.Tenant, agg.ID); err != nil {
			return nil, err
		}
		e, err := s.startEvent(agg, rec, attempt, head)
		if err != nil {
			return nil, err
		}
		return command.Decision{{Event: e, Expect: expect}}, nil
	})
	return seq, head, err
}

// startable reports whether the run is still as the worker took it: active, at the attempt
// read, and, unless cancelling is allowed (the run has begun), not being cancelled.
func (s *Service) startable(agg eventlog.Aggregate, rec engine.RunRecord, cancelling bool) error {
	cur, ok, err := s.runs.State(agg.Tenant, agg.ID, rec.RunID)
	if err != nil {
		return err
	}
	if !ok || !cur.Active() || cur.Attempt != rec.Attempt || (cur.Cancel != "" && !cancelling) {
		return errRunChanged
	}
	return nil
}

func (s *Service) startEvent(agg eventlog.Aggregate, rec engine.RunRecord, attempt int, head string) (eventlog.Event, error) {
	return eventlog.New(agg, engine.RunStartedEvent, engine.RunStartedData{RunID: rec.RunID, Attempt: attempt, Worker: s.cfg.Worker, Checkpoint: head})
}

// defaultStartAfter is Config.StartAfter's default: how long a run whose start waits for its
// first write (see above) may go on with the log showing it pending, before the start is
// appended alone. An echo run takes about a millisecond.
const defaultStartAfter = 100 * time.Millisecond

// laterStart is the start of a run that keeps its checkpoints in memory: decided when the run
// begins (the run is startable, its head read), appended with the run's first write to its
// thread (append, before a flush of its checkpoints), on its own after Config.StartAfter (the timer),
// or in one message with its end (take, by finish).
type laterStart struct {
	s      *Service
	agg    eventlog.Aggregate
	rec    engine.RunRecord // as the worker took it: the attempt before this one
	event  eventlog.Event
	cancel context.CancelCauseFunc // the run's execution
	timer  *time.Timer

	mu    sync.Mutex
	seq   uint64 // the start's sequence once appended
	taken bool   // by the run's end
}

// beginLater decides the start of attempt of the run and returns it, with the thread's head
// checkpoint the run starts from; nothing is appended yet. The start is appended on its own
// Config.StartAfter from now unless the run wrote or ended first; cancel stops the run if the start is
// refused then (the run ended meanwhile).
func (s *Service) beginLater(ctx context.Context, agg eventlog.Aggregate, rec engine.RunRecord, attempt int, cancel context.CancelCauseFunc) (*laterStart, string, error) {
	if err := s.projector.WaitFor(ctx, s.log.Known(eventlog.RuntimeStream)); err != nil {
		return nil, "", err
	}
	if err := s.startable(agg, rec, false); err != nil {
		return nil, "", err
	}
	head, err := s.threadView.Head(agg.Tenant, agg.ID)
	if err != nil {
		return nil, "", err
	}
	e, err := s.startEvent(agg, rec, attempt, head)
	if err != nil {
		return nil, "", err
	}
	l := &laterStart{s: s, agg: agg, rec: rec, event: e, cancel: cancel}
	// ctx is the thread's lease's: a start after the lease was lost is not appended.
	l.timer = time.AfterFunc(s.cfg.StartAfter, func() { _ = l.append(ctx) })
	return l, head, nil
}

// append appends the start unless it is appended or taken already. A start the run's state
// refuses (it ended, or another worker has it) cancels the run. A cancel requested meanwhile
// does not refuse it: the run has started, and its end follows.
func (l *laterStart) append(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seq > 0 || l.taken {
		return nil
	}
	seq, err := l.s.cmd.Append(ctx, "runs.start", func() (command.Decision, error) {
		if err := l.s.startable(l.agg, l.rec, true); err != nil {
			return nil, err
		}
		expect, err := l.s.cmd.Version(l.agg)
		if err != nil {
			return nil, err
		}
		return command.Decision{{Event: l.event, Expect: expect}}, nil
	})
	if errors.Is(err, errRunChanged) {
		l.cancel(errCancelled{ActionInterrupt})
	}
	if err == nil {
		l.seq = seq
	}
	return err
}

// take hands the start to the run's end, which appends it first in its message, unless it is
// appended already: then it returns its sequence, for the end to wait for.
func (l *laterStart) take() (eventlog.Event, uint64, bool) {
	if l == nil {
		return eventlog.Event{}, 0, false
	}
	l.timer.Stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seq > 0 {
		return eventlog.Event{}, l.seq, false
	}
	l.taken = true
	return l.event, 0, true
}

// stop stops the timer of a start that will not be appended (the run was left to another
// worker).
func (l *laterStart) stop() {
	if l == nil {
		return
	}
	l.timer.Stop()
	l.mu.Lock()
	l.taken = true
	l.mu.Unlock()
}
