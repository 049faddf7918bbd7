// Package command runs the write side of every event-sourced resource: read the aggregate's
// version from the local projection, decide the events, append them under optimistic
// concurrency, retry on a lost race, and answer only once the local projection has applied them
// (read-your-writes).
package command

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// MaxAttempts bounds the retries of a command that keeps losing optimistic-concurrency races.
// A lost race is decided again, never answered: with 20 clients writing one thread at once a
// command may lose a dozen races in a row, and only a livelock this long reaches the client.
const MaxAttempts = 64

// maxBackoff caps the jittered wait between two attempts.
const maxBackoff = 32 * time.Millisecond

// backoff is the wait before attempt (2 or more): a random share of an exponentially growing
// window, so that writers that collided spread out instead of colliding again.
func backoff(attempt int) time.Duration {
	window := time.Millisecond << min(attempt-1, 5)
	return time.Duration(rand.Int64N(int64(min(window, maxBackoff)))) + 1
}

// Runner executes commands against one stream and its projector.
type Runner struct {
	Log       *eventlog.Log
	Projector *projections.Projector
}

// Decision is what a command decided to append. Empty means there is nothing to do.
type Decision []eventlog.Pending

// Version returns the expected version of agg for its next append.
func (r *Runner) Version(agg eventlog.Aggregate) (eventlog.Expect, error) {
	v, err := r.Projector.Version(agg)
	if err != nil {
		return eventlog.Any, engine.E(engine.Op("command.version"), engine.Unavailable, err)
	}
	return eventlog.At(v), nil
}

// One is the decision to append one event of type typ with data to agg, expecting agg's
// current version: the decision of most commands on one aggregate.
func (r *Runner) One(op string, agg eventlog.Aggregate, typ string, data any) (Decision, error) {
	expect, err := r.Version(agg)
	if err != nil {
		return nil, err
	}
	e, err := eventlog.New(agg, typ, data)
	if err != nil {
		return nil, engine.E(engine.Op(op), err)
	}
	return Decision{{Event: e, Expect: expect}}, nil
}

// Run calls decide until its events are appended without a conflict, then waits until the local
// projection has applied them. decide reads the projection afresh each time it is called; it
// returns an *engine.Error to refuse the command. Run returns the last appended sequence (0 when
// nothing was appended).
func (r *Runner) Run(ctx context.Context, op string, decide func() (Decision, error)) (uint64, error) {
	seq, err := r.Append(ctx, op, decide)
	if err != nil || seq == 0 {
		return seq, err
	}
	if err := r.Projector.WaitFor(ctx, seq); err != nil {
		return seq, engine.E(engine.Op(op), engine.Unavailable, err)
	}
	return seq, nil
}

// Append is Run without the wait for the local projection: for a writer that has work to do
// before it needs to read its write (WaitFor the returned sequence then).
//
// A refusal that rests on state (decide returns an Exists or Conflict error: the thread is
// busy, the resource exists) is decided again once the projection has caught up with the log:
// the local projection may not show yet what a client has already seen happen (a run's end,
// streamed before it is folded here, or folded by another process), and a refusal must not
// contradict it.
func (r *Runner) Append(ctx context.Context, op string, decide func() (Decision, error)) (uint64, error) {
	caughtUp := false
	for attempt := 1; ; attempt++ {
		d, err := r.decideSteady(ctx, decide)
		if err != nil && !caughtUp && (engine.Is(engine.Conflict, err) || engine.Is(engine.Exists, err)) {
			caughtUp = true
			if cerr := r.Projector.CatchUp(ctx); cerr != nil {
				return 0, engine.E(engine.Op(op), engine.Unavailable, cerr)
			}
			d, err = r.decideSteady(ctx, decide)
		}
		if err != nil {
			return 0, err
		}
		if len(d) == 0 {
			return 0, nil
		}
		seq, err := r.Log.AppendBatch(ctx, d)
		if errors.Is(err, eventlog.ErrConflict) && attempt < MaxAttempts {
			// Another writer won: catch up with the log so decide sees its change, then retry.
			if cerr := r.Projector.CatchUp(ctx); cerr != nil {
				return 0, engine.E(engine.Op(op), engine.Unavailable, cerr)
			}
			if err := engine.Sleep(ctx, backoff(attempt)); err != nil {
				return 0, engine.E(engine.Op(op), engine.Unavailable, err)
			}
			continue
		}
		if errors.Is(err, eventlog.ErrConflict) {
			return 0, engine.E(engine.Op(op), engine.Conflict, "The resource was changed concurrently; retry the request.", err)
		}
		if err != nil {
			return 0, engine.E(engine.Op(op), engine.Unavailable, "The event log is unavailable.", err)
		}
		return seq, nil
	}
}

// maxTorn bounds the decisions made again because the projections changed while they were read.
const maxTorn = 200

// decideSteady calls decide until it has read the projections between two commits: decide reads
// records and then the version its append expects, each in a transaction of its own, and a
// commit in between would have it decide on a record older than that version (a run cancelled
// after it was deleted, a thread patched after it was deleted): the append would pass the
// version check and the projection would have to refuse the event. The projector folds
// without holding the lock (see projections.Projector.Generation), so a command waits for a
// commit at most, never for a fold: under load the folds run back to back.
func (r *Runner) decideSteady(ctx context.Context, decide func() (Decision, error)) (Decision, error) {
	for torn := 0; ; torn++ {
		g := r.Projector.Generation()
		d, err := decide()
		if err != nil || len(d) == 0 || (g%2 == 0 && r.Projector.Generation() == g) {
			return d, err
		}
		if torn == maxTorn {
			return nil, engine.E(engine.Unavailable, "The projections kept changing while the command was decided; retry the request.")
		}
		if r.Projector.Generation()%2 == 0 {
			continue // a commit ended while decide read: decide again at once
		}
		// Wait for the commit to end (the projector moves on once it has), or a little.
		t := time.NewTimer(time.Millisecond)
		select {
		case <-r.Projector.Changed():
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, engine.E(engine.Unavailable, ctx.Err())
		}
		t.Stop()
	}
}

// Sweep calls sweep every interval until ctx ends, logging what it deleted (what names it) and
// its failures: the expiry sweepers of threads, store items and traces share it.
func Sweep(ctx context.Context, interval time.Duration, log *slog.Logger, what string, sweep func(context.Context) (int, error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n, err := sweep(ctx); err != nil {
				log.Error("sweep failed", "of", what, "err", err)
			} else if n > 0 {
				log.Info("deleted expired "+what, "count", n)
			}
		}
	}
}
