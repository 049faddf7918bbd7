package projections

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Assistants folds assistant events into the current record of each assistant and the list of
// its versions.
//
// Get keeps the current records it decodes in memory (cache), since every run reads its
// assistant several times and assistants rarely change. The cache is coherent with the file: an
// entry is used only while gen is the one it was read under, and every commit of a transaction
// that folded an assistant event moves gen on (committed) before the projector says the event
// is applied, so whoever waited for a write reads it. A reset of the projection turns the cache
// off until the next commit (resetting). Readers get a deep copy: what one caller changes of its
// assistant no other sees.
type Assistants struct {
	db *DB

	changing  bool          // the transaction being applied folded an assistant event (fold goroutine)
	gen       atomic.Uint64 // moved on by every commit that changed assistants
	resetting atomic.Bool   // the buckets were dropped: the cache is not used until the next commit
	cacheMu   sync.RWMutex
	cache     map[string]cachedAssistant // tenantKey -> record, read under gen
}

// cachedAssistant is a decoded record and the generation it was read under.
type cachedAssistant struct {
	a   engine.Assistant
	gen uint64
}

// maxCachedAssistants bounds the cache; past it, the cache starts over.
const maxCachedAssistants = 4096

// NewAssistants returns the assistants projection stored in db.
func NewAssistants(db *DB) *Assistants {
	return &Assistants{db: db, cache: map[string]cachedAssistant{}}
}

// committed implements committer: a transaction that folded an assistant event invalidates the
// cache (rolled back too: harmless).
func (a *Assistants) committed(bool) {
	if !a.changing && !a.resetting.Load() {
		return
	}
	a.changing = false
	a.cacheMu.Lock()
	a.gen.Add(1)
	clear(a.cache)
	a.resetting.Store(false)
	a.cacheMu.Unlock()
}

// forget implements forgetter: the buckets are being dropped, in a transaction not committed
// yet; the cache is off until the next fold commits.
func (a *Assistants) forget() {
	a.cacheMu.Lock()
	a.resetting.Store(true)
	a.gen.Add(1)
	clear(a.cache)
	a.cacheMu.Unlock()
}

// cached returns a copy of the record of key read under the current generation.
func (a *Assistants) cached(key []byte) (engine.Assistant, uint64, bool) {
	g := a.gen.Load()
	if a.resetting.Load() {
		return engine.Assistant{}, g, false
	}
	a.cacheMu.RLock()
	c, ok := a.cache[string(key)]
	a.cacheMu.RUnlock()
	if !ok || c.gen != g {
		return engine.Assistant{}, g, false
	}
	return cloneAssistant(c.a), g, true
}

// remember caches a copy of as, read from the file under generation g.
func (a *Assistants) remember(key []byte, as engine.Assistant, g uint64) {
	as = cloneAssistant(as)
	a.cacheMu.Lock()
	defer a.cacheMu.Unlock()
	if a.gen.Load() != g || a.resetting.Load() {
		return // changed meanwhile: the entry would never be used
	}
	if len(a.cache) >= maxCachedAssistants {
		clear(a.cache)
	}
	a.cache[string(key)] = cachedAssistant{a: as, gen: g}
}

// cloneAssistant copies as deeply: it shares no map or pointer with as.
func cloneAssistant(as engine.Assistant) engine.Assistant {
	as.Config, as.Context, as.Metadata = engine.CloneMap(as.Config), engine.CloneMap(as.Context), engine.CloneMap(as.Metadata)
	if as.Description != nil {
		d := *as.Description
		as.Description = &d
	}
	return as
}

var (
	// assistantsBucket maps tenant/id to the current engine.Assistant.
	assistantsBucket = []byte("assistants")
	// assistantVersionsBucket maps tenant/id/<8-byte big-endian version> to an
	// engine.AssistantVersion, so that a prefix scan lists an assistant's versions in order.
	assistantVersionsBucket = []byte("assistant_versions")
)

// Name implements Projection.
func (*Assistants) Name() string { return "assistants" }

// Buckets implements Projection.
func (*Assistants) Buckets() []string {
	return []string{string(assistantsBucket), string(assistantVersionsBucket)}
}

func versionPrefix(tenant, id string) []byte { return []byte(tenant + "/" + id + "/") }

func versionKey(tenant, id string, version int) []byte {
	return binary.BigEndian.AppendUint64(versionPrefix(tenant, id), uint64(version))
}

// Apply implements Projection.
func (a *Assistants) Apply(tx *bbolt.Tx, e eventlog.Event) error {
	if e.Aggregate.Kind != "assistant" {
		d, ok, err := truncation(e)
		if !ok || err != nil || !d.Assistants {
			return err
		}
		a.changing = true
		return keepOnly(tx, d.KeepAssistants)
	}
	a.changing = true
	cur := fillBucket(tx, assistantsBucket)
	vers := fillBucket(tx, assistantVersionsBucket)
	tenant, id := e.Aggregate.Tenant, e.Aggregate.ID
	key := tenantKey(tenant, id)
	at := engine.At(e.Time)
	switch e.Type {
	case engine.AssistantCreated:
		var d engine.AssistantCreatedData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		v := versionOf(id, 1, d.AssistantSpec, at)
		if err := putJSON(vers, versionKey(tenant, id, 1), v); err != nil {
			return err
		}
		return putJSON(cur, key, current(v, at, at))
	case engine.AssistantUpdated:
		var d engine.AssistantUpdatedData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		var old engine.Assistant
		if ok, err := getJSON(cur, key, &old); err != nil || !ok {
			return orMissing(err, e)
		}
		if d.Version < 1 {
			return fmt.Errorf("%s %s: invalid version %d", e.Type, e.Aggregate, d.Version)
		}
		v := versionOf(id, d.Version, d.AssistantSpec, at)
		if err := putJSON(vers, versionKey(tenant, id, d.Version), v); err != nil {
			return err
		}
		return putJSON(cur, key, current(v, old.CreatedAt, at))
	case engine.AssistantLatestSet:
		var d engine.AssistantLatestSetData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		var old engine.Assistant
		if ok, err := getJSON(cur, key, &old); err != nil || !ok {
			return orMissing(err, e)
		}
		var v engine.AssistantVersion
		if ok, err := getJSON(vers, versionKey(tenant, id, d.Version), &v); err != nil || !ok {
			if err == nil {
				err = fmt.Errorf("%s %s: no version %d", e.Type, e.Aggregate, d.Version)
			}
			return err
		}
		return putJSON(cur, key, current(v, old.CreatedAt, at))
	case engine.AssistantDeleted:
		if err := cur.Delete(key); err != nil {
			return err
		}
		prefix := versionPrefix(tenant, id)
		c := vers.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	}
	return nil
}

// versionOf builds version n of assistant id from spec, with the defaults filled in.
func versionOf(id string, n int, spec engine.AssistantSpec, at engine.Time) engine.AssistantVersion {
	name := spec.Name
	if name == "" {
		name = spec.GraphID
	}
	return engine.AssistantVersion{
		AssistantID: id, GraphID: spec.GraphID, Config: orEmpty(spec.Config), Context: orEmpty(spec.Context),
		Metadata: orEmpty(spec.Metadata), Version: n, Name: name, Description: spec.Description, CreatedAt: at,
	}
}

// current is the assistant record whose latest version is v.
func current(v engine.AssistantVersion, created, updated engine.Time) engine.Assistant {
	return engine.Assistant{
		AssistantID: v.AssistantID, GraphID: v.GraphID, Config: v.Config, Context: v.Context,
		Metadata: v.Metadata, Version: v.Version, Name: v.Name, Description: v.Description,
		CreatedAt: created, UpdatedAt: updated,
	}
}

// Get returns the assistant, or false when it does not exist: from the cache when it holds the
// record as the file has it now.
func (a *Assistants) Get(tenant, id string) (engine.Assistant, bool, error) {
	key := tenantKey(tenant, id)
	as, g, ok := a.cached(key)
	if ok {
		return as, true, nil
	}
	err := a.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(assistantsBucket)
		if b == nil {
			return nil // not prepared yet, or being rebuilt
		}
		var err error
		ok, err = getJSON(b, key, &as)
		return err
	})
	if err == nil && ok {
		a.remember(key, as, g)
	}
	return as, ok, err
}

// Version returns version n of the assistant, or false when there is no such version.
func (a *Assistants) Version(tenant, id string, n int) (engine.AssistantVersion, bool, error) {
	var v engine.AssistantVersion
	var ok bool
	if n < 1 {
		return v, false, nil
	}
	err := a.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(assistantVersionsBucket)
		if b == nil {
			return nil
		}
		var err error
		ok, err = getJSON(b, versionKey(tenant, id, n), &v)
		return err
	})
	return v, ok, err
}

// MaxVersion returns the highest version number of the assistant (0 when it has none): the next
// patch makes version MaxVersion+1, whichever version is the latest.
func (a *Assistants) MaxVersion(tenant, id string) (int, error) {
	var n int
	err := a.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(assistantVersionsBucket)
		if b == nil {
			return nil
		}
		prefix := versionPrefix(tenant, id)
		c := b.Cursor()
		// The next possible key after the prefix: the last key before it is the highest version.
		end := append(slices.Clone(prefix[:len(prefix)-1]), '/'+1)
		k, _ := c.Seek(end)
		if k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
		if k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+8 {
			n = int(binary.BigEndian.Uint64(k[len(prefix):]))
		}
		return nil
	})
	return n, err
}

// Versions returns one page of the assistant's versions whose metadata contains metadata, newest
// first, and how many match in all.
func (a *Assistants) Versions(tenant, id string, metadata map[string]any, limit, offset int) ([]engine.AssistantVersion, int, error) {
	var all []engine.AssistantVersion
	err := a.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(assistantVersionsBucket)
		if b == nil {
			return nil
		}
		prefix := versionPrefix(tenant, id)
		c := b.Cursor()
		for k, raw := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, raw = c.Next() {
			var v engine.AssistantVersion
			if err := decodeJSON(raw, &v); err != nil {
				return fmt.Errorf("projections: assistant version %q: %w", k, err)
			}
			if len(metadata) > 0 && !engine.Contains(anyMap(v.Metadata), anyMap(metadata)) {
				continue
			}
			all = append(all, v)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	slices.Reverse(all)
	return page(all, offset, limit), len(all), nil
}

// Search returns one page of the tenant's assistants matching q, and how many match in all.
func (a *Assistants) Search(tenant string, q engine.AssistantQuery) ([]engine.Assistant, int, error) {
	var all []engine.Assistant
	name := strings.ToLower(q.Name)
	err := a.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(assistantsBucket)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		prefix := []byte(tenant + "/")
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var as engine.Assistant
			if err := decodeJSON(v, &as); err != nil {
				return fmt.Errorf("projections: assistant %s: %w", k, err)
			}
			if q.GraphID != "" && as.GraphID != q.GraphID {
				continue
			}
			if name != "" && !strings.Contains(strings.ToLower(as.Name), name) {
				continue
			}
			if len(q.Metadata) > 0 && !engine.Contains(anyMap(as.Metadata), anyMap(q.Metadata)) {
				continue
			}
			if !as.Visible(q.Auth) {
				continue
			}
			all = append(all, as)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	sortAssistants(all, q.SortBy, q.SortOrder)
	return page(all, q.Offset, q.Limit), len(all), nil
}

func sortAssistants(as []engine.Assistant, by, order string) {
	key := func(a engine.Assistant) string {
		switch by {
		case "assistant_id":
			return a.AssistantID
		case "graph_id":
			return a.GraphID
		case "name":
			return a.Name
		case "updated_at":
			return a.UpdatedAt.Format(engine.TimeLayout)
		}
		return a.CreatedAt.Format(engine.TimeLayout)
	}
	slices.SortStableFunc(as, func(a, b engine.Assistant) int {
		c := strings.Compare(key(a), key(b))
		if c == 0 {
			c = strings.Compare(a.AssistantID, b.AssistantID)
		}
		if order != "asc" {
			c = -c
		}
		return c
	})
}
