package runs

import (
	"context"
	"errors"
	"fmt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/command"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Cancel actions.
const (
	ActionInterrupt = "interrupt"
	ActionRollback  = "rollback"
)

// errCancelled is the cause of a run's context when a client cancelled it.
type errCancelled struct{ action string }

func (e errCancelled) Error() string { return "run cancelled (" + e.action + ")" }

// Cancel stops a run: a pending one never starts; a running one stops at its next step boundary.
// interrupt keeps what it did (status interrupted); rollback deletes the run and its checkpoints.
// With wait, Cancel returns once the run has ended.
func (s *Service) Cancel(ctx context.Context, thread, run, action string, wait bool) error {
	const op = "runs.cancel"
	if action == "" {
		action = ActionInterrupt
	}
	agg := threads.Aggregate(ctx, thread)
	_, err := s.cmd.Run(ctx, op, func() (command.Decision, error) {
		rec, ok, err := s.runs.Get(agg.Tenant, thread, run)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		if !ok {
			return nil, NotFound(op)
		}
		if !rec.Active() || rec.Cancel != "" {
			return nil, nil // ended, or already being cancelled
		}
		expect, err := s.cmd.Version(agg)
		if err != nil {
			return nil, err
		}
		var e eventlog.Event
		if rec.Status == engine.RunPending {
			// Nobody runs it yet: it ends here (the version check keeps a worker from starting it
			// at the same moment).
			e, err = s.endEvent(agg, rec, action)
		} else {
			e, err = eventlog.New(agg, engine.RunCancelRequestedEvent, engine.RunCancelRequestedData{RunID: run, Action: action})
		}
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		return command.Decision{{Event: e, Expect: expect}}, nil
	})
	if err != nil {
		return err
	}
	s.cancelRun(run, errCancelled{action})
	if wait {
		_, err := s.Wait(ctx, thread, run)
		if engine.Is(engine.NotFound, err) {
			return nil // rolled back: gone
		}
		return err
	}
	return nil
}

// endEvent is the event that ends a cancelled run: finished as interrupted, or deleted with its
// checkpoints for a rollback.
func (s *Service) endEvent(agg eventlog.Aggregate, rec engine.RunRecord, action string) (eventlog.Event, error) {
	if action == ActionRollback {
		restore := rec.Checkpoint
		if rec.Status == engine.RunPending {
			// It never ran: nothing of it to undo.
			return eventlog.New(agg, engine.RunDeletedEvent, engine.RunDeletedData{RunID: rec.RunID})
		}
		return eventlog.New(agg, engine.RunDeletedEvent, engine.RunDeletedData{RunID: rec.RunID, Rollback: true, RestoreTo: restore})
	}
	return eventlog.New(agg, engine.RunFinishedEvent, engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunInterrupted})
}

// CancelMany cancels runs of a thread: those named, or every active one with status (pending,
// running or all).
func (s *Service) CancelMany(ctx context.Context, thread string, runIDs []string, status, action string) error {
	if len(runIDs) == 0 {
		active, err := s.runs.Active(engine.TenantFrom(ctx), thread)
		if err != nil {
			return engine.E(engine.Op("runs.cancel"), err)
		}
		for _, r := range active {
			if status == "" || status == "all" || r.Status == status {
				runIDs = append(runIDs, r.RunID)
			}
		}
	}
	var errs []error
	for _, id := range runIDs {
		if err := s.Cancel(ctx, thread, id, action, false); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// CancelAll cancels every active run of the tenant with status (pending, running, or "" / all),
// on every thread.
func (s *Service) CancelAll(ctx context.Context, status, action string) error {
	active, err := s.runs.ActiveAll(engine.TenantFrom(ctx))
	if err != nil {
		return engine.E(engine.Op("runs.cancel"), err)
	}
	var errs []error
	for _, r := range active {
		if status == "" || status == "all" || r.Status == status {
			if err := s.Cancel(ctx, r.ThreadID, r.RunID, action, false); err != nil && !engine.Is(engine.NotFound, err) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Delete removes an ended run's record. An active run must be cancelled first.
func (s *Service) Delete(ctx context.Context, thread, run string) error {
	const op = "runs.delete"
	agg := threads.Aggregate(ctx, thread)
	_, err := s.cmd.Run(ctx, op, func() (command.Decision, error) {
		rec, ok, err := s.runs.Get(agg.Tenant, thread, run)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		if !ok {
			return nil, NotFound(op)
		}
		if rec.Active() {
			return nil, engine.E(engine.Op(op), engine.Conflict, fmt.Sprintf("Run %s is %s: cancel it first", run, rec.Status))
		}
		expect, err := s.cmd.Version(agg)
		if err != nil {
			return nil, err
		}
		e, err := eventlog.New(agg, engine.RunDeletedEvent, engine.RunDeletedData{RunID: run})
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		return command.Decision{{Event: e, Expect: expect}}, nil
	})
	return err
}

// cancelRun cancels the run's execution if it is executing in this process.
func (s *Service) cancelRun(run string, cause error) {
	s.mu.Lock()
	cancel := s.running[run]
	s.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// cancelLocal cancels the executions in this process of the thread's runs that a cancel request
// names (after an interrupt or rollback strategy).
func (s *Service) cancelLocal(tenant, thread string) {
	active, err := s.runs.Active(tenant, thread)
	if err != nil {
		return
	}
	for _, r := range active {
		if r.Cancel != "" {
			s.cancelRun(r.RunID, errCancelled{r.Cancel})
		}
	}
}
