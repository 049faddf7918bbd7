package runs

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

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
	rev, err := s.leases.Create(ctx, key, []byte(s.cfg.Worker))
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
		rev, err := l.s.leases.Update(rctx, l.key, []byte(l.s.cfg.Worker), l.rev.Load())
		c()
		if errors.Is(err, jetstream.ErrKeyExists) {
			// A renewal stored while its answer was lost (the cluster failed over) left the key
			// at a newer revision that is still this worker's.
			rev, err = l.adopt(ctx)
		}
		switch {
		case err == nil:
			l.rev.Store(rev)
			lastOK = time.Now()
		case errors.Is(err, jetstream.ErrKeyExists), errors.Is(err, jetstream.ErrKeyNotFound),
			time.Since(lastOK) > l.s.cfg.LeaseTTL:
			cancel(errLeaseLost)
			return
		}
	}
}

// adopt returns the lease's current revision if the key still holds this worker's name, and an
// error wrapping jetstream.ErrKeyExists if another worker holds it.
func (l *lease) adopt(ctx context.Context) (uint64, error) {
	rctx, cancel := context.WithTimeout(ctx, l.s.cfg.LeaseTTL/3)
	defer cancel()
	e, err := l.s.leases.Get(rctx, l.key)
	if err != nil {
		return 0, err
	}
	if string(e.Value()) != l.s.cfg.Worker {
		return 0, fmt.Errorf("runs: lease of %s held by %s: %w", l.key, e.Value(), jetstream.ErrKeyExists)
	}
	return e.Revision(), nil
}

// release gives the lease up if it is still this worker's.
func (l *lease) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.s.leases.Delete(ctx, l.key, jetstream.LastRevision(l.rev.Load()))
}
