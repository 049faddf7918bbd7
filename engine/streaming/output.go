package streaming

import (
	"context"
	"errors"
	"fmt"

	"github.com/jetgraph/jetgraph/eventlog"
)

// OutputFollower reads the output of every run of a thread, decoded but not shaped, for
// protocols that shape it their own way (engine/threadstream). It always starts at the first
// message of a run, so a stateful shaping of a run sees it whole and numbers its events the same
// way on every read.
type OutputFollower struct {
	s    *Streamer
	cons *consumer
	msgs []Msg
}

// Position is where event k of the message at stream sequence seq stands in the output stream:
// the same numbering as the SSE ids of the run streams (a message holds up to 1024 events).
func Position(seq uint64, k int) uint64 { return position(seq, k) }

// FollowOutput starts reading a thread's output. With resume, since is a Position the client
// has: the reading starts at the first message of the run that position belongs to (or at the
// oldest kept message after it, when that run's output expired). Without resume it starts at
// the first message of the thread's oldest active run, of its latest run when none is active,
// or at the next message to come when an active run has published nothing yet.
func (s *Streamer) FollowOutput(ctx context.Context, thread string, since uint64, resume bool) (*OutputFollower, error) {
	if s.bus == nil {
		return nil, errNoLog
	}
	tenant := tenantOf(ctx)
	var from uint64
	var err error
	if resume {
		from, err = s.runStartOf(ctx, tenant, thread, messageOf(since))
	} else {
		from, err = s.outputStart(ctx, tenant, thread)
	}
	if err != nil {
		return nil, err
	}
	cons, err := s.consume(ctx, eventlog.OutputStream, threadFilter(tenant, thread), from)
	if err != nil {
		return nil, err
	}
	return &OutputFollower{s: s, cons: cons}, nil
}

// outputStart is where a thread's output is read from without a position (see FollowOutput).
func (s *Streamer) outputStart(ctx context.Context, tenant, thread string) (uint64, error) {
	b, err := s.bus.Bounds(ctx, eventlog.OutputStream)
	if err != nil {
		return 0, err
	}
	if s.cfg.Runs != nil {
		active, err := s.cfg.Runs.Active(tenant, thread)
		if err != nil {
			return 0, err
		}
		// The runs read once: a run that ends between two readings would be in neither the
		// active runs nor, read before it published, the latest.
		if len(active) > 0 {
			return s.activeStart(ctx, tenant, thread, b, active)
		}
	}
	last, err := s.bus.Last(ctx, threadFilter(tenant, thread))
	if errors.Is(err, eventlog.ErrNoMessage) {
		return b.Last + 1, nil
	}
	if err != nil {
		return 0, err
	}
	return s.runFirst(ctx, tenant, thread, last)
}

// runStartOf is the first kept message of the run whose message is at seq.
func (s *Streamer) runStartOf(ctx context.Context, tenant, thread string, seq uint64) (uint64, error) {
	last, err := s.bus.Last(ctx, threadFilter(tenant, thread))
	if errors.Is(err, eventlog.ErrNoMessage) || err == nil && last.Seq < seq {
		return seq, nil // nothing of the thread at or after seq is kept: read what comes
	}
	if err != nil {
		return 0, err
	}
	// The message at seq (or the next kept one of the thread) names its run.
	peek, err := s.consume(ctx, eventlog.OutputStream, threadFilter(tenant, thread), seq)
	if err != nil {
		return 0, err
	}
	defer peek.close()
	select {
	case m := <-peek.ch:
		return s.runFirst(ctx, tenant, thread, m)
	case <-peek.done:
		return 0, fmt.Errorf("streaming: reading the thread's output: %w", peek.Err())
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// runFirst is the sequence of the first kept message of the run that published m.
func (s *Streamer) runFirst(ctx context.Context, tenant, thread string, m eventlog.Message) (uint64, error) {
	first, err := s.bus.First(ctx, Subject(tenant, thread, runOfSubject(m.Subject)))
	if err != nil {
		return 0, err
	}
	return min(first.Seq, m.Seq), nil
}

// Next returns the events of the thread's next output message (they share its Seq; event k of
// the message is at Position(Seq, k)), waiting for it. The slice is reused by the next call.
func (f *OutputFollower) Next(ctx context.Context) ([]Msg, error) {
	select {
	case jm := <-f.cons.ch:
		f.msgs = f.s.decode(ctx, jm, f.msgs[:0])
		return f.msgs, nil
	case <-f.cons.done:
		if err := f.cons.Err(); err != nil {
			return nil, fmt.Errorf("streaming: reading the thread's output: %w", err)
		}
		return nil, errors.New("streaming: reading the thread's output stopped")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Pending is how many messages are read and waiting for Next.
func (f *OutputFollower) Pending() int { return len(f.cons.ch) }

// Close releases the follower's consumer. It is safe to call more than once.
func (f *OutputFollower) Close() { f.cons.close() }
