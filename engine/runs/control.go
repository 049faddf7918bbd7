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
	ctx, err := s.access(ctx, "runs.cancel", engine.ActionUpdate, thread, run, map[string]any{"action": orInterrupt(action)})
	if err != nil {
		return err
	}
	if err := s.cancel(ctx, thread, []string{run}, "", action); err != nil {
		return err
	}
	if wait {
		_, err := s.Wait(ctx, thread, run)
		if engine.Is(engine.NotFound, err) {
			return nil // rolled back: gone
		}
		return err
	}
	return nil
}

// cancel cancels runs of one thread in one message, so that a worker never sees some of them
// cancelled and not the others: runIDs, or when there are none every active run with status
// ("" or "all": any). A run that has ended, or is being cancelled already, is left as it is;
// one that does not exist fails the whole request and nothing is cancelled.
func (s *Service) cancel(ctx context.Context, thread string, runIDs []string, status, action string) error {
	const op = "runs.cancel"
	if action == "" {
		action = ActionInterrupt
	}
	agg := threads.Aggregate(ctx, thread)
	var cancelled []string
	_, err := s.cmd.Run(ctx, op, func() (command.Decision, error) {
		cancelled = cancelled[:0]
		// The version first: what is read after it is at least as new as what the check expects.
		expect, err := s.cmd.Version(agg)
		if err != nil {
			return nil, err
		}
		var recs []engine.RunRecord
		if len(runIDs) == 0 {
			active, err := s.runs.Active(agg.Tenant, thread)
			if err != nil {
				return nil, engine.E(engine.Op(op), err)
			}
			for _, r := range active {
				if status == "" || status == "all" || r.Status == status {
					recs = append(recs, r)
				}
			}
		}
		for _, id := range runIDs {
			rec, ok, err := s.runs.Get(agg.Tenant, thread, id)
			if err != nil {
				return nil, engine.E(engine.Op(op), err)
			}
			if !ok {
				return nil, NotFound(op)
			}
			recs = append(recs, rec)
		}
		var d command.Decision
		for _, rec := range recs {
			if !rec.Active() || rec.Cancel != "" {
				continue // ended, or already being cancelled
			}
			var e eventlog.Event
			if rec.Status == engine.RunPending && !s.executing(rec.RunID) {
				// Nobody runs it yet: it ends here (the version check keeps a worker from
				// starting it at the same moment). One this process executes while its start
				// waits for its first write (start.go) is running: its worker ends it, keeping
				// what it did for an interrupt, as for any running run.
				e, err = s.endEvent(agg, rec, action)
			} else {
				e, err = eventlog.New(agg, engine.RunCancelRequestedEvent, engine.RunCancelRequestedData{RunID: rec.RunID, Action: action})
			}
			if err != nil {
				return nil, engine.E(engine.Op(op), err)
			}
			d = append(d, eventlog.Pending{Event: e, Expect: eventlog.Any})
			cancelled = append(cancelled, rec.RunID)
		}
		if len(d) > 0 {
			d[0].Expect = expect // the message's first event fences them all
		}
		return d, nil
	})
	if err != nil {
		return err
	}
	for _, run := range cancelled {
		s.cancelRun(run, errCancelled{action})
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
// running or all). They are cancelled together or not at all (see cancel).
func (s *Service) CancelMany(ctx context.Context, thread string, runIDs []string, status, action string) error {
	ctx, err := s.access(ctx, "runs.cancel", engine.ActionUpdate, thread, "", map[string]any{"action": orInterrupt(action)})
	if engine.Is(engine.NotFound, err) && len(runIDs) > 0 {
		return NotFound("runs.cancel") // as for runs that are not there
	}
	if err != nil {
		return err
	}
	return s.cancel(ctx, thread, runIDs, status, action)
}

// orInterrupt is a cancel's action, interrupt when none was given.
func orInterrupt(action string) string {
	if action == "" {
		return ActionInterrupt
	}
	return action
}

// Active returns every active run of the context's tenant.
func (s *Service) Active(ctx context.Context) ([]engine.RunRecord, error) {
	active, err := s.runs.ActiveAll(engine.TenantFrom(ctx))
	if err != nil {
		return nil, engine.E(engine.Op("runs.list"), err)
	}
	return active, nil
}

// CancelAll cancels every active run of the tenant with status (pending, running, or "" / all),
// on every thread: the runs of each thread in one message.
//
// The user's rules are asked once (threads.update with the action): the runs of threads their
// filter hides are left alone.
func (s *Service) CancelAll(ctx context.Context, status, action string) error {
	_, filter, err := engine.Authorize(ctx, engine.ResourceThreads, engine.ActionUpdate, func() map[string]any {
		return map[string]any{"thread_id": nil, "action": orInterrupt(action), "status": status}
	})
	if err != nil {
		return err
	}
	ctx = engine.Asked(ctx)
	active, err := s.runs.ActiveAll(engine.TenantFrom(ctx))
	if err != nil {
		return engine.E(engine.Op("runs.cancel"), err)
	}
	var errs []error
	done := map[string]bool{}
	for _, r := range active {
		if done[r.ThreadID] {
			continue
		}
		done[r.ThreadID] = true
		if !filter.IsZero() {
			if th, err := s.threads.Info(ctx, r.ThreadID); err != nil || !filter.Match(th.Metadata) {
				continue // gone, or not the user's
			}
		}
		if err := s.cancel(ctx, r.ThreadID, nil, status, action); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Delete removes an ended run's record. An active run must be cancelled first.
func (s *Service) Delete(ctx context.Context, thread, run string) error {
	const op = "runs.delete"
	ctx, err := s.access(ctx, op, engine.ActionDelete, thread, run, nil)
	if err != nil {
		return err
	}
	agg := threads.Aggregate(ctx, thread)
	_, err = s.cmd.Run(ctx, op, func() (command.Decision, error) {
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

// executing reports whether this process executes the run.
func (s *Service) executing(run string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.running[run]
	return ok
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
