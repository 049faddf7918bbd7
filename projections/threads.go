package projections

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Threads folds thread events into the current record of each thread, and an expiry index that
// the TTL sweeper reads.
//
// A thread's values (its state: the channels of its latest root checkpoint) are kept apart from
// its record, one key per channel in thread_values (see valuesPrefix); the record's "values" is {}
// when it has values there, null when it has none. A checkpoint then writes only the channels it
// changed, and a status change rewrites a small record, however big the state grew.
type Threads struct {
	db *DB
	// batch holds the records the folds of the projector's current batch changed, by key (nil:
	// deleted), written once at its end (see begin): a run's events, which mostly come in one
	// batch, then decode and encode its thread's record once instead of at each event. Nil
	// outside a batch: each fold reads and writes the bucket.
	batch map[string]*engine.Thread
	// batchHeads holds the thread heads the folds of the current batch set, by key ("": none),
	// written with the records: a run's root checkpoints, which mostly come in one batch, each
	// move the head, and only the last is written.
	batchHeads map[string]string
	// recent holds the records the last batches wrote, by key, as the file has them (times to
	// the microsecond): a run's events come in several batches (its creation, its start, its
	// checkpoints and end), and each would otherwise read back the record the one before wrote.
	// It is emptied when a transaction fails (its maps may hold what was rolled back), on a
	// truncation, and when it reaches maxRecentThreads. Used by the folds only.
	recent map[string]*engine.Thread
	// readable holds, for Info and Get, the records the last committed transactions wrote, and
	// heads the thread heads (Head), by key (see committedCache): a run's commands read the
	// thread they run on, which the folds wrote a moment before, without a transaction or a
	// decode.
	readable committedCache[string, cachedThread]
	heads    committedCache[string, string]
}

// cachedThread is a thread's record as the file has it, without its values (nil), and whether
// it has values (in thread_values).
type cachedThread struct {
	th     engine.Thread
	valued bool
}

// snapshot is th as Threads.readable keeps it: maps of its own (the folds change the maps of
// the records they keep), its values left out.
func snapshot(th *engine.Thread) cachedThread {
	out := *th
	out.Values = nil
	raw, isRaw := th.Values.(json.RawMessage)
	if p, ok := th.Values.(*json.RawMessage); ok && p != nil {
		raw, isRaw = *p, true
	}
	valued := th.Values != nil && (!isRaw || (len(raw) > 0 && string(raw) != "null"))
	out.Metadata, out.Config, out.Interrupts = maps.Clone(th.Metadata), maps.Clone(th.Config), maps.Clone(th.Interrupts)
	if th.TTL != nil {
		ttl := *th.TTL
		out.TTL = &ttl
	}
	return cachedThread{th: out, valued: valued}
}

// copy is the cached record for a reader, with maps of its own.
func (c cachedThread) copy() engine.Thread {
	th := c.th
	th.Metadata, th.Config, th.Interrupts = maps.Clone(th.Metadata), maps.Clone(th.Config), maps.Clone(th.Interrupts)
	if th.TTL != nil {
		ttl := *th.TTL
		th.TTL = &ttl
	}
	return th
}

// maxRecentThreads bounds Threads.recent: about the threads a busy server has runs on at once.
const maxRecentThreads = 4096

// NewThreads returns the threads projection stored in db.
func NewThreads(db *DB) *Threads { return &Threads{db: db} }

var (
	threadsBucket      = []byte("threads")
	threadValuesBucket = []byte("thread_values")
	threadExpiryBucket = []byte("thread_expiry")
)

// hasValues is the "values" of a record whose values are in thread_values.
var hasValues = json.RawMessage("{}")

// valuesPrefix is the prefix of the thread_values keys of the thread under key (tenantKey):
// key 00 channel. Thread ids hold no 00 byte, so no thread's prefix is another's.
func valuesPrefix(key []byte) []byte { return append(bytes.Clone(key), 0x00) }

// ValueRef stands, in a thread's values as the projection reads them, for a channel's value a
// fold cannot read: one the checkpoint put in the object store (engine.BlobData.Ref), named by
// its digest. threads.Service resolves it before a client sees the thread.
type ValueRef string

// valueRefMark starts a stored channel value that is a ValueRef (a JSON text never starts with it).
const valueRefMark = '@'

// storedValue is what thread_values holds for a channel: its JSON, or its object-store reference.
func storedValue(b engine.BlobData) []byte {
	if b.Value == nil && b.Ref != "" {
		return append([]byte{valueRefMark}, b.Ref...)
	}
	return b.Value
}

// readValues returns the values of the thread under key, decoded (ValueRef for those in the
// object store).
func readValues(tx *bbolt.Tx, key []byte) (map[string]any, error) {
	values := map[string]any{}
	prefix := valuesPrefix(key)
	c := tx.Bucket(threadValuesBucket).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(v) > 0 && v[0] == valueRefMark {
			values[string(k[len(prefix):])] = ValueRef(v[1:])
			continue
		}
		var x any
		if err := decodeJSON(v, &x); err != nil {
			return nil, fmt.Errorf("projections: value %q: %w", k, err)
		}
		values[string(k[len(prefix):])] = x
	}
	return values, nil
}

// withValues reads th's values into it when its record says it has some.
func withValues(tx *bbolt.Tx, key []byte, th *engine.Thread) error {
	if th.Values == nil {
		return nil
	}
	values, err := readValues(tx, key)
	th.Values = values
	return err
}

// setValues replaces the values of the thread under key with those of channels (raw JSON by
// channel; internal channels are left out).
func setValues(tx *bbolt.Tx, key []byte, channels map[string]json.RawMessage) error {
	b := fillBucket(tx, threadValuesBucket)
	prefix := valuesPrefix(key)
	if err := deletePrefix(b, prefix); err != nil {
		return err
	}
	for ch, raw := range channels {
		if internalChannel(ch) {
			continue
		}
		if err := b.Put(append(bytes.Clone(prefix), ch...), raw); err != nil {
			return err
		}
	}
	return nil
}

// Name implements Projection.
func (*Threads) Name() string { return "threads" }

// Buckets implements Projection.
func (*Threads) Buckets() []string {
	return []string{string(threadsBucket), string(threadValuesBucket), string(threadExpiryBucket), string(threadHeadsBucket), string(threadActiveRunsBucket), string(threadNextBucket)}
}

func tenantKey(tenant, id string) []byte { return []byte(tenant + "/" + id) }

// Apply implements Projection.
func (t *Threads) Apply(tx *bbolt.Tx, e eventlog.Event) error {
	if e.Aggregate.Kind != "thread" {
		if err := t.writeBatch(tx); err != nil { // (a truncation empties the buckets)
			return err
		}
		truncated, err := onTruncate(tx, e, func(d engine.TruncatedData) bool { return d.Threads }, t.Buckets()...)
		if truncated {
			clear(t.recent)
			t.readable.dropAll()
			t.heads.dropAll()
			t.db.activeRuns.dropAll()
		}
		return err
	}
	b := fillBucket(tx, threadsBucket)
	key := tenantKey(e.Aggregate.Tenant, e.Aggregate.ID)
	at := engine.At(e.Time)
	switch e.Type {
	case engine.RunCreatedEvent, engine.RunFinishedEvent, engine.RunDeletedEvent:
		return t.applyRun(tx, e)
	case engine.ThreadCreated:
		var d engine.ThreadCreatedData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		th := engine.Thread{
			ThreadID: e.Aggregate.ID, CreatedAt: at, UpdatedAt: at, StateUpdatedAt: at,
			Metadata: orEmpty(d.Metadata), Status: engine.ThreadIdle, Config: orEmpty(d.Config),
			Interrupts: map[string]any{},
		}
		if err := t.setTTL(tx, e, &th, d.TTL); err != nil {
			return err
		}
		// Its head, for the readers: none, unless a thread of that id left one.
		t.heads.stage(string(key), t.head(tx, key))
		return t.store(b, key, th)
	case engine.ThreadPatched:
		var d engine.ThreadPatchedData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		th, ok, err := t.load(b, key) // values kept as they are, numbers unrounded
		if err != nil || !ok {
			return orMissing(err, e)
		}
		maps.Copy(th.Metadata, d.Metadata)
		th.UpdatedAt = at
		if d.TTL != nil {
			if err := t.setTTL(tx, e, &th, d.TTL); err != nil {
				return err
			}
		}
		return t.store(b, key, th)
	case engine.ThreadDeleted:
		th, ok, err := t.load(b, key)
		if err != nil || !ok {
			return err // deleting what is gone is a no-op
		}
		if err := t.clearExpiry(tx, e.Aggregate, th.TTL); err != nil {
			return err
		}
		if err := t.setHead(tx, key, ""); err != nil {
			return err
		}
		if err := deletePrefix(fillBucket(tx, threadActiveRunsBucket), append(bytes.Clone(key), '/')); err != nil {
			return err
		}
		if err := deletePrefix(fillBucket(tx, threadValuesBucket), valuesPrefix(key)); err != nil {
			return err
		}
		if err := deletePrefix(fillBucket(tx, threadNextBucket), valuesPrefix(key)); err != nil {
			return err
		}
		if t.batch != nil {
			t.batch[string(key)] = nil
		}
		delete(t.recent, string(key))
		t.readable.drop(string(key))
		t.heads.drop(string(key))
		t.db.activeRuns.drop(string(key) + "/")
		return b.Delete(key)
	case engine.ThreadCheckpoint:
		return t.applyCheckpoint(tx, e, key, at)
	case engine.ThreadWrites:
		return t.applyWrites(tx, e, key, at)
	}
	return nil
}

func (t *Threads) setTTL(tx *bbolt.Tx, e eventlog.Event, th *engine.Thread, spec *engine.TTLSpec) error {
	if err := t.clearExpiry(tx, e.Aggregate, th.TTL); err != nil {
		return err
	}
	th.TTL = nil
	if spec == nil || spec.Minutes <= 0 {
		return nil
	}
	// To the microsecond, as the record keeps it: the key clearExpiry makes from the record
	// read back must be this one.
	expires := e.Time.Add(time.Duration(spec.Minutes * float64(time.Minute))).Truncate(time.Microsecond)
	th.TTL = &engine.ThreadTTL{Strategy: spec.Strategy, Minutes: spec.Minutes, ExpiresAt: engine.At(expires)}
	return fillBucket(tx, threadExpiryBucket).Put(expiryKey(expires, e.Aggregate), nil)
}

func (t *Threads) clearExpiry(tx *bbolt.Tx, agg eventlog.Aggregate, ttl *engine.ThreadTTL) error {
	if ttl == nil {
		return nil
	}
	return fillBucket(tx, threadExpiryBucket).Delete(expiryKey(ttl.ExpiresAt.Time, agg))
}

// expiryKey orders expiries by time: 8 bytes of unix nanoseconds, then tenant/id.
func expiryKey(at time.Time, agg eventlog.Aggregate) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano()))
	return append(k, tenantKey(agg.Tenant, agg.ID)...)
}

// Get returns the thread, or false when it does not exist.
func (t *Threads) Get(tenant, id string) (engine.Thread, bool, error) {
	if c, ok := t.readable.get(string(tenantKey(tenant, id))); ok && !c.valued {
		return c.copy(), true, nil
	}
	var th engine.Thread
	var ok bool
	err := t.db.View(func(tx *bbolt.Tx) error {
		key := tenantKey(tenant, id)
		var err error
		if ok, err = getJSON(tx.Bucket(threadsBucket), key, &th); err != nil || !ok {
			return err
		}
		return withValues(tx, key, &th)
	})
	return th, ok, err
}

// Info returns thread tenant/id without its values (nil), which it does not decode: for the
// many reads that need only a thread's metadata, config or status, whatever its state's size.
func (t *Threads) Info(tenant, id string) (engine.Thread, bool, error) {
	if c, ok := t.readable.get(string(tenantKey(tenant, id))); ok {
		return c.copy(), true, nil
	}
	var th engine.Thread
	var ok bool
	err := t.db.View(func(tx *bbolt.Tx) error {
		var err error
		th, ok, err = getThreadRaw(tx.Bucket(threadsBucket), tenantKey(tenant, id))
		return err
	})
	th.Values = nil
	return th, ok, err
}

// Search returns one page of the threads of tenant matching q, and how many match in all.
func (t *Threads) Search(tenant string, q engine.ThreadQuery) ([]engine.Thread, int, error) {
	var all []engine.Thread
	ids := map[string]bool{}
	for _, id := range q.IDs {
		ids[id] = true
	}
	err := t.db.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(threadsBucket).Cursor()
		prefix := []byte(tenant + "/")
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(ids) > 0 && !ids[string(k[len(prefix):])] {
				continue
			}
			var th engine.Thread
			if err := decodeJSON(v, &th); err != nil {
				return fmt.Errorf("projections: thread %s: %w", k, err)
			}
			if err := withValues(tx, k, &th); err != nil {
				return err
			}
			if q.Status != "" && th.Status != q.Status {
				continue
			}
			if len(q.Metadata) > 0 && !engine.Contains(anyMap(th.Metadata), anyMap(q.Metadata)) {
				continue
			}
			if !q.Auth.Match(th.Metadata) {
				continue
			}
			if len(q.Values) > 0 && !engine.Contains(th.Values, anyMap(q.Values)) {
				continue
			}
			all = append(all, th)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	sortThreads(all, q.SortBy, q.SortOrder)
	return page(all, q.Offset, q.Limit), len(all), nil
}

func sortThreads(ts []engine.Thread, by, order string) {
	key := func(th engine.Thread) string {
		switch by {
		case "thread_id":
			return th.ThreadID
		case "status":
			return th.Status
		case "created_at":
			return th.CreatedAt.Format(engine.TimeLayout)
		case "state_updated_at":
			return th.StateUpdatedAt.Format(engine.TimeLayout)
		}
		return th.UpdatedAt.Format(engine.TimeLayout)
	}
	slices.SortStableFunc(ts, func(a, b engine.Thread) int {
		c := strings.Compare(key(a), key(b))
		if c == 0 {
			c = strings.Compare(a.ThreadID, b.ThreadID)
		}
		if order != "asc" {
			c = -c
		}
		return c
	})
}

// Expired returns up to limit threads whose TTL has passed at now.
func (t *Threads) Expired(now time.Time, limit int) ([]eventlog.Aggregate, error) {
	var out []eventlog.Aggregate
	err := t.db.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(threadExpiryBucket).Cursor()
		for k, _ := c.First(); k != nil && len(out) < limit; k, _ = c.Next() {
			if int64(binary.BigEndian.Uint64(k[:8])) > now.UnixNano() {
				break
			}
			tenant, id, _ := strings.Cut(string(k[8:]), "/")
			out = append(out, eventlog.Aggregate{Kind: "thread", Tenant: tenant, ID: id})
		}
		return nil
	})
	return out, err
}

// begin starts a batch: the folds until flush keep the thread records they change in memory.
func (t *Threads) begin() { t.batch = map[string]*engine.Thread{} }

// setHead makes id ("": none) the head of the thread under key, in the batch (written by
// writeBatch) or in the file, and stages it for Head's readers.
func (t *Threads) setHead(tx *bbolt.Tx, key []byte, id string) error {
	t.heads.stage(string(key), id)
	if t.batch != nil {
		if t.batchHeads == nil {
			t.batchHeads = map[string]string{}
		}
		t.batchHeads[string(key)] = id
		return nil
	}
	if id == "" {
		return fillBucket(tx, threadHeadsBucket).Delete(key)
	}
	return fillBucket(tx, threadHeadsBucket).Put(key, []byte(id))
}

// head is the head of the thread under key as the folds so far left it.
func (t *Threads) head(tx *bbolt.Tx, key []byte) string {
	if id, ok := t.batchHeads[string(key)]; ok {
		return id
	}
	return string(fillBucket(tx, threadHeadsBucket).Get(key))
}

// flush writes the records the batch changed and ends it (also on an error: the transaction is
// rolled back then).
func (t *Threads) flush(tx *bbolt.Tx) error {
	err := t.writeBatch(tx)
	t.batch = nil
	clear(t.batchHeads)
	return err
}

// discard ends the batch without writing it (its transaction is rolled back).
func (t *Threads) discard() {
	t.batch = nil
	clear(t.batchHeads)
	clear(t.recent)
}

// committed implements committer: what a failed transaction wrote is not the file's.
func (t *Threads) committed(ok bool) {
	if !ok {
		clear(t.recent)
	}
	t.readable.commit(ok)
	t.heads.commit(ok)
	t.db.activeRuns.commit(ok)
}

// forget implements forgetter: the buckets are dropped.
func (t *Threads) forget() {
	clear(t.recent)
	t.readable.forget()
	t.heads.forget()
	t.db.activeRuns.forget()
}

// writeBatch writes the records the batch changed so far and goes on batching.
func (t *Threads) writeBatch(tx *bbolt.Tx) error {
	for k, id := range t.batchHeads {
		b := fillBucket(tx, threadHeadsBucket)
		var err error
		if id == "" {
			err = b.Delete([]byte(k))
		} else {
			err = b.Put([]byte(k), []byte(id))
		}
		if err != nil {
			return err
		}
	}
	clear(t.batchHeads)
	if len(t.batch) == 0 {
		return nil
	}
	b := fillBucket(tx, threadsBucket)
	if t.recent == nil || len(t.recent)+len(t.batch) > maxRecentThreads {
		t.recent = make(map[string]*engine.Thread, len(t.batch))
	}
	for k, th := range t.batch {
		if th == nil {
			continue // deleted: gone from the bucket already
		}
		if err := putJSON(b, []byte(k), *th); err != nil {
			return err
		}
		t.recent[k] = th
		t.readable.stage(k, snapshot(th))
	}
	clear(t.batch)
	return nil
}

// load reads the thread under key as getThreadRaw does, from the batch when it changed it.
func (t *Threads) load(b *bbolt.Bucket, key []byte) (engine.Thread, bool, error) {
	th, ok := t.batch[string(key)]
	if !ok && t.batch != nil {
		th, ok = t.recent[string(key)]
	}
	if !ok {
		return getThreadRaw(b, key)
	}
	if th == nil {
		return engine.Thread{}, false, nil
	}
	out := *th
	// As getThreadRaw leaves them: the values' JSON behind a *json.RawMessage.
	if raw, ok := out.Values.(json.RawMessage); ok {
		out.Values = &raw
	}
	return out, true, nil
}

// store writes th under key, or keeps it in the batch for flush, its times to the microsecond
// as the file keeps them (so that a fold reading it from the batch or from recent sees what it
// would read from the file).
func (t *Threads) store(b *bbolt.Bucket, key []byte, th engine.Thread) error {
	if t.batch == nil {
		delete(t.recent, string(key))
		t.readable.drop(string(key))
		return putJSON(b, key, th)
	}
	th.CreatedAt.Time = th.CreatedAt.Truncate(time.Microsecond)
	th.UpdatedAt.Time = th.UpdatedAt.Truncate(time.Microsecond)
	th.StateUpdatedAt.Time = th.StateUpdatedAt.Truncate(time.Microsecond)
	if th.TTL != nil {
		ttl := *th.TTL
		ttl.ExpiresAt.Time = ttl.ExpiresAt.Truncate(time.Microsecond)
		th.TTL = &ttl
	}
	t.batch[string(key)] = &th
	return nil
}
