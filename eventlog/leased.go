package eventlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// Leased work: the one way jetgraph keeps a lease while it works (a thread's runs, a
// deployment's pipeline step, a batch of traces to forward). Held is the work in progress: its
// Context is what the work runs under, renewals happen on a timer in the background, and the
// Context is cancelled (cause wrapping ErrLeaseLost) as soon as the lease is known lost, or
// could have expired.
//
// The invariant: the holder's Context is cancelled before the lease's TTL can run out without
// a successful renewal, so that no two processes do the same leased work at once, even when
// the holder is cut off from the log (its renewals failing, the lease expiring on the server
// while the holder cannot tell). In figures, for a lease of TTL t:
//
//   - a renewal is sent every RenewEvery(t) = t/3 after the last successful one, and again every
//     t/12 after a failure;
//   - a renewal counts from the moment it was sent, not answered (the server stored it later,
//     so the lease expires later than that);
//   - the work is cancelled GiveUpAfter(t) = t - t/4 after the last successful renewal (or the
//     acquisition) was sent, whatever renewals are in flight. The margin of t/4 is what the
//     work has to notice its Context and stop writing, and what covers timers firing late.
//
// A lease the server says is gone or held by another (ErrLeaseGone, ErrLeaseHeld) cancels the
// work at once. Whoever takes the lease over does so only once it expired on the server, which
// is t after the holder's last stored renewal: after the holder was cancelled.
//
// Two kinds of lease are held this way: a key of a Leases bucket (Leases.Hold), exclusive by
// compare-and-set; and the delivery of dispatch messages (DispatchQueue.Hold), whose AckWait is
// the TTL and whose renewal is an in-progress acknowledgement the consumer confirms.

// ErrLeaseLost is the cause (wrapped, with the reason) of a Held's Context when its lease was
// lost: taken over, expired, or not renewed in time to be sure it was still held.
var ErrLeaseLost = errors.New("eventlog: lease lost")

// errWorkDone is the cause of a Held's Context once its work released it.
var errWorkDone = errors.New("eventlog: leased work done")

// RenewEvery is how often a lease of TTL ttl is renewed while held.
func RenewEvery(ttl time.Duration) time.Duration { return ttl / 3 }

// GiveUpAfter is how long after the last successful renewal of a lease of TTL ttl (counted from
// when it was sent) its work is cancelled: the TTL less a margin of a quarter of it.
func GiveUpAfter(ttl time.Duration) time.Duration { return ttl - ttl/4 }

// retryEvery is how soon a renewal that failed (the log did not answer) is tried again.
func retryEvery(ttl time.Duration) time.Duration { return ttl / 12 }

// releaseWait bounds giving a lease up once its work is done.
const releaseWait = 5 * time.Second

// renewer is a lease as Held keeps it: renew it (an error wrapping ErrLeaseHeld or ErrLeaseGone
// when it is lost for good, any other when the log did not answer) and give it up.
type renewer interface {
	renew(ctx context.Context) error
	release(ctx context.Context) error
}

// InProgresser is a queue message whose worker says it is still at it (a *Dispatch).
type InProgresser interface {
	InProgress() error
}

// Held is leased work in progress; see the package's leased-work invariant above. Its methods
// are safe for concurrent use.
type Held struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	ttl    time.Duration
	lease  renewer
	done   chan struct{} // closed when the keeper returned

	mu       sync.Mutex
	progress []func() // stops of Progress
	released bool
}

// hold starts keeping lease, last renewed (or acquired) at since, for work under parent.
func hold(parent context.Context, ttl time.Duration, since time.Time, lease renewer) *Held {
	ctx, cancel := context.WithCancelCause(parent)
	h := &Held{ctx: ctx, cancel: cancel, ttl: ttl, lease: lease, done: make(chan struct{})}
	go h.keep(since)
	return h
}

// keep renews the lease until the work ends, and cancels it when the lease is lost or could
// have expired.
func (h *Held) keep(lastOK time.Time) {
	defer close(h.done)
	next := lastOK.Add(RenewEvery(h.ttl))
	var lastErr error
	for {
		giveUp := lastOK.Add(GiveUpAfter(h.ttl))
		at := next
		if giveUp.Before(at) {
			at = giveUp
		}
		wait := time.NewTimer(time.Until(at))
		select {
		case <-h.ctx.Done():
			wait.Stop()
			return
		case <-wait.C:
		}
		sent := time.Now()
		if !sent.Before(giveUp) {
			h.cancel(fmt.Errorf("%w: not renewed for %s of its %s (%v)", ErrLeaseLost, sent.Sub(lastOK).Round(time.Millisecond), h.ttl, lastErr))
			return
		}
		// A renewal never outlasts the moment the work must stop without one.
		rctx, cancel := context.WithDeadline(h.ctx, giveUp)
		err := h.lease.renew(rctx)
		cancel()
		switch {
		case h.ctx.Err() != nil:
			return
		case err == nil:
			lastOK, lastErr = sent, nil
			next = sent.Add(RenewEvery(h.ttl))
		case errors.Is(err, ErrLeaseHeld), errors.Is(err, ErrLeaseGone):
			h.cancel(fmt.Errorf("%w: %w", ErrLeaseLost, err))
			return
		default:
			lastErr = err
			next = time.Now().Add(retryEvery(h.ttl))
		}
	}
}

// Context is what the work runs under: it ends when the lease is lost (cause wrapping
// ErrLeaseLost), when the parent context given to Hold ends, or on Release.
func (h *Held) Context() context.Context { return h.ctx }

// Lost returns why the lease was lost (wrapping ErrLeaseLost), or nil while it is held, or
// when the work ended for another reason.
func (h *Held) Lost() error {
	if cause := context.Cause(h.ctx); errors.Is(cause, ErrLeaseLost) {
		return cause
	}
	return nil
}

// Progress tells msgs (the queue messages the work came from) in progress every interval (a
// third of their AckWait, say) for as long as the work is held, so that they are not handed to
// another worker meanwhile. It is best effort: the lease, not the messages, keeps the work
// exclusive.
func (h *Held) Progress(interval time.Duration, msgs ...InProgresser) {
	stop := keepInProgress(h.ctx, interval, msgs)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		stop()
		return
	}
	h.progress = append(h.progress, stop)
}

// Release ends the work: its Context is cancelled, renewals and Progress stop, and the lease
// is given up if it is still the holder's, so that another may take it at once. Only the
// first call does anything.
func (h *Held) Release() error {
	h.mu.Lock()
	if h.released {
		h.mu.Unlock()
		return nil
	}
	h.released = true
	stops := h.progress
	h.mu.Unlock()
	lost := h.Lost()
	h.cancel(errWorkDone)
	<-h.done
	for _, stop := range stops {
		stop()
	}
	if errors.Is(lost, ErrLeaseHeld) || errors.Is(lost, ErrLeaseGone) {
		return nil // nothing of the holder's is left to give up
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseWait)
	defer cancel()
	return h.lease.release(ctx)
}

// Hold acquires the lease of key for holder and returns the work held under ctx, renewed until
// Release. It fails wrapping ErrLeaseHeld when another holder has it.
func (s *Leases) Hold(ctx context.Context, key, holder string) (*Held, error) {
	since := time.Now()
	rev, err := s.Acquire(ctx, key, holder)
	if err != nil {
		return nil, err
	}
	return hold(ctx, s.ttl, since, &keyLease{s: s, key: key, holder: holder, rev: rev}), nil
}

// keyLease is a key of a Leases bucket as Held keeps it. Only the keeper, then Release once the
// keeper returned, touch rev.
type keyLease struct {
	s      *Leases
	key    string
	holder string
	rev    uint64
}

func (k *keyLease) renew(ctx context.Context) error {
	rev, err := k.s.Renew(ctx, k.key, k.holder, k.rev)
	if err == nil {
		k.rev = rev
	}
	return err
}

func (k *keyLease) release(ctx context.Context) error { return k.s.Release(ctx, k.key, k.rev) }

// ackProgress is the body of an in-progress acknowledgement.
var ackProgress = []byte("+WPI")

// Hold keeps msgs, delivered by this queue, as leased work under ctx until Release: each is
// acknowledged in progress every RenewEvery(AckWait), each time waiting for the consumer to
// confirm it, and the work is cancelled GiveUpAfter(AckWait) after the last confirmation, so
// that it stops before the messages can be handed to another worker. Messages of Fetch count
// from the fetch; others are confirmed in progress first (Hold fails when that fails, and the
// messages are left to come back). Release leaves the messages to be settled by the caller
// (Ack, Nak).
func (q *DispatchQueue) Hold(ctx context.Context, msgs ...*Dispatch) (*Held, error) {
	lease := &deliveryLease{nc: q.nc, msgs: msgs}
	since := time.Now()
	for _, m := range msgs {
		if m.fetched.IsZero() {
			wctx, cancel := context.WithTimeout(ctx, GiveUpAfter(q.ackWait))
			err := lease.renew(wctx)
			cancel()
			if err != nil {
				return nil, fmt.Errorf("eventlog: hold dispatch messages: %w", err)
			}
			break
		}
		if m.fetched.Before(since) {
			since = m.fetched
		}
	}
	return hold(ctx, q.ackWait, since, lease), nil
}

// deliveryLease is dispatch messages as Held keeps them: renewed by in-progress
// acknowledgements sent as requests, which the consumer answers once it took them into account.
type deliveryLease struct {
	nc   *nats.Conn
	msgs []*Dispatch
}

func (d *deliveryLease) renew(ctx context.Context) error {
	errs := make([]error, len(d.msgs))
	var wg sync.WaitGroup
	for i, m := range d.msgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := d.nc.RequestWithContext(ctx, m.msg.Reply(), ackProgress); err != nil {
				errs[i] = fmt.Errorf("eventlog: in progress: %w", err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (d *deliveryLease) release(context.Context) error { return nil }
