package runs

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/jetgraph/jetgraph/eventlog"
)

// leaseStore is what a worker needs of the lease bucket (eventlog.Leases gives it): exclusive,
// expiring holds on threads, renewed and released only by their holder.
type leaseStore interface {
	Acquire(ctx context.Context, key, holder string) (uint64, error)
	Renew(ctx context.Context, key, holder string, rev uint64) (uint64, error)
	Release(ctx context.Context, key string, rev uint64) error
}

// lease is a worker's hold on a thread: a key in the lease bucket that expires LeaseTTL after its
// last renewal. Only its holder may renew or delete it (compare-and-set on the revision).
type lease struct {
	s   *Service
	key string
	rev atomic.Uint64
}

// acquire takes the thread's lease, or fails when another worker holds it.
func (s *Service) acquire(ctx context.Context, tenant, thread string) (*lease, error) {
	key := tenant + "." + thread
	rev, err := s.leases.Acquire(ctx, key, s.cfg.Worker)
	if err != nil {
		return nil, err
	}
	l := &lease{s: s, key: key}
	l.rev.Store(rev)
	return l, nil
}

// keep renews the lease until ctx ends; when a renewal fails (the lease expired and another
// worker took it, or the log is unreachable past the lease's life) the run is cancelled.
func (l *lease) keep(ctx context.Context, cancel context.CancelCauseFunc) {
	t := time.NewTicker(l.s.cfg.LeaseTTL / 3)
	defer t.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, c := context.WithTimeout(ctx, l.s.cfg.LeaseTTL/3)
		rev, err := l.s.leases.Renew(rctx, l.key, l.s.cfg.Worker, l.rev.Load())
		c()
		switch {
		case err == nil:
			l.rev.Store(rev)
			lastOK = time.Now()
		case errors.Is(err, eventlog.ErrLeaseHeld), errors.Is(err, eventlog.ErrLeaseGone),
			time.Since(lastOK) > l.s.cfg.LeaseTTL:
			cancel(errLeaseLost)
			return
		}
	}
}

// release gives the lease up if it is still this worker's.
func (l *lease) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.s.leases.Release(ctx, l.key, l.rev.Load())
}
