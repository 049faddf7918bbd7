package eventlog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Leases of a log whose leases this process alone may hold (Log.exclusive) are kept in the
// process, with the rules of a key-value bucket: one holder a key, each write a new revision,
// renewals and releases at the holder's revision, expiry a TTL after the last write. No other
// server can hold them (another that connects is refused them: checkOwner); a crash
// takes every holder with it, and the next process on the data folder starts with none. A
// lease then costs no message: a bucket's costs two stored messages (acquire, release) and their
// acknowledgements, which were about a tenth of the server's CPU per echo run (issue 28).

// localLeases are the leases of one bucket name, shared by every Leases opened on it.
type localLeases struct {
	mu   sync.Mutex
	rev  uint64 // the last revision written, of any key
	held map[string]localLease
}

// localLease is one held key.
type localLease struct {
	holder  string
	rev     uint64
	expires time.Time
}

// live returns the lease of key if it has not expired; an expired one is forgotten, as a
// bucket's TTL removes it. Called with mu held.
func (b *localLeases) live(key string, now time.Time) (localLease, bool) {
	e, ok := b.held[key]
	if ok && !now.Before(e.expires) {
		delete(b.held, key)
		return localLease{}, false
	}
	return e, ok
}

func (b *localLeases) acquire(key, holder string, ttl time.Duration) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if _, ok := b.live(key, now); ok {
		return 0, fmt.Errorf("eventlog: lease of %s: %w", key, ErrLeaseHeld)
	}
	b.rev++
	b.held[key] = localLease{holder: holder, rev: b.rev, expires: now.Add(ttl)}
	return b.rev, nil
}

func (b *localLeases) renew(key, holder string, rev uint64, ttl time.Duration) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	e, ok := b.live(key, now)
	switch {
	case !ok:
		return 0, fmt.Errorf("eventlog: lease of %s: %w", key, ErrLeaseGone)
	case e.holder != holder:
		return 0, fmt.Errorf("eventlog: lease of %s held by %s: %w", key, e.holder, ErrLeaseHeld)
	case e.rev != rev:
		return e.rev, nil // the holder's own later write: adopted, as Renew does
	}
	b.rev++
	b.held[key] = localLease{holder: holder, rev: b.rev, expires: now.Add(ttl)}
	return b.rev, nil
}

func (b *localLeases) release(key string, rev uint64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.live(key, time.Now())
	if !ok || e.rev != rev {
		return fmt.Errorf("eventlog: release lease of %s: not at revision %d", key, rev)
	}
	delete(b.held, key)
	return nil
}

// exclusive reports whether this process is the only one that may hold the log's leases: its
// server is embedded and does not listen, or listens for the control plane only (deployments,
// whose logs are accounts of their own, and jetgraph's commands, which hold no lease). Another
// server sharing the log joins it through --nats-listen; one that connects to the control
// plane's listener instead is refused its leases (markOwner).
func (l *Log) exclusive() bool {
	return l.srv != nil && (l.cfg.Listen == "" || l.cfg.Accounts && l.cfg.JetgraphListener)
}

// OwnerBucket is the key-value bucket where an exclusive log that listens says, while it runs,
// that its leases are kept in its process: a process that connects to it opens no leases.
const OwnerBucket = "JG_LOG_OWNER"

// Timing of the owner's mark: written every ownerEvery, gone ownerTTL after the last write.
const (
	ownerKey   = "leases"
	ownerTTL   = 15 * time.Second
	ownerEvery = ownerTTL / 3
)

// markOwner writes, until Close, that this process keeps the log's leases.
func (l *Log) markOwner(ctx context.Context) error {
	kv, err := l.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: OwnerBucket, TTL: ownerTTL, Storage: jetstream.MemoryStorage})
	if err != nil {
		return fmt.Errorf("eventlog: owner bucket: %w", err)
	}
	host, _ := os.Hostname()
	mark := []byte(fmt.Sprintf("process %d on %s", os.Getpid(), host))
	if _, err := kv.Put(ctx, ownerKey, mark); err != nil {
		return fmt.Errorf("eventlog: owner mark: %w", err)
	}
	l.ownerStop, l.ownerDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(l.ownerDone)
		t := time.NewTicker(ownerEvery)
		defer t.Stop()
		for {
			select {
			case <-l.ownerStop:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), ownerEvery)
				if _, err := kv.Put(ctx, ownerKey, mark); err != nil {
					l.log.Warn("eventlog: owner mark not renewed", "err", err)
				}
				cancel()
			}
		}
	}()
	return nil
}

// checkOwner fails when the log is another process's exclusive log (markOwner), whose leases
// are kept where this process cannot see them.
func (l *Log) checkOwner(ctx context.Context) error {
	kv, err := l.js.KeyValue(ctx, OwnerBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("eventlog: owner bucket: %w", err)
	}
	e, err := kv.Get(ctx, ownerKey)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		return nil
	case err != nil:
		return fmt.Errorf("eventlog: owner mark: %w", err)
	}
	return fmt.Errorf("eventlog: this log's leases are kept in memory by the process that embeds its NATS server (%s), "+
		"which shares it with other servers only when started with --nats-listen", e.Value())
}

// localLeases returns the in-process leases of bucket.
func (l *Log) localLeases(bucket string) *localLeases {
	l.leasesMu.Lock()
	defer l.leasesMu.Unlock()
	if l.leases == nil {
		l.leases = map[string]*localLeases{}
	}
	b := l.leases[bucket]
	if b == nil {
		b = &localLeases{held: map[string]localLease{}}
		l.leases[bucket] = b
	}
	return b
}
