package projections

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// The bbolt file of a process, and how its transactions are opened and counted.

// DB is the bbolt file of one process.
//
// Durability follows the log's: by default a commit is not fsynced (the embedded JetStream
// server itself fsyncs only every two minutes), which a killed process cannot hurt, since its
// writes are in the page cache. Only an operating-system crash can tear the file; OpenDB notices
// one (the machine's boot id changed while the file was open) and rebuilds from the log.
// SyncAlways makes every commit durable, as --sync always does for the log.
type DB struct {
	// decoded passes decoded payloads between the folds of a batch (shared.go).
	decoded decodedPayloads
	// primed holds the payloads their writers in this process handed over (primed.go).
	primed primedPayloads
	// activeRuns holds the active runs of the threads the last committed transactions changed,
	// by thread (activeKey(tenant, thread, "")): the ids, oldest first, as thread_active_runs has
	// them. The threads projection keeps it; the runs projection's queue reads it.
	activeRuns committedCache[string, []string]

	bolt      *bbolt.DB
	path      string
	log       *slog.Logger
	closeOnce sync.Once
	closeErr  error
}

// bootID identifies the running kernel boot; empty where the system does not say.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(b))
}

// OpenDB opens (or creates) the projection file at path. A file bbolt cannot open, or one left
// open by a machine that crashed since, is moved aside and a new one created: the log rebuilds it.
func OpenDB(path string, log *slog.Logger) (*DB, error) {
	if log == nil {
		log = slog.Default()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("projections: open %s: %w", path, err)
	}
	opts := &bbolt.Options{Timeout: 5 * time.Second, NoFreelistSync: true, FreelistType: bbolt.FreelistMapType, NoSync: true}
	b, err := bbolt.Open(path, 0o600, opts)
	reason := ""
	if err != nil && !errors.Is(err, berrors.ErrTimeout) {
		reason = err.Error()
	} else if err == nil {
		if r := crashedSince(b); r != "" {
			_ = b.Close()
			reason = r
		}
	}
	if reason != "" {
		aside := fmt.Sprintf("%s.corrupt-%d", path, time.Now().Unix())
		log.Warn("projections: file not trustworthy, rebuilding from the log", "path", path, "reason", reason, "moved_to", aside)
		if rerr := os.Rename(path, aside); rerr != nil {
			return nil, fmt.Errorf("projections: open %s: %s (and moving it aside failed: %v)", path, reason, rerr)
		}
		b, err = bbolt.Open(path, 0o600, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("projections: open %s: %w", path, err)
	}
	// Mark the file open on this boot; Close marks it closed cleanly.
	err = b.Update(func(tx *bbolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(metaBucket)
		if err != nil {
			return err
		}
		return meta.Put(openKey, []byte(bootID()))
	})
	if err == nil {
		err = b.Sync()
	}
	if err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("projections: open %s: %w", path, err)
	}
	return &DB{bolt: b, path: path, log: log}, nil
}

// openKey, in the meta bucket, holds the boot id of the process that has the file open; it is
// removed by a clean Close.
var openKey = []byte("open_on_boot")

// crashedSince says why a file cannot be trusted: it was left open (not closed cleanly) on an
// earlier boot of the machine, so unsynced pages may be lost. "" when it can be trusted.
func crashedSince(b *bbolt.DB) string {
	var reason string
	_ = b.View(func(tx *bbolt.Tx) error {
		meta := tx.Bucket(metaBucket)
		if meta == nil {
			return nil
		}
		if openOn := meta.Get(openKey); openOn != nil && string(openOn) != bootID() {
			reason = "left open by a machine that has restarted since"
		}
		return nil
	})
	return reason
}

// SyncAlways makes every commit durable before it returns.
func (db *DB) SyncAlways(on bool) { db.bolt.NoSync = !on }

// View runs f in a read transaction, counted.
func (db *DB) View(f func(tx *bbolt.Tx) error) error {
	readTxs.Add(1)
	return db.bolt.View(f)
}

// Update runs f in a write transaction beside the projectors: for what the log does not drive
// (a projection's buckets before its projector starts, the expiry of traces).
func (db *DB) Update(f func(tx *bbolt.Tx) error) error { return db.update(f) }

// writeTxs counts the write transactions of every DB of the process (BenchmarkEchoRunCounts).
var writeTxs atomic.Uint64

// readTxs counts the read transactions of every DB of the process (BenchmarkEchoRunCounts).
var readTxs atomic.Uint64

// ReadTransactions returns the number of bbolt read transactions (View) the process's
// projection files have run since it started, for benchmarks that count per run.
func ReadTransactions() uint64 { return readTxs.Load() }

// WriteTransactions returns the number of bbolt write transactions the process's projection
// files have run since it started, for benchmarks that count per run.
func WriteTransactions() uint64 { return writeTxs.Load() }

// update runs f in a write transaction, counted.
func (db *DB) update(f func(tx *bbolt.Tx) error) error {
	writeTxs.Add(1)
	return db.bolt.Update(f)
}

// Close marks the file closed cleanly, syncs and closes it. Stop the projectors first. Closing
// twice is harmless.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		err := db.update(func(tx *bbolt.Tx) error {
			if meta := tx.Bucket(metaBucket); meta != nil {
				return meta.Delete(openKey)
			}
			return nil
		})
		db.closeErr = errors.Join(err, db.bolt.Sync(), db.bolt.Close())
	})
	return db.closeErr
}

// Path is the file's location.
func (db *DB) Path() string { return db.path }
