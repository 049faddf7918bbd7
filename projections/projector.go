// Package projections folds the event log into bbolt, where the HTTP API reads: the projector
// machinery (projection files, cursors, batches, rebuilds) that every bounded context's folds
// use, and the runtime's folds (threads, runs, assistants, checkpoints, store). The tracing
// context's folds are in projections/traces.
//
// Invariants:
//   - Each projection stores its cursor (the last stream sequence it applied) in the same bbolt
//     transaction as the changes that event caused, so a crash never leaves a projection ahead of
//     or behind its cursor.
//   - A projection file that is missing, unreadable, of another schema version, or built from
//     another log is rebuilt by replaying the log from the start.
//   - Folds are deterministic functions of the events: a rebuild equals the live projection.
package projections

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// SchemaVersion is the version of the folds in this build. Bump it when a fold changes what it
// stores: files of another version are rebuilt from the log at start.
const SchemaVersion = 11

// Projection folds events into buckets of its own.
type Projection interface {
	// Name identifies the projection; its cursor is stored under it.
	Name() string
	// Buckets lists the top-level buckets the projection owns; they are created at open and
	// dropped when the projection is rebuilt.
	Buckets() []string
	// Apply folds one event. On an error the transaction is rolled back, the events before
	// it are applied, and the projector halts at it (see Projector.Halted): an acknowledged
	// event is never skipped, so whatever a fold could refuse must be refused by the command.
	Apply(tx *bbolt.Tx, e eventlog.Event) error
}

// Preparer is a Projection that does part of its folds ahead of their transaction: decoding an
// event's payload, or building what the fold writes when the record it changes does not exist
// yet. The projector calls Prepare for the events of the next batch, on several goroutines at
// once, while it applies the current batch; then ApplyPrepared, in log order in the
// transaction, in place of Apply, with what Prepare returned for the event.
//
// ApplyPrepared must fold exactly as Apply does, whatever the stored state: where what Prepare
// assumed does not hold (the record exists after all), it does the fold's full work. That keeps
// a rebuild equal to the live projection.
type Preparer interface {
	Projection
	// Prepare returns what ApplyPrepared needs of e (nil: nothing). It must not use the
	// database, and is called concurrently. ApplyPrepared may be called more than once with its
	// result (a batch is applied again after a failed fold), so it must not change it in ways
	// that alter a later fold.
	Prepare(e eventlog.Event) any
	// ApplyPrepared folds e, given what Prepare returned for it.
	ApplyPrepared(tx *bbolt.Tx, e eventlog.Event, prepared any) error
}

// committer is implemented by projections that tell readers about changes: committed is called
// after every transaction of a batch, with whether it was committed (or rolled back).
//
// Invariant: a fold changes nothing a reader sees outside its transaction. What it would change
// in memory (a cache, a run's live state) it stages, and committed publishes: the generation
// (Generation) is odd only from the commit to there.
type committer interface{ committed(ok bool) }

// batcher is implemented by projections that keep the records the folds of one batch change in
// memory and write each once at the batch's end: begin is called before the projection folds
// the batch's events, flush after them in the same transaction, discard when a fold failed.
type batcher interface {
	begin()
	flush(tx *bbolt.Tx) error
	discard()
}

// bucketFiller is implemented by projections whose folds open the buckets they write with
// fillBucket. The projector opens the buckets of the others at every transaction to set their
// FillPercent, which costs a bucket that the batch does not write a root lookup and a few
// allocations: most of the runtime stream's eighteen buckets, at every transaction.
type bucketFiller interface{ fillsBuckets() }

// fillBucket is tx.Bucket(name) (nil when it does not exist), set to split its pages
// fillPercent full. bbolt keeps the bucket tx opened, so only the first call costs a lookup.
func fillBucket(tx *bbolt.Tx, name []byte) *bbolt.Bucket {
	b := tx.Bucket(name)
	if b != nil {
		b.FillPercent = fillPercent
	}
	return b
}

// The runtime stream's projections open what they write with fillBucket.
func (*Threads) fillsBuckets()     {}
func (*Runs) fillsBuckets()        {}
func (*Checkpoints) fillsBuckets() {}
func (*Store) fillsBuckets()       {}
func (*Assistants) fillsBuckets()  {}
func (*Crons) fillsBuckets()       {}

// forgetter is implemented by projections that keep what they folded in memory too: forget is
// called when their buckets are dropped, to be rebuilt.
type forgetter interface{ forget() }

var (
	metaBucket    = []byte("_meta")
	cursorsBucket = []byte("_cursors")
)

// versionsBucket maps each aggregate of the stream to the sequence of its last event.
func (p *Projector) versionsBucket() []byte { return []byte("_versions/" + p.stream) }

// Projector keeps a set of projections of one stream up to date.
type Projector struct {
	db          *DB
	log         *eventlog.Log
	stream      string
	projections []Projection
	buckets     [][]byte // the top-level buckets of the projections that are not bucketFillers
	cursorKeys  [][]byte // by projection, the key of its cursor
	logger      *slog.Logger

	applied atomic.Uint64
	ready   chan struct{} // closed once the buckets exist and the start is decided
	readyMu sync.Once
	mu      sync.Mutex
	advance chan struct{} // closed and replaced whenever applied moves
	health  atomic.Pointer[error]
	// gen is odd while a transaction commits and its caches are published, and moves on with
	// each one (see Generation).
	gen atomic.Uint64
	// halted is set, and haltedCh closed, once a fold refused an event (see halt).
	halted   atomic.Pointer[error]
	haltedCh chan struct{}
	haltOnce sync.Once
	// versions holds the versions the last transactions wrote (see Version).
	versions committedCache[eventlog.Aggregate, uint64]

	// OnApply, when set before Run, is told of every applied batch (metrics).
	OnApply func(events int, d time.Duration)
	// Linger, when set before Run, is how long a batch that is not full waits for more events
	// before it is applied: fewer and larger transactions (a bbolt commit rewrites every page
	// the batch touched) for a projection whose writers do not wait for it, at the cost of that
	// much more delay before a write is readable.
	Linger time.Duration
	// BusyLinger, when set before Run, is Linger for a projection whose writers wait for it,
	// applied only under concurrent load: when a batch holds several messages at once, and for
	// as long as waiting brings more. A lone writer is never delayed.
	BusyLinger time.Duration
	// Upcasters, when set before Run, are the versions of the event types the folds read: every
	// event is upcast to its type's current version before it is prepared and folded (see
	// upcast.go). Nil means eventlog.Upcasts, this build's.
	Upcasters *eventlog.Upcasters
}

// NewProjector prepares projections of stream into db. Call Run to start it.
func NewProjector(db *DB, log *eventlog.Log, stream string, ps ...Projection) *Projector {
	p := &Projector{db: db, log: log, stream: stream, projections: ps, logger: db.log,
		advance: make(chan struct{}), ready: make(chan struct{}), haltedCh: make(chan struct{})}
	for _, pr := range ps {
		p.cursorKeys = append(p.cursorKeys, cursorKey(stream, pr.Name()))
		if _, ok := pr.(bucketFiller); ok {
			continue
		}
		for _, name := range pr.Buckets() {
			p.buckets = append(p.buckets, []byte(name))
		}
	}
	return p
}

func cursorKey(stream, name string) []byte { return []byte(stream + "/" + name) }

func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func readU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// prepare creates the buckets and decides where to start: from the smallest cursor, or from the
// beginning when the file belongs to another schema or another log.
func (p *Projector) prepare(ctx context.Context) (uint64, error) {
	created, err := p.log.StreamCreated(ctx, p.stream)
	if err != nil {
		return 0, err
	}
	last, err := p.log.LastSeq(ctx, p.stream)
	if err != nil {
		return 0, err
	}
	stamp := []byte(fmt.Sprintf("%d/%s", SchemaVersion, created.UTC().Format(time.RFC3339Nano)))
	var from uint64
	err = p.db.update(func(tx *bbolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(metaBucket)
		if err != nil {
			return err
		}
		cursors, err := tx.CreateBucketIfNotExists(cursorsBucket)
		if err != nil {
			return err
		}
		stampKey := []byte("log/" + p.stream)
		reset := string(meta.Get(stampKey)) != string(stamp)
		min := ^uint64(0)
		for _, pr := range p.projections {
			if c := readU64(cursors.Get(cursorKey(p.stream, pr.Name()))); c < min {
				min = c
			}
		}
		if len(p.projections) == 0 {
			min = 0
		}
		if min > last {
			reset = true // the log is behind the file: it was wiped or replaced
		}
		if reset {
			if meta.Get(stampKey) != nil {
				p.logger.Warn("projections: rebuilding from the log", "stream", p.stream, "reason", "schema or log changed")
			}
			if err := p.resetTx(tx); err != nil {
				return err
			}
			min = 0
		}
		for _, pr := range p.projections {
			for _, b := range pr.Buckets() {
				if _, err := tx.CreateBucketIfNotExists([]byte(b)); err != nil {
					return err
				}
			}
		}
		if _, err := tx.CreateBucketIfNotExists(p.versionsBucket()); err != nil {
			return err
		}
		from = min
		return meta.Put(stampKey, stamp)
	})
	if err != nil {
		return 0, fmt.Errorf("projections: prepare %s: %w", p.stream, err)
	}
	return from, nil
}

// resetTx drops every bucket of the projector's projections and their cursors.
func (p *Projector) resetTx(tx *bbolt.Tx) error {
	cursors := tx.Bucket(cursorsBucket)
	for _, pr := range p.projections {
		if f, ok := pr.(forgetter); ok {
			f.forget() // (if the transaction fails, what was forgotten is read from the file)
		}
		for _, b := range pr.Buckets() {
			if err := tx.DeleteBucket([]byte(b)); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
				return err
			}
		}
		if err := cursors.Delete(cursorKey(p.stream, pr.Name())); err != nil {
			return err
		}
	}
	// Versions of this stream's aggregates are rebuilt with them.
	p.versions.forget()
	if err := tx.DeleteBucket(p.versionsBucket()); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
		return err
	}
	return nil
}

// Reset drops the projections so that the next Run rebuilds them from the start of the log.
func (p *Projector) Reset() error {
	return p.db.update(func(tx *bbolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(cursorsBucket); err != nil {
			return err
		}
		return p.resetTx(tx)
	})
}

// fillPercent is how full bbolt leaves a page it splits. Most keys the folds insert come in
// order (time-ordered ids: UUIDv7 runs and threads, sequences), and bbolt's default of half full
// would leave every page behind the newest half empty.
const fillPercent = 0.9

// maxApplyBatch bounds the events folded in one bbolt transaction.
const maxApplyBatch = 2000

// Run applies events as they are appended until ctx ends. It returns only on ctx's end or on a
// failure to read the log.
func (p *Projector) Run(ctx context.Context) error {
	from, err := p.prepare(ctx)
	if err != nil {
		p.setHealth(err)
		return err
	}
	p.setApplied(from)
	p.readyMu.Do(func() { close(p.ready) })
	last, err := p.log.LastSeq(ctx, p.stream)
	if err != nil {
		return err
	}
	catchingUp := last > from
	syncAlways := !p.db.bolt.NoSync
	defer func() { p.db.bolt.NoSync = !syncAlways }()
	if catchingUp {
		// Replaying: the log is the truth, so skip fsync until caught up, then sync once.
		p.db.bolt.NoSync = true
		p.logger.Info("projections: catching up", "stream", p.stream, "from", from, "to", last)
	}
	sub, err := p.log.Subscribe(ctx, p.stream, from+1)
	if err != nil {
		p.setHealth(err)
		return err
	}
	defer sub.Stop()
	p.setHealth(nil)

	// Batches are read and prepared on one goroutine while the previous one is applied here.
	readCtx, stopReading := context.WithCancel(ctx)
	batches := make(chan preparedBatch)
	var readErr error
	reading := make(chan struct{})
	go func() {
		defer close(reading)
		defer close(batches)
		readErr = p.read(readCtx, sub, batches)
	}()
	defer func() {
		stopReading()
		sub.Stop()
		<-reading
	}()
	for b := range batches {
		for {
			err := p.apply(b)
			if err == nil {
				break
			}
			var pe *poison
			if errors.As(err, &pe) {
				p.halt(pe)
				<-ctx.Done()
				return nil
			}
			p.setHealth(err)
			p.logger.Error("projections: apply failed, retrying", "stream", p.stream, "err", err)
			if engine.Sleep(ctx, time.Second) != nil {
				return nil
			}
		}
		p.setHealth(nil)
		if catchingUp && p.applied.Load() >= last {
			catchingUp = false
			p.db.bolt.NoSync = !syncAlways
			if err := p.db.bolt.Sync(); err != nil {
				p.setHealth(err)
			}
			p.logger.Info("projections: caught up", "stream", p.stream, "seq", last)
		}
	}
	<-reading
	if ctx.Err() != nil {
		return nil
	}
	p.setHealth(readErr)
	return fmt.Errorf("projections: read %s: %w", p.stream, readErr)
}

// poison is a fold that failed on one event. The transaction that saw it is rolled back, the
// events before it are applied, and the projector halts: a failed fold never leaves a partial
// change, and never a gap.
type poison struct {
	projection string
	seq        uint64
	err        error
}

func (e *poison) Error() string {
	return fmt.Sprintf("projections: %s cannot fold event %d: %v", e.projection, e.seq, e.err)
}

// apply folds batch in one transaction. When a fold refuses an event, the events before it are
// folded and the *poison of the earliest refused event is returned: the projection stops there.
func (p *Projector) apply(batch preparedBatch) error {
	var refused *poison
	for {
		err := p.applyTx(batch)
		var pe *poison
		if !errors.As(err, &pe) {
			if err == nil && refused != nil {
				return refused
			}
			return err
		}
		// Folds run projection by projection: an event before this one may be refused by
		// a later projection, so the prefix is applied (and may be refused) again.
		refused = pe
		n := 0
		for n < len(batch.events) && batch.events[n].Seq < pe.seq {
			n++
		}
		if n == 0 {
			return refused
		}
		batch = batch.prefix(n)
	}
}

// prefix is the first n events of b with what was prepared of them.
func (b preparedBatch) prefix(n int) preparedBatch {
	out := preparedBatch{events: b.events[:n], prepared: make([][]any, len(b.prepared))}
	if b.refused != nil {
		out.refused = b.refused[:n]
	}
	for i, pr := range b.prepared {
		if pr != nil {
			out.prepared[i] = pr[:n]
		}
	}
	return out
}

// halt stops the projector at a refused event: it never skips an acknowledged event, so it
// folds nothing after it; the health check turns red, writers waiting for it fail, and an
// operator must fix the fold (a process restart tries the event again).
func (p *Projector) halt(pe *poison) {
	err := fmt.Errorf("projections: %s stream halted: %w", p.stream, pe)
	p.setHealth(err)
	p.haltOnce.Do(func() {
		p.halted.Store(&err)
		close(p.haltedCh)
	})
	p.logger.Error("projections: a fold refused an acknowledged event; the projection stops here",
		"stream", p.stream, "projection", pe.projection, "seq", pe.seq, "err", pe.err)
}

func (p *Projector) applyTx(b preparedBatch) error {
	start := time.Now()
	batch := b.events
	p.db.decoded.reset()
	committing := false
	err := p.db.update(func(tx *bbolt.Tx) error {
		cursors := tx.Bucket(cursorsBucket)
		versions := fillBucket(tx, p.versionsBucket())
		for _, name := range p.buckets {
			fillBucket(tx, name)
		}
		// The cursors' values, in one allocation (bbolt keeps a value until the commit).
		values := make([]byte, 8*len(p.projections))
		for i, pr := range p.projections {
			key := p.cursorKeys[i]
			from := readU64(cursors.Get(key))
			bt, batching := pr.(batcher)
			if batching {
				bt.begin()
			}
			cursor, err := foldBatch(tx, pr, i, b, from)
			if batching {
				if err != nil {
					bt.discard()
				} else {
					err = bt.flush(tx)
				}
			}
			if err != nil {
				return err
			}
			if err := cursors.Put(key, binary.BigEndian.AppendUint64(values[8*i:8*i:8*i+8], cursor)); err != nil {
				return err
			}
		}
		// Each aggregate's version is its last event's sequence: written once per aggregate,
		// however many of its events the batch holds (a busy batch interleaves many runs').
		written := make(map[eventlog.Aggregate]bool, 16)
		for i := len(batch) - 1; i >= 0; i-- {
			e := batch[i]
			if written[e.Aggregate] {
				continue
			}
			written[e.Aggregate] = true
			p.versions.stage(e.Aggregate, e.Seq)
			if err := versions.Put([]byte(e.Aggregate.Key()), u64(e.Seq)); err != nil {
				return err
			}
		}
		// Odd from here, the commit, to the caches' publication: readers see only committed
		// state (a read transaction, or a cache published at commit), so the fold itself
		// changes nothing they see, and a command decides while the next batch folds.
		p.gen.Add(1)
		committing = true
		return nil
	})
	// While the generation is odd still (see committedCache).
	p.versions.commit(err == nil)
	for _, pr := range p.projections {
		if c, ok := pr.(committer); ok {
			c.committed(err == nil)
		}
	}
	if committing {
		// Even again before the waiters are woken (setApplied), so that a command that waited
		// for this commit decides at once.
		p.gen.Add(1)
	}
	if err != nil {
		return err
	}
	p.setApplied(batch[len(batch)-1].Seq)
	if p.OnApply != nil {
		p.OnApply(len(batch), time.Since(start))
	}
	return nil
}

// foldBatch folds the events of b after from with pr, the projector's i-th projection, and
// returns the sequence of the last.
func foldBatch(tx *bbolt.Tx, pr Projection, i int, b preparedBatch, from uint64) (uint64, error) {
	cursor := from
	for j, e := range b.events {
		if e.Seq <= from {
			continue // applied before; events of one packed message share a sequence
		}
		var prepared any
		if b.prepared[i] != nil {
			prepared = b.prepared[i][j]
		}
		if b.refused != nil && b.refused[j] != nil {
			return 0, &poison{projection: pr.Name(), seq: e.Seq, err: b.refused[j]}
		}
		if err := applyOne(tx, pr, e, prepared); err != nil {
			return 0, &poison{projection: pr.Name(), seq: e.Seq, err: err}
		}
		cursor = e.Seq
	}
	return cursor, nil
}

// applyOne folds e, with what was prepared of it if pr is a Preparer, turning a panic in the
// fold into an error.
func applyOne(tx *bbolt.Tx, pr Projection, e eventlog.Event, prepared any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	if f, ok := prepared.(prepareFailure); ok {
		return f.err
	}
	if pp, ok := pr.(Preparer); ok {
		return pp.ApplyPrepared(tx, e, prepared)
	}
	return pr.Apply(tx, e)
}

func (p *Projector) setApplied(seq uint64) {
	p.applied.Store(seq)
	p.mu.Lock()
	close(p.advance)
	p.advance = make(chan struct{})
	p.mu.Unlock()
}

func (p *Projector) setHealth(err error) {
	if err == nil {
		p.health.Store(nil)
		return
	}
	p.health.Store(&err)
}

// Changed returns a channel that is closed the next time the projections apply events: a
// reader waiting for a record to change reads, then waits on it, then reads again.
func (p *Projector) Changed() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.advance
}

// Applied is the last stream sequence every projection has applied.
func (p *Projector) Applied() uint64 { return p.applied.Load() }

// Generation is a sequence lock on the projections: odd while a transaction that folded events
// commits and publishes what readers see, and different after one. A fold before its commit
// changes nothing a reader sees (stage what a cache will publish; see committedCache), so the
// lock is held for the commit only, not the fold: under load the next batch folds as soon as
// the last commits. Reads made between two equal, even generations saw one state of the
// projections; a command that read a record and then its aggregate's version checks it, so that
// it never decides on a record older than the version its append expects (see command.Run).
func (p *Projector) Generation() uint64 { return p.gen.Load() }

// Halted returns why the projector stopped for good (a fold refused an event), or nil.
func (p *Projector) Halted() error {
	if e := p.halted.Load(); e != nil {
		return *e
	}
	return nil
}

// Healthy returns the last failure of the projector, or nil.
func (p *Projector) Healthy() error {
	if err := p.Halted(); err != nil {
		return err
	}
	if e := p.health.Load(); e != nil {
		return *e
	}
	return nil
}

// WaitFor blocks until the projections have applied seq: a write handler calls it with its
// append's sequence so the client reads its own write.
func (p *Projector) WaitFor(ctx context.Context, seq uint64) error {
	select {
	case <-p.ready:
	case <-ctx.Done():
		return fmt.Errorf("projections: waiting for the projector to start: %w", ctx.Err())
	}
	for {
		p.mu.Lock()
		ch := p.advance
		p.mu.Unlock()
		if p.applied.Load() >= seq {
			return nil
		}
		select {
		case <-ch:
		case <-p.haltedCh:
			if p.applied.Load() >= seq {
				return nil
			}
			return fmt.Errorf("projections: waiting for seq %d: %w", seq, p.Halted())
		case <-ctx.Done():
			return fmt.Errorf("projections: waiting for seq %d (applied %d): %w", seq, p.applied.Load(), ctx.Err())
		}
	}
}

// CatchUp waits until the projections have applied everything in the log now: what a reader on
// another process does after losing an optimistic-concurrency race.
func (p *Projector) CatchUp(ctx context.Context) error {
	last, err := p.log.LastSeq(ctx, p.stream)
	if err != nil {
		return err
	}
	return p.WaitFor(ctx, last)
}

// Version returns the sequence of the last event of agg that the projections applied, or 0 when
// there is none: the Expect for the aggregate's next append. The versions the last transactions
// wrote are answered from memory: a command on a thread or run that just changed (a run's
// creation, start and end, on the thread just created) reads no file.
func (p *Projector) Version(agg eventlog.Aggregate) (uint64, error) {
	if v, ok := p.versions.get(agg); ok {
		return v, nil
	}
	var v uint64
	err := p.db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket(p.versionsBucket()); b != nil {
			v = readU64(b.Get([]byte(agg.Key())))
		}
		return nil
	})
	return v, err
}

// DB is the file the projector writes.
func (p *Projector) DB() *DB { return p.db }
