package eventlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrLeaseHeld is returned (wrapped) when a lease is held by another holder: Acquire finds it
// taken, Renew finds it taken over.
var ErrLeaseHeld = errors.New("eventlog: lease held by another holder")

// ErrLeaseGone is returned (wrapped) by Renew when the lease no longer exists: it expired and
// nobody took it since.
var ErrLeaseGone = errors.New("eventlog: lease expired")

// Leases are exclusive, expiring holds on keys (a thread, say): a key of a JetStream key-value
// bucket that expires its TTL after its last write. Only the holder of a lease renews or releases
// it: every write is a compare-and-set on the revision the holder last wrote. Work done under a
// lease holds it with Hold (leased.go), which renews it and stops the work in time.
//
// On a log whose leases this process alone may hold (Log.exclusive: an embedded server that
// does not listen, or listens for the control plane only, what `jetgraph serve` runs by
// default) the leases are kept in the process instead, with the same rules (leases_local.go).
type Leases struct {
	kv    jetstream.KeyValue
	ttl   time.Duration
	local *localLeases // instead of kv
}

// OpenLeases creates (or updates) the lease bucket with the log's replicas. A cluster that is
// still forming is waited for, as long as ctx lets. On an exclusive log the leases are kept in
// the process: no bucket is made. On another process's exclusive log (checkOwner) it fails.
func (l *Log) OpenLeases(ctx context.Context, bucket string, ttl time.Duration) (*Leases, error) {
	if l.exclusive() {
		return &Leases{ttl: ttl, local: l.localLeases(bucket)}, nil
	}
	if err := l.checkOwner(ctx); err != nil {
		return nil, err
	}
	var kv jetstream.KeyValue
	err := l.Retry(ctx, "lease bucket "+bucket, func(ctx context.Context) error {
		var err error
		kv, err = l.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: bucket, TTL: ttl, Storage: jetstream.FileStorage, Replicas: l.cfg.Replicas,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Leases{kv: kv, ttl: ttl}, nil
}

// Acquire takes the lease of key for holder and returns its revision, or fails (wrapping
// ErrLeaseHeld) when another holder has it.
func (s *Leases) Acquire(ctx context.Context, key, holder string) (uint64, error) {
	if s.local != nil {
		return s.local.acquire(key, holder, s.ttl)
	}
	rev, err := s.kv.Create(ctx, key, []byte(holder))
	if errors.Is(err, jetstream.ErrKeyExists) {
		return 0, fmt.Errorf("eventlog: lease of %s: %w", key, ErrLeaseHeld)
	}
	return rev, err
}

// Renew writes the lease of key again for holder, who last wrote it at revision rev, and returns
// the new revision. It fails wrapping ErrLeaseHeld when another holder took the lease, and
// ErrLeaseGone when it expired; any other error is the log's (the lease may still be holder's).
//
// A renewal stored while its answer was lost (a cluster failed over) leaves the key at a newer
// revision than rev that is still holder's: Renew adopts it.
func (s *Leases) Renew(ctx context.Context, key, holder string, rev uint64) (uint64, error) {
	if s.local != nil {
		return s.local.renew(key, holder, rev, s.ttl)
	}
	next, err := s.kv.Update(ctx, key, []byte(holder), rev)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return 0, fmt.Errorf("eventlog: lease of %s: %w", key, ErrLeaseGone)
	case !errors.Is(err, jetstream.ErrKeyExists):
		return next, err
	}
	e, err := s.kv.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return 0, fmt.Errorf("eventlog: lease of %s: %w", key, ErrLeaseGone)
	case err != nil:
		return 0, err
	case string(e.Value()) != holder:
		return 0, fmt.Errorf("eventlog: lease of %s held by %s: %w", key, e.Value(), ErrLeaseHeld)
	}
	return e.Revision(), nil
}

// Release gives the lease of key up if it is still at revision rev (its holder's last write).
func (s *Leases) Release(ctx context.Context, key string, rev uint64) error {
	if s.local != nil {
		return s.local.release(key, rev)
	}
	return s.kv.Delete(ctx, key, jetstream.LastRevision(rev))
}
