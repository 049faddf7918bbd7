package crons

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/command"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/threads"
)

// DefaultScanInterval is how often the scheduler looks for due ticks: the bound of a tick's
// lateness on a healthy process, besides the time of its appends.
const DefaultScanInterval = 100 * time.Millisecond

// pendingGrace is how long a fire another process claimed may stay pending before this process
// completes it: the claimer completes its own at once, and it is still correct (only slower)
// when both do.
const pendingGrace = 500 * time.Millisecond

// CatchUpWindow is how late a tick may be and still fire: a cron whose next tick is older than
// this (no process was up, or its fire was pending on a process that died) fires only its latest
// missed tick and skips the older ones; within it, every tick fires, in order, one per scan.
const CatchUpWindow = 10 * time.Second

// Run fires the crons of every tenant until ctx ends, scanning every interval (default
// DefaultScanInterval). Every process runs it; see the package doc for why a tick fires once.
func (s *Service) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultScanInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := s.Scan(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("crons: scan", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// scanParallel bounds the crons a scan fires at once: a fire waits for two appends and a run's
// creation, and firing crons one after the other would make the last of a thousand late.
const scanParallel = 32

// Scan fires every cron due now and completes the fires left pending, once.
func (s *Service) Scan(ctx context.Context) error {
	now := s.now()
	due, err := s.view.Due(now)
	if err != nil {
		return err
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, scanParallel)
	for _, tc := range due {
		if tc.Pending != nil && now.Sub(tc.Pending.FiredAt.Time) < pendingGrace {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			tctx := engine.WithTenant(ctx, tc.Tenant)
			var err error
			if tc.Pending != nil {
				err = s.complete(tctx, tc.CronID, *tc.Pending)
			} else {
				err = s.fire(tctx, tc.CronID, now)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// fire claims the latest tick of cron id due at now (see the package doc) and, if this process
// claimed it, creates its run.
func (s *Service) fire(ctx context.Context, id string, now time.Time) error {
	const op = "crons.fire"
	agg := Aggregate(ctx, id)
	var claimed *engine.CronFiredData
	_, err := s.cmd.Run(ctx, op, func() (command.Decision, error) {
		claimed = nil
		st, ok, err := s.view.Get(agg.Tenant, id)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		if !ok || !st.Enabled || st.Pending != nil || st.NextRunDate == nil || st.NextRunDate.After(now) {
			return nil, nil // deleted, disabled, or fired by another process meanwhile
		}
		tz := ""
		if st.Timezone != nil {
			tz = *st.Timezone
		}
		sched, err := parseSchedule(st.Schedule, tz)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		tick, skipped := st.NextRunDate.Time, 0
		if now.Sub(tick) > CatchUpWindow {
			tick, skipped = sched.Latest(tick, now)
		}
		d := engine.CronFiredData{Tick: engine.At(tick), RunID: uuid.Must(uuid.NewV7()).String(),
			NextRunDate: nextTick(sched, st.EndTime, tick), Skipped: skipped}
		if st.ThreadID != nil {
			d.ThreadID = *st.ThreadID
		} else {
			d.ThreadID = uuid.Must(uuid.NewV7()).String()
		}
		dec, err := s.decide(op, agg, engine.CronFired, d)
		if err == nil {
			claimed = &d
		}
		return dec, err
	})
	if err != nil || claimed == nil {
		return err
	}
	if skipped := claimed.Skipped; skipped > 0 {
		s.log.Info("crons: missed ticks skipped", "cron_id", id, "skipped", skipped, "tick", claimed.Tick)
	}
	return s.complete(ctx, id, engine.CronFire{Tick: claimed.Tick, RunID: claimed.RunID, ThreadID: claimed.ThreadID})
}

// complete creates the run of a claimed fire (once, by its recorded id) and closes the fire.
func (s *Service) complete(ctx context.Context, id string, f engine.CronFire) error {
	const op = "crons.complete"
	st, err := s.state(ctx, op, id)
	if engine.Is(engine.NotFound, err) {
		return nil // deleted meanwhile: its fire makes no run
	} else if err != nil {
		return err
	}
	failure, err := s.createRun(ctx, st.Cron, f)
	if err != nil {
		return fmt.Errorf("crons: cron %s tick %s: %w", id, f.Tick.Format(time.RFC3339), err)
	}
	if failure != "" {
		s.log.Warn("crons: the run of a tick cannot be created", "cron_id", id, "tick", f.Tick, "err", failure)
	}
	agg := Aggregate(ctx, id)
	_, err = s.cmd.Run(ctx, op, func() (command.Decision, error) {
		cur, ok, err := s.view.Get(agg.Tenant, id)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		if !ok || cur.Pending == nil || !cur.Pending.Tick.Equal(f.Tick.Time) {
			return nil, nil // closed by another process, or deleted
		}
		return s.decide(op, agg, engine.CronFireDone, engine.CronFireDoneData{Tick: f.Tick, Error: failure})
	})
	return err
}

// createRun creates the run of fire f of cron c, idempotently. A run that cannot be created
// (its assistant or thread deleted, refused by the reject strategy) is reported as failure: the
// fire is closed with it, never retried; an error is a failure to try again.
func (s *Service) createRun(ctx context.Context, c engine.Cron, f engine.CronFire) (failure string, err error) {
	p := c.Payload
	if cf, ok := p.Config["configurable"].(map[string]any); ok {
		if u, ok := engine.UserOfConfigurable(cf); ok {
			ctx = engine.WithUser(ctx, u) // a cron fires as the user who made it
		}
	}
	rc := runs.Create{
		AssistantID: p.AssistantID, Input: p.Input, Config: p.Config, Context: p.Context,
		Metadata: runMetadata(c), StreamMode: p.StreamMode, InterruptBefore: p.InterruptBefore,
		InterruptAfter: p.InterruptAfter, Webhook: p.Webhook, Durability: p.Durability,
		MultitaskStrategy: p.MultitaskStrategy, RunID: f.RunID,
	}
	if c.ThreadID != nil {
		rc.ThreadID = *c.ThreadID
	} else {
		gone, err := s.threadGone(ctx, f.ThreadID)
		if err != nil || gone {
			return "", err // the tick's run ran, and its thread was deleted after it
		}
		rc.NewThreadID, rc.OnCompletion = f.ThreadID, c.OnRunCompleted
	}
	if _, err := s.runs.Create(ctx, rc); err != nil {
		switch engine.KindOf(err) {
		case engine.NotFound, engine.Invalid, engine.Conflict, engine.TooLarge:
			return err.Error(), nil
		}
		return "", err
	}
	return "", nil
}

// runMetadata is the metadata of a cron's runs, as on the reference servers: the cron's own (its
// owner, when the user's rules recorded one) under the payload's.
func runMetadata(c engine.Cron) map[string]any {
	if len(c.Metadata) == 0 {
		return c.Payload.Metadata
	}
	md := maps.Clone(c.Metadata)
	maps.Copy(md, c.Payload.Metadata)
	return md
}

// threadGone reports whether thread id existed and was deleted.
func (s *Service) threadGone(ctx context.Context, id string) (bool, error) {
	// Another process may have made and deleted it: the local projection must show that.
	if err := s.cmd.Projector.CatchUp(ctx); err != nil {
		return false, err
	}
	v, err := s.cmd.Projector.Version(threads.Aggregate(ctx, id))
	if err != nil || v == 0 {
		return false, err
	}
	_, err = s.threads.Info(ctx, id)
	if engine.Is(engine.NotFound, err) {
		return true, nil
	}
	return false, err
}
