package projections

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Store folds store events into the current record of each item and an expiry index that the
// TTL sweeper reads. Items whose expiry has passed stay in the buckets until the sweeper deletes
// them, so every read takes the time and hides them.
type Store struct{ db *DB }

// NewStore returns the store projection stored in db.
func NewStore(db *DB) *Store { return &Store{db: db} }

var (
	// storeItemsBucket maps an item key (see itemKey) to its StoreRecord.
	storeItemsBucket = []byte("store_items")
	// storeExpiryBucket holds <8-byte big-endian unix nanoseconds><item key> for every item with
	// a time to live, so that a scan from the start lists the expired ones first.
	storeExpiryBucket = []byte("store_expiry")
)

// StoreRecord is an item as the projection keeps it: the item, its tenant, what a query
// searches, and its time to live.
type StoreRecord struct {
	Tenant string      `json:"tenant"`
	Item   engine.Item `json:"item"`
	// Index is nil (the whole value), false, or a list of paths (see engine.StorePutData).
	Index any `json:"index,omitempty"`
	// TTL is the time to live in minutes; 0: the item never expires.
	TTL float64 `json:"ttl,omitempty"`
	// ExpiresAt is when the item expires; zero when TTL is 0.
	ExpiresAt engine.Time `json:"expires_at"`
	// Embedding and Vectors are the item's semantic index, as its put event carries them.
	Embedding string               `json:"embedding,omitempty"`
	Vectors   []engine.StoreVector `json:"vectors,omitempty"`
}

// Expired reports whether the record's time to live has passed at now.
func (r StoreRecord) Expired(now time.Time) bool {
	return !r.ExpiresAt.IsZero() && !now.Before(r.ExpiresAt.Time)
}

// Name implements Projection.
func (*Store) Name() string { return "store" }

// Buckets implements Projection.
func (*Store) Buckets() []string {
	return []string{string(storeItemsBucket), string(storeExpiryBucket)}
}

// Item keys order items so that all the items of a tenant, and all those under a namespace
// prefix, are one contiguous range that a bbolt prefix seek finds:
//
//	esc(tenant) 0x00 esc(label 1) 0x00 ... esc(label n) 0x00 0x01 esc(key)
//
// esc writes 0x00, 0x01 and 0x02 as 0x02 0x10, 0x02 0x11 and 0x02 0x12, so that no encoded string
// holds a separator. Labels are never empty, so after a 0x00 comes either 0x01 (the namespace
// ends) or the first byte of the next label, which is at least 0x02: the prefix of (a) does not
// match (ab), and the items of a namespace sort before those of its children.
func esc(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= 0x02 {
			b = append(b, 0x02, 0x10+c)
		} else {
			b = append(b, c)
		}
	}
	return b
}

// keyBuf is room for a key of n bytes of parts and a few separators and escapes, so that the
// key builders allocate once.
func keyBuf(n int) []byte { return make([]byte, 0, n+8) }

// escKey appends each part to b escaped and followed by 00.
func escKey(b []byte, parts ...string) []byte {
	for _, p := range parts {
		b = append(esc(b, p), 0x00)
	}
	return b
}

// unesc reverses esc.
func unesc(b []byte) (string, error) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == 0x02 {
			if i+1 == len(b) || b[i+1] < 0x10 || b[i+1] > 0x12 {
				return "", fmt.Errorf("projections: bad escape in key %q", b)
			}
			i++
			c = b[i] - 0x10
		}
		out = append(out, c)
	}
	return string(out), nil
}

// namespacePrefix is the key prefix of every item of tenant under the namespace prefix labels.
func namespacePrefix(tenant string, labels []string) []byte {
	k := append(esc(nil, tenant), 0x00)
	for _, l := range labels {
		k = append(esc(k, l), 0x00)
	}
	return k
}

func itemKey(tenant string, namespace []string, key string) []byte {
	return esc(append(namespacePrefix(tenant, namespace), 0x01), key)
}

func storeExpiryKey(at time.Time, item []byte) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano())), item...)
}

// Apply implements Projection.
func (s *Store) Apply(tx *bbolt.Tx, e eventlog.Event) error {
	if e.Aggregate.Kind != "store" {
		_, err := onTruncate(tx, e, func(d engine.TruncatedData) bool { return d.Store }, s.Buckets()...)
		return err
	}
	items := fillBucket(tx, storeItemsBucket)
	switch e.Type {
	case engine.StorePut:
		var d engine.StorePutData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		key := itemKey(e.Aggregate.Tenant, d.Namespace, d.Key)
		at := engine.At(e.Time)
		var old StoreRecord
		found, err := getJSON(items, key, &old)
		if err != nil {
			return err
		}
		rec := StoreRecord{
			Tenant: e.Aggregate.Tenant, Index: d.Index, Embedding: d.Embedding, Vectors: d.Vectors,
			Item: engine.Item{Namespace: d.Namespace, Key: d.Key, Value: orEmpty(d.Value), CreatedAt: at, UpdatedAt: at},
		}
		if found {
			rec.Item.CreatedAt = old.Item.CreatedAt
			if err := clearStoreExpiry(tx, old, key); err != nil {
				return err
			}
		}
		if d.TTL != nil && *d.TTL > 0 {
			rec.TTL = *d.TTL
		}
		return putRecord(tx, rec, key, e.Time)
	case engine.StoreTouched:
		var d engine.StoreTouchedData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		key := itemKey(e.Aggregate.Tenant, d.Namespace, d.Key)
		var rec StoreRecord
		if ok, err := getJSON(items, key, &rec); err != nil || !ok || rec.TTL == 0 {
			return err // a refresh that lost a race with a delete or a put without TTL is a no-op
		}
		if err := clearStoreExpiry(tx, rec, key); err != nil {
			return err
		}
		return putRecord(tx, rec, key, e.Time)
	case engine.StoreDeleted:
		var d engine.StoreDeletedData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		key := itemKey(e.Aggregate.Tenant, d.Namespace, d.Key)
		var rec StoreRecord
		if ok, err := getJSON(items, key, &rec); err != nil || !ok {
			return err // deleting what is gone is a no-op
		}
		if err := clearStoreExpiry(tx, rec, key); err != nil {
			return err
		}
		return items.Delete(key)
	}
	return nil
}

// putRecord stores rec with its expiry counted from at, and indexes the expiry.
func putRecord(tx *bbolt.Tx, rec StoreRecord, key []byte, at time.Time) error {
	rec.ExpiresAt = engine.Time{}
	if rec.TTL > 0 {
		rec.ExpiresAt = engine.At(at.Add(time.Duration(rec.TTL * float64(time.Minute))))
		if err := fillBucket(tx, storeExpiryBucket).Put(storeExpiryKey(rec.ExpiresAt.Time, key), nil); err != nil {
			return err
		}
	}
	return putJSON(fillBucket(tx, storeItemsBucket), key, rec)
}

func clearStoreExpiry(tx *bbolt.Tx, rec StoreRecord, key []byte) error {
	if rec.ExpiresAt.IsZero() {
		return nil
	}
	return fillBucket(tx, storeExpiryBucket).Delete(storeExpiryKey(rec.ExpiresAt.Time, key))
}

// Get returns the item of tenant at namespace and key, or false when there is none or it has
// expired at now.
func (s *Store) Get(tenant string, namespace []string, key string, now time.Time) (StoreRecord, bool, error) {
	var rec StoreRecord
	var ok bool
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(storeItemsBucket)
		if b == nil {
			return nil
		}
		var err error
		ok, err = getJSON(b, itemKey(tenant, namespace, key), &rec)
		return err
	})
	if err != nil || !ok || rec.Expired(now) {
		return StoreRecord{}, false, err
	}
	return rec, true, nil
}

// scan calls f with every live record of tenant under the namespace prefix labels.
func (s *Store) scan(tenant string, labels []string, now time.Time, f func(StoreRecord)) error {
	return s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(storeItemsBucket)
		if b == nil {
			return nil
		}
		prefix := namespacePrefix(tenant, labels)
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var rec StoreRecord
			if err := decodeJSON(v, &rec); err != nil {
				return fmt.Errorf("projections: store item %q: %w", k, err)
			}
			if !rec.Expired(now) {
				f(rec)
			}
		}
		return nil
	})
}

// Search returns one page of the live items of tenant matching q: the most recently updated
// first, or with a query, the best scores first.
func (s *Store) Search(tenant string, q engine.StoreQuery, now time.Time) ([]StoreRecord, error) {
	var all []StoreRecord
	query := strings.ToLower(q.Query)
	err := s.scan(tenant, q.Prefix, now, func(rec StoreRecord) {
		if !engine.MatchFilter(rec.Item.Value, q.Filter) || !q.Auth.Match(rec.Item.Value) {
			return
		}
		switch {
		case q.Vector != nil:
			if score, ok := similarity(rec, q.Embedding, q.Vector); ok {
				rec.Item.Score = &score
			}
		case query != "":
			n := strings.Count(strings.ToLower(indexedText(rec)), query)
			if n == 0 {
				return
			}
			score := float64(n)
			rec.Item.Score = &score
		}
		all = append(all, rec)
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(all, func(a, b StoreRecord) int {
		if (a.Item.Score == nil) != (b.Item.Score == nil) { // scored items first
			if a.Item.Score != nil {
				return -1
			}
			return 1
		}
		if a.Item.Score != nil && b.Item.Score != nil && *a.Item.Score != *b.Item.Score {
			if *a.Item.Score > *b.Item.Score {
				return -1
			}
			return 1
		}
		if c := b.Item.UpdatedAt.Compare(a.Item.UpdatedAt.Time); c != 0 {
			return c
		}
		if c := slices.Compare(a.Item.Namespace, b.Item.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Item.Key, b.Item.Key)
	})
	return page(all, q.Offset, q.Limit), nil
}

// similarity is the best cosine similarity between query (a unit vector of embedding) and the
// vectors of rec's indexed fields; false when rec has none of that embedding.
func similarity(rec StoreRecord, embedding string, query []float32) (float64, bool) {
	if rec.Embedding != embedding {
		return 0, false
	}
	best, found := 0.0, false
	for _, sv := range rec.Vectors {
		v := engine.UnpackVector(sv.Vector)
		if len(v) != len(query) {
			continue
		}
		var dot float64
		for i, x := range v {
			dot += float64(x) * float64(query[i])
		}
		if !found || dot > best {
			best, found = dot, true
		}
	}
	return best, found
}

// indexedText is the JSON text a query searches: the whole value, the values at the item's index
// paths, or nothing when the item is not indexed. A path is dot-separated object keys; a [..]
// suffix on a segment (a list index or [*]) is ignored and the whole list searched.
func indexedText(rec StoreRecord) string {
	var parts []any
	switch ix := rec.Index.(type) {
	case nil:
		parts = []any{rec.Item.Value}
	case bool:
		if ix {
			parts = []any{rec.Item.Value}
		}
	case []any:
		for _, p := range ix {
			path, _ := p.(string)
			v, _ := engine.ValueAt(rec.Item.Value, path)
			if v != nil {
				parts = append(parts, v)
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	raw, _ := json.Marshal(parts)
	return string(raw)
}

// ListNamespaces returns one page of the distinct namespaces of tenant's live items that match q,
// cut to q.MaxDepth, sorted label by label.
func (s *Store) ListNamespaces(tenant string, q engine.NamespaceQuery, now time.Time) ([][]string, error) {
	// Seek on the prefix up to its first wildcard.
	fixed := q.Prefix
	if i := slices.Index(fixed, "*"); i >= 0 {
		fixed = fixed[:i]
	}
	seen := map[string]bool{}
	var out [][]string
	err := s.scan(tenant, fixed, now, func(rec StoreRecord) {
		ns := rec.Item.Namespace
		if !matchLabels(ns, q.Prefix, false) || !matchLabels(ns, q.Suffix, true) {
			return
		}
		if q.MaxDepth > 0 && len(ns) > q.MaxDepth {
			ns = ns[:q.MaxDepth]
		}
		k := strings.Join(ns, "\x00")
		if !seen[k] {
			seen[k] = true
			out = append(out, slices.Clone(ns))
		}
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, slices.Compare)
	return page(out, q.Offset, q.Limit), nil
}

// matchLabels reports whether ns starts (or, with suffix, ends) with pattern, "*" matching any
// label.
func matchLabels(ns, pattern []string, suffix bool) bool {
	if len(pattern) > len(ns) {
		return false
	}
	if suffix {
		ns = ns[len(ns)-len(pattern):]
	}
	for i, p := range pattern {
		if p != "*" && p != ns[i] {
			return false
		}
	}
	return true
}

// Expired returns up to limit items whose time to live has passed at now, the oldest first.
func (s *Store) Expired(now time.Time, limit int) ([]StoreRecord, error) {
	var out []StoreRecord
	err := s.db.View(func(tx *bbolt.Tx) error {
		ex, items := tx.Bucket(storeExpiryBucket), tx.Bucket(storeItemsBucket)
		if ex == nil || items == nil {
			return nil
		}
		c := ex.Cursor()
		for k, _ := c.First(); k != nil && len(out) < limit; k, _ = c.Next() {
			if int64(binary.BigEndian.Uint64(k[:8])) > now.UnixNano() {
				break
			}
			var rec StoreRecord
			if ok, err := getJSON(items, k[8:], &rec); err != nil {
				return err
			} else if ok {
				out = append(out, rec)
			}
		}
		return nil
	})
	return out, err
}
