package projections

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/jsoncount"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Checkpoints folds the checkpoint and pending-write events of threads: every checkpoint of
// every namespace of a thread, the channel values they share, and the pending writes on them.
// It reads nothing but bbolt: values kept in the object store are returned as digests for the
// reader to fetch (engine/checkpoints does).
type Checkpoints struct {
	db *DB
	// values holds, while the projector folds a batch (begin to flush), the channel locations
	// of the checkpoints the batch stored, by checkpoint key: a checkpoint's parent is most
	// often the one stored just before it, whose record it then does not read back. Any other
	// change to the checkpoints of the batch empties it.
	values map[string]map[string]blobLoc
}

// NewCheckpoints returns the checkpoints projection stored in db.
func NewCheckpoints(db *DB) *Checkpoints { return &Checkpoints{db: db} }

// Key schemes. Every part is escaped with esc (as store item keys are), so that no part holds the
// 0x00 separator and the keys of one thread, or of one namespace, are one contiguous range:
//
//	thread prefix     esc(tenant) 0x00 esc(thread_id) 0x00
//	namespace prefix  <thread prefix> esc(ns) 0x00
//	checkpoint key    <namespace prefix> esc(checkpoint_id)
//	blob key          <namespace prefix> esc(channel) 0x00 <8-byte big-endian version> esc(origin)
//
// Checkpoint ids are UUIDv7 strings, so the byte order of checkpoint keys is creation order: the
// last key of a namespace prefix is its newest checkpoint. A blob is the value of a channel at a
// version, stored once by the checkpoint whose event carried it (its origin) and shared by the
// descendants that did not change it. The origin is part of the key because versions are
// counters: two branches forked from one checkpoint give different values the same version.
var (
	// checkpointsBucket maps a checkpoint key to its checkpointRecord (JSON).
	checkpointsBucket = []byte("checkpoints")
	// checkpointBlobsBucket maps a blob key to '=' and the value's JSON, or '@' and the digest of
	// the value in the object store.
	checkpointBlobsBucket = []byte("checkpoint_blobs")
	// checkpointWritesBucket maps a checkpoint key to its pending writes, merged as
	// graph.MergeWrites does (JSON list of engine.PendingWriteData).
	checkpointWritesBucket = []byte("checkpoint_writes")
)

// Blob value tags.
const (
	blobInline = '='
	blobRef    = '@'
)

// checkpointRecord is a checkpoint as stored: no values, but where to find each.
type checkpointRecord struct {
	Checkpoint engine.CheckpointHeader `json:"checkpoint"`
	Metadata   json.RawMessage         `json:"metadata"`
	Parent     *engine.CheckpointRef   `json:"parent"`
	// Values locates the blob of every channel that has a value.
	Values map[string]blobLoc `json:"values"`
}

// checkpointEvent is a checkpoint payload (engine.CheckpointData) as the folds read it: its
// header decoded, and also kept as the JSON it came as, which putCheckpoint stores as it is
// rather than encoding the header (its maps, sorted) again. The same event stores the same
// bytes, so a rebuild still equals the live file.
type checkpointEvent struct {
	NS         string                     `json:"ns"`
	Checkpoint rawHeader                  `json:"checkpoint"`
	Metadata   json.RawMessage            `json:"metadata"`
	Parent     *engine.CheckpointRef      `json:"parent"`
	Blobs      map[string]engine.BlobData `json:"blobs"`
	Full       bool                       `json:"full,omitempty"`
}

// rawHeader is a checkpoint header, decoded, with its JSON.
type rawHeader struct {
	engine.CheckpointHeader
	raw jsontext.Value
}

// UnmarshalJSON decodes the header and keeps its JSON. (Part of the payload's decode: it is not
// counted again.)
func (h *rawHeader) UnmarshalJSON(b []byte) error {
	h.raw = bytes.Clone(b)
	return jsonv2.Unmarshal(b, &h.CheckpointHeader, readOptions)
}

// storedCheckpoint is a checkpointRecord as putCheckpoint writes it: the same JSON, its header
// as the event carried it.
type storedCheckpoint struct {
	Checkpoint jsontext.Value        `json:"checkpoint"`
	Metadata   json.RawMessage       `json:"metadata"`
	Parent     *engine.CheckpointRef `json:"parent"`
	Values     map[string]blobLoc    `json:"values"`
}

// blobLoc is the version of a channel's value and the checkpoint that stored it.
type blobLoc struct {
	Version int64  `json:"v"`
	Origin  string `json:"at"`
}

// StoredTuple is a checkpoint as the projection holds it: a graph.Tuple whose values kept in the
// object store are still to be fetched.
type StoredTuple struct {
	graph.Tuple
	// Blobs maps each channel whose value is in the object store to its digest; the channel is
	// missing from Checkpoint.ChannelValues.
	Blobs map[string]string
	// WriteBlobs maps the index in Writes of each pending write whose value is in the object
	// store to its digest; its Value is nil.
	WriteBlobs map[int]string
}

// Name implements Projection.
func (*Checkpoints) Name() string { return "checkpoints" }

// Buckets implements Projection.
func (*Checkpoints) Buckets() []string {
	return []string{string(checkpointsBucket), string(checkpointBlobsBucket), string(checkpointWritesBucket)}
}

func threadPrefix(tenant, thread string) []byte {
	return escKey(keyBuf(len(tenant)+len(thread)), tenant, thread)
}

func nsPrefix(tenant, thread, ns string) []byte {
	return escKey(keyBuf(len(tenant)+len(thread)+len(ns)), tenant, thread, ns)
}

func checkpointKey(ns []byte, id string) []byte {
	return esc(append(keyBuf(len(ns)+len(id)), ns...), id)
}

func blobKey(ns []byte, channel string, loc blobLoc) []byte {
	k := append(esc(append(keyBuf(len(ns)+len(channel)+8+len(loc.Origin)), ns...), channel), 0x00)
	k = binary.BigEndian.AppendUint64(k, uint64(loc.Version))
	return esc(k, loc.Origin)
}

// Apply implements Projection.
func (c *Checkpoints) Apply(tx *bbolt.Tx, e eventlog.Event) error {
	if e.Aggregate.Kind != "thread" {
		clear(c.values)
		_, err := onTruncate(tx, e, func(d engine.TruncatedData) bool { return d.Checkpoints }, c.Buckets()...)
		return err
	}
	if e.Type != engine.ThreadCheckpoint && e.Type != engine.ThreadWrites {
		clear(c.values) // (what the event changes may be a checkpoint of the batch)
	}
	switch e.Type {
	case engine.ThreadCheckpoint:
		d, err := c.db.decoded.checkpointData(e, &c.db.primed)
		if err != nil {
			return err
		}
		return c.putCheckpoint(tx, e.Aggregate, d)
	case engine.ThreadWrites:
		var d engine.WritesData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		return c.putWrites(tx, e.Aggregate, d)
	case engine.ThreadCheckpointPatched:
		var d engine.CheckpointPatchedData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		return c.patchMetadata(tx, e.Aggregate, d)
	case engine.RunDeletedEvent:
		var d engine.RunDeletedData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		if d.Rollback {
			return c.deleteRun(tx, e.Aggregate, d.RunID)
		}
	case engine.ThreadCheckpointsPruned:
		return c.keepLatest(tx, e.Aggregate)
	case engine.ThreadDeleted:
		prefix := threadPrefix(e.Aggregate.Tenant, e.Aggregate.ID)
		for _, name := range c.Buckets() {
			if err := deletePrefix(fillBucket(tx, []byte(name)), prefix); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteRun removes the checkpoints a rolled-back run wrote (metadata.run_id), in every
// namespace of the thread, with their pending writes and the blobs they stored.
func (c *Checkpoints) deleteRun(tx *bbolt.Tx, agg eventlog.Aggregate, runID string) error {
	prefix := threadPrefix(agg.Tenant, agg.ID)
	cps := fillBucket(tx, checkpointsBucket)
	writes := fillBucket(tx, checkpointWritesBucket)
	gone := map[string]bool{}
	var keys [][]byte
	cur := cps.Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		var rec struct {
			Checkpoint engine.CheckpointHeader `json:"checkpoint"`
			Metadata   struct {
				RunID string `json:"run_id"`
			} `json:"metadata"`
		}
		if err := decodeJSON(v, &rec); err != nil {
			return err
		}
		if rec.Metadata.RunID == runID {
			keys = append(keys, bytes.Clone(k))
			gone[rec.Checkpoint.ID] = true
		}
	}
	for _, k := range keys {
		if err := cps.Delete(k); err != nil {
			return err
		}
		if err := writes.Delete(k); err != nil {
			return err
		}
	}
	// Blob keys end with the escaped id of the checkpoint that stored them.
	blobs := fillBucket(tx, checkpointBlobsBucket)
	var blobKeys [][]byte
	bc := blobs.Cursor()
	for k, _ := bc.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = bc.Next() {
		for id := range gone {
			if bytes.HasSuffix(k, esc(nil, id)) {
				blobKeys = append(blobKeys, bytes.Clone(k))
				break
			}
		}
	}
	for _, k := range blobKeys {
		if err := blobs.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// keepLatest removes every checkpoint of the thread but the newest of each namespace (the last
// key of its range), their pending writes, and the blobs no kept checkpoint uses.
func (c *Checkpoints) keepLatest(tx *bbolt.Tx, agg eventlog.Aggregate) error {
	prefix := threadPrefix(agg.Tenant, agg.ID)
	cps := fillBucket(tx, checkpointsBucket)
	keep := map[string]bool{} // blob keys the kept checkpoints use
	var drop [][]byte
	var last []byte // the newest checkpoint key of the namespace being read
	var lastNS []byte
	flush := func() error {
		if last == nil {
			return nil
		}
		var rec checkpointRecord
		if err := decodeJSON(cps.Get(last), &rec); err != nil {
			return fmt.Errorf("projections: checkpoint %q: %w", last, err)
		}
		for ch, loc := range rec.Values {
			keep[string(blobKey(lastNS, ch, loc))] = true
		}
		return nil
	}
	cur := cps.Cursor()
	for k, _ := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = cur.Next() {
		// The namespace prefix ends at the first 0x00 after the thread's (no part holds one).
		end := bytes.IndexByte(k[len(prefix):], 0x00)
		if end < 0 {
			return fmt.Errorf("projections: checkpoint key %q without a namespace", k)
		}
		ns := k[:len(prefix)+end+1]
		if last != nil && !bytes.Equal(ns, lastNS) {
			if err := flush(); err != nil {
				return err
			}
			last = nil
		}
		if last != nil {
			drop = append(drop, last)
		}
		last, lastNS = bytes.Clone(k), bytes.Clone(ns)
	}
	if err := flush(); err != nil {
		return err
	}
	writes := fillBucket(tx, checkpointWritesBucket)
	for _, k := range drop {
		if err := cps.Delete(k); err != nil {
			return err
		}
		if err := writes.Delete(k); err != nil {
			return err
		}
	}
	blobs := fillBucket(tx, checkpointBlobsBucket)
	var unused [][]byte
	bc := blobs.Cursor()
	for k, _ := bc.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = bc.Next() {
		if !keep[string(k)] {
			unused = append(unused, bytes.Clone(k))
		}
	}
	for _, k := range unused {
		if err := blobs.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// patchMetadata merges d.Metadata into the checkpoint's metadata; a missing checkpoint is an
// error (the event is skipped).
func (c *Checkpoints) patchMetadata(tx *bbolt.Tx, agg eventlog.Aggregate, d engine.CheckpointPatchedData) error {
	b := fillBucket(tx, checkpointsBucket)
	key := checkpointKey(nsPrefix(agg.Tenant, agg.ID, d.NS), d.CheckpointID)
	var rec checkpointRecord
	if ok, err := getJSON(b, key, &rec); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("checkpoint %s of %s not found", d.CheckpointID, agg)
		}
		return err
	}
	md := map[string]any{}
	if len(rec.Metadata) > 0 {
		if err := decodeJSON(rec.Metadata, &md); err != nil {
			return err
		}
	}
	maps.Copy(md, d.Metadata)
	jsoncount.Encoded()
	raw, err := json.Marshal(md)
	if err != nil {
		return err
	}
	rec.Metadata = raw
	return putJSON(b, key, rec)
}

func (c *Checkpoints) putCheckpoint(tx *bbolt.Tx, agg eventlog.Aggregate, d checkpointEvent) error {
	if d.Checkpoint.ID == "" {
		return errors.New("checkpoint without an id")
	}
	cps, blobs := fillBucket(tx, checkpointsBucket), fillBucket(tx, checkpointBlobsBucket)
	ns := nsPrefix(agg.Tenant, agg.ID, d.NS)
	rec := storedCheckpoint{Checkpoint: d.Checkpoint.raw, Metadata: d.Metadata, Parent: d.Parent, Values: map[string]blobLoc{}}
	if !d.Full && d.Parent != nil {
		// Unchanged channels are the parent's. The parent is in this thread (its id in the
		// event may name the thread a copy was made from).
		parent, err := c.parentValues(cps, checkpointKey(nsPrefix(agg.Tenant, agg.ID, d.Parent.NS), d.Parent.ID))
		if err != nil {
			return err
		}
		maps.Copy(rec.Values, parent)
	}
	for _, ch := range slices.Sorted(maps.Keys(d.Blobs)) {
		b := d.Blobs[ch]
		loc := blobLoc{Version: b.Version, Origin: d.Checkpoint.ID}
		var v []byte
		switch {
		case b.Ref != "":
			v = append([]byte{blobRef}, b.Ref...)
		case b.Value != nil:
			v = append([]byte{blobInline}, b.Value...)
		default:
			delete(rec.Values, ch)
			continue
		}
		if err := blobs.Put(blobKey(ns, ch, loc), v); err != nil {
			return err
		}
		rec.Values[ch] = loc
	}
	key := checkpointKey(ns, d.Checkpoint.ID)
	if c.values != nil {
		c.values[string(key)] = rec.Values
	}
	if raw, ok := rec.appendJSON(nil); ok {
		jsoncount.Encoded()
		return cps.Put(key, raw)
	}
	return putJSON(cps, key, rec)
}

// appendJSON appends r's JSON to b, as putJSON writes it but for the escaping of HTML
// characters and the spacing inside the raw header and metadata, which decode the same
// (TestStoredCheckpointJSON): encoding the record by reflection was 1.5% of the server's CPU
// under echo runs (issue 28), and this is five times faster (BenchmarkStoredCheckpointJSON).
// The raw header and metadata are written as they are: they are valid JSON, read by the event's
// decoder or encoded by the checkpoint's writer (Prime). It reports false, leaving putJSON to
// write r, when a string is not valid UTF-8 (putJSON replaces its bad bytes).
func (r storedCheckpoint) appendJSON(b []byte) ([]byte, bool) {
	ok := true
	str := func(s string) {
		var err error
		if b, err = jsontext.AppendQuote(b, s); err != nil {
			ok = false
		}
	}
	raw := func(v []byte) {
		switch {
		case v == nil:
			b = append(b, "null"...)
		default:
			b = append(b, v...)
		}
	}
	b = slices.Grow(b, len(r.Checkpoint)+len(r.Metadata)+160+len(r.Values)*80)
	b = append(b, `{"checkpoint":`...)
	raw(r.Checkpoint)
	b = append(b, `,"metadata":`...)
	raw(r.Metadata)
	b = append(b, `,"parent":`...)
	if p := r.Parent; p == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"thread_id":`...)
		str(p.ThreadID)
		b = append(b, `,"checkpoint_ns":`...)
		str(p.NS)
		b = append(b, `,"checkpoint_id":`...)
		str(p.ID)
		b = append(b, '}')
	}
	b = append(b, `,"values":`...)
	if r.Values == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		var keys [16]string // (most graphs have fewer channels: no allocation)
		sorted := keys[:0]
		for ch := range r.Values {
			sorted = append(sorted, ch)
		}
		slices.Sort(sorted)
		for i, ch := range sorted {
			if i > 0 {
				b = append(b, ',')
			}
			loc := r.Values[ch]
			str(ch)
			b = append(b, `:{"v":`...)
			b = strconv.AppendInt(b, loc.Version, 10)
			b = append(b, `,"at":`...)
			str(loc.Origin)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return append(b, '}'), ok
}

// parentValues returns the channel locations of the checkpoint under key (nil when it is not
// there): from the batch when it stored it, else reading only that field of its record.
func (c *Checkpoints) parentValues(cps *bbolt.Bucket, key []byte) (map[string]blobLoc, error) {
	if v, ok := c.values[string(key)]; ok {
		return v, nil
	}
	var rec struct {
		Values map[string]blobLoc `json:"values"`
	}
	_, err := getJSON(cps, key, &rec)
	return rec.Values, err
}

// begin starts a batch (see values).
func (c *Checkpoints) begin() { c.values = map[string]map[string]blobLoc{} }

// flush ends the batch: the records are written already.
func (c *Checkpoints) flush(*bbolt.Tx) error {
	c.values = nil
	return nil
}

// discard ends a batch whose transaction is rolled back.
func (c *Checkpoints) discard() { c.values = nil }

func (c *Checkpoints) putWrites(tx *bbolt.Tx, agg eventlog.Aggregate, d engine.WritesData) error {
	key := checkpointKey(nsPrefix(agg.Tenant, agg.ID, d.NS), d.CheckpointID)
	if fillBucket(tx, checkpointsBucket).Get(key) == nil {
		return nil // writes on a checkpoint that is not there are dropped, as MemorySaver does
	}
	b := fillBucket(tx, checkpointWritesBucket)
	var existing []engine.PendingWriteData
	if _, err := getJSON(b, key, &existing); err != nil {
		return err
	}
	return putJSON(b, key, mergeWrites(existing, d.Writes))
}

// mergeWrites merges as graph.MergeWrites, which it calls with each write's index as its value.
func mergeWrites(existing, add []engine.PendingWriteData) []engine.PendingWriteData {
	all := append(slices.Clone(existing), add...)
	index := func(ws []engine.PendingWriteData, from int) []graph.PendingWrite {
		out := make([]graph.PendingWrite, len(ws))
		for i, w := range ws {
			out[i] = graph.PendingWrite{TaskID: w.TaskID, Channel: w.Channel, Value: strconv.AppendInt(nil, int64(from+i), 10)}
		}
		return out
	}
	merged := graph.MergeWrites(index(existing, 0), index(add, len(existing)))
	out := make([]engine.PendingWriteData, len(merged))
	for i, w := range merged {
		n, _ := strconv.Atoi(string(w.Value))
		out[i] = all[n]
	}
	return out
}

// deletePrefix removes every key of b that starts with prefix.
func deletePrefix(b *bbolt.Bucket, prefix []byte) error {
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// lastWithPrefix positions c on the last key that starts with prefix (nil when there is none).
func lastWithPrefix(c *bbolt.Cursor, prefix []byte) ([]byte, []byte) {
	// Prefixes end with 0x00, so prefix with its last byte set to 0x01 is the first key past them.
	end := bytes.Clone(prefix)
	end[len(end)-1]++
	var k, v []byte
	if k, _ = c.Seek(end); k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if k == nil || !bytes.HasPrefix(k, prefix) {
		return nil, nil
	}
	return k, v
}

// Get returns the checkpoint ref names, or the newest of its namespace when ref.ID is "", with
// its pending writes; nil when there is none.
func (c *Checkpoints) Get(tenant string, ref graph.Ref) (*StoredTuple, error) {
	var out *StoredTuple
	err := c.db.View(func(tx *bbolt.Tx) error {
		ns := nsPrefix(tenant, ref.ThreadID, ref.NS)
		cps := tx.Bucket(checkpointsBucket)
		var k, v []byte
		if ref.ID == "" {
			k, v = lastWithPrefix(cps.Cursor(), ns)
		} else {
			k = checkpointKey(ns, ref.ID)
			v = cps.Get(k)
		}
		if v == nil {
			return nil
		}
		var rec checkpointRecord
		if err := decodeJSON(v, &rec); err != nil {
			return fmt.Errorf("projections: checkpoint %q: %w", k, err)
		}
		t, err := assemble(tx, ref, ns, k, &rec, nil)
		out = t
		return err
	})
	return out, err
}

// Latest returns the newest checkpoint of a thread's namespace, nil when there is none.
func (c *Checkpoints) Latest(tenant, threadID, ns string) (*StoredTuple, error) {
	return c.Get(tenant, graph.Ref{ThreadID: threadID, NS: ns})
}

// List returns the checkpoints of ref's thread and namespace, newest first, filtered as
// graph.MemorySaver filters them (Before names a checkpoint that must exist: with an unknown one
// the list is empty).
func (c *Checkpoints) List(tenant string, ref graph.Ref, opts graph.ListOptions) ([]StoredTuple, error) {
	var out []StoredTuple
	err := c.db.View(func(tx *bbolt.Tx) error {
		ns := nsPrefix(tenant, ref.ThreadID, ref.NS)
		cps := tx.Bucket(checkpointsBucket)
		cur := cps.Cursor()
		var k, v []byte
		if opts.Before != "" {
			before := checkpointKey(ns, opts.Before)
			if cps.Get(before) == nil {
				return nil
			}
			cur.Seek(before)
			k, v = cur.Prev()
		} else {
			k, v = lastWithPrefix(cur, ns)
		}
		for ; k != nil && bytes.HasPrefix(k, ns); k, v = cur.Prev() {
			var rec checkpointRecord
			if err := decodeJSON(v, &rec); err != nil {
				return fmt.Errorf("projections: checkpoint %q: %w", k, err)
			}
			var md map[string]any
			if len(opts.Metadata) > 0 {
				if err := decodeJSON(rec.Metadata, &md); err != nil {
					return fmt.Errorf("projections: checkpoint %q metadata: %w", k, err)
				}
				if !metadataContains(md, opts.Metadata) {
					continue
				}
			}
			t, err := assemble(tx, ref, ns, k, &rec, md)
			if err != nil {
				return err
			}
			out = append(out, *t)
			if opts.Limit > 0 && len(out) == opts.Limit {
				break
			}
		}
		return nil
	})
	return out, err
}

// metadataContains is graph.MemorySaver's metadata filter: every key of filter has the same JSON.
func metadataContains(md, filter map[string]any) bool {
	for k, v := range filter {
		a, _ := json.Marshal(md[k])
		b, _ := json.Marshal(v)
		if !bytes.Equal(a, b) {
			return false
		}
	}
	return true
}

// assemble builds the tuple of rec, stored under key in namespace prefix ns. md is its decoded
// metadata when the caller has it.
func assemble(tx *bbolt.Tx, ref graph.Ref, ns, key []byte, rec *checkpointRecord, md map[string]any) (*StoredTuple, error) {
	h := rec.Checkpoint
	t := &StoredTuple{Tuple: graph.Tuple{
		Ref: graph.Ref{ThreadID: ref.ThreadID, NS: ref.NS, ID: h.ID},
		Checkpoint: graph.Checkpoint{V: h.V, ID: h.ID, TS: h.TS, ChannelValues: map[string]json.RawMessage{},
			ChannelVersions: h.ChannelVersions, VersionsSeen: h.VersionsSeen},
		Metadata: md,
	}}
	if md == nil && len(rec.Metadata) > 0 {
		if err := decodeJSON(rec.Metadata, &t.Metadata); err != nil {
			return nil, fmt.Errorf("projections: checkpoint %q metadata: %w", key, err)
		}
	}
	if p := rec.Parent; p != nil {
		t.Parent = &graph.Ref{ThreadID: p.ThreadID, NS: p.NS, ID: p.ID}
	}
	blobs := tx.Bucket(checkpointBlobsBucket)
	for ch, loc := range rec.Values {
		v := blobs.Get(blobKey(ns, ch, loc))
		switch {
		case len(v) > 0 && v[0] == blobInline:
			t.Checkpoint.ChannelValues[ch] = bytes.Clone(v[1:])
		case len(v) > 0 && v[0] == blobRef:
			if t.Blobs == nil {
				t.Blobs = map[string]string{}
			}
			t.Blobs[ch] = string(v[1:])
		default:
			return nil, fmt.Errorf("projections: checkpoint %q: no blob for channel %s", key, ch)
		}
	}
	var ws []engine.PendingWriteData
	if _, err := getJSON(tx.Bucket(checkpointWritesBucket), key, &ws); err != nil {
		return nil, fmt.Errorf("projections: writes of checkpoint %q: %w", key, err)
	}
	for i, w := range ws {
		if w.Ref != "" {
			if t.WriteBlobs == nil {
				t.WriteBlobs = map[int]string{}
			}
			t.WriteBlobs[i] = w.Ref
		}
		t.Writes = append(t.Writes, graph.PendingWrite{TaskID: w.TaskID, Channel: w.Channel, Value: w.Value})
	}
	return t, nil
}

// Diff compares cp, about to be stored as a child of the stored checkpoint parent, with it: it
// returns the channels (of either) whose version, presence or value differ, sorted, and whether
// parent is the newest checkpoint of its namespace. found is false when parent is not stored.
func (c *Checkpoints) Diff(tenant string, parent graph.Ref, cp graph.Checkpoint) (changed []string, newest, found bool, err error) {
	err = c.db.View(func(tx *bbolt.Tx) error {
		ns := nsPrefix(tenant, parent.ThreadID, parent.NS)
		cps := tx.Bucket(checkpointsBucket)
		key := checkpointKey(ns, parent.ID)
		var rec checkpointRecord
		if ok, err := getJSON(cps, key, &rec); err != nil || !ok {
			return err
		}
		found = true
		last, _ := lastWithPrefix(cps.Cursor(), ns)
		newest = bytes.Equal(last, key)
		blobs := tx.Bucket(checkpointBlobsBucket)
		seen := map[string]bool{}
		for _, m := range []map[string]int64{rec.Checkpoint.ChannelVersions, cp.ChannelVersions} {
			for ch := range m {
				seen[ch] = true
			}
		}
		for ch := range rec.Values {
			seen[ch] = true
		}
		for ch := range cp.ChannelValues {
			seen[ch] = true
		}
		for _, ch := range slices.Sorted(maps.Keys(seen)) {
			if !sameBlob(blobs, ns, ch, &rec, cp) {
				changed = append(changed, ch)
			}
		}
		return nil
	})
	return changed, newest, found, err
}

// sameBlob reports whether channel ch has the same version and value in rec and cp.
func sameBlob(blobs *bbolt.Bucket, ns []byte, ch string, rec *checkpointRecord, cp graph.Checkpoint) bool {
	if rec.Checkpoint.ChannelVersions[ch] != cp.ChannelVersions[ch] {
		return false
	}
	loc, had := rec.Values[ch]
	raw, has := cp.ChannelValues[ch]
	if !had || !has {
		return had == has
	}
	v := blobs.Get(blobKey(ns, ch, loc))
	switch {
	case len(v) > 0 && v[0] == blobInline:
		return bytes.Equal(v[1:], raw)
	case len(v) > 0 && v[0] == blobRef:
		return string(v[1:]) == engine.BlobDigest(raw)
	}
	return false
}
