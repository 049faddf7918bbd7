// Package store is the write and read side of the key-value store: put, get, delete, search,
// list namespaces, refresh times to live on reads, and the sweeper that deletes expired items.
//
// Every item is its own aggregate, store.<tenant>.<id>, where id is a hash of its namespace and
// key (see ItemID), so that writes to different items never conflict.
package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/command"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// MaxItemBytes bounds the JSON of a put event's payload: an item is a state as far as size goes
// (engine.MaxStateBytes). The log carries payloads past NATS's max payload by reference.
const MaxItemBytes = engine.MaxStateBytes

// refreshBatch bounds the refresh events appended in one batch.
const refreshBatch = 500

// minRefresh is the least a read moves an expiry: reads of one item closer together than this
// append no event, so a hot item does not flood the log.
const minRefresh = time.Second

// Service manages store items.
type Service struct {
	cmd   *command.Runner
	view  *projections.Store
	log   *slog.Logger
	clock func() time.Time
	index *Index // nil: no semantic index
}

// New returns the store service writing through cmd and reading view.
func New(cmd *command.Runner, view *projections.Store, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{cmd: cmd, view: view, log: log, clock: time.Now}
}

// SetClock replaces the clock that stamps events and decides expiry (tests).
func (s *Service) SetClock(clock func() time.Time) { s.clock = clock }

// ItemID is the stable, subject-safe id of the item at namespace and key: 32 hex digits of the
// SHA-256 of the length-prefixed labels and key.
func ItemID(namespace []string, key string) string {
	h := sha256.New()
	var n [8]byte
	for _, s := range append(append([]string{}, namespace...), key) {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Aggregate names the item at namespace and key of the context's tenant in the log.
func Aggregate(ctx context.Context, namespace []string, key string) eventlog.Aggregate {
	return eventlog.Aggregate{Kind: "store", Tenant: engine.TenantFrom(ctx), ID: ItemID(namespace, key)}
}

// event builds an event stamped with the service's clock, from which the projection counts
// times to live.
func (s *Service) event(agg eventlog.Aggregate, typ string, data any) (eventlog.Event, error) {
	e, err := eventlog.New(agg, typ, data)
	e.Time = s.clock().UTC()
	return e, err
}

// Put is a request to store an item.
type Put struct {
	Namespace []string
	Key       string
	Value     map[string]any
	Index     any      // nil, false or a list of paths
	TTL       *float64 // minutes; nil: never expires
}

// Put stores an item, replacing the value, index and time to live of an existing one.
func (s *Service) Put(ctx context.Context, p Put) error {
	const op = "store.put"
	if err := checkItem(op, p.Namespace, p.Key); err != nil {
		return err
	}
	var err error
	p.Namespace, err = authorizeItem(ctx, op, engine.ActionPut, p.Namespace, p.Key, map[string]any{"value": p.Value, "index": p.Index})
	if err != nil {
		return err
	}
	if p.TTL != nil {
		if err := engine.CheckTTL(op, *p.TTL, "body", "ttl"); err != nil {
			return err
		}
	}
	if p.Value == nil {
		p.Value = map[string]any{}
	}
	embedding, vectors, err := s.embedItem(ctx, op, p.Value, p.Index)
	if err != nil {
		return err
	}
	agg := Aggregate(ctx, p.Namespace, p.Key)
	_, err = s.cmd.Run(ctx, op, func() (command.Decision, error) {
		expect, err := s.cmd.Version(agg)
		if err != nil {
			return nil, err
		}
		e, err := s.event(agg, engine.StorePut, engine.StorePutData{
			Namespace: p.Namespace, Key: p.Key, Value: p.Value, Index: p.Index, TTL: p.TTL,
			Embedding: embedding, Vectors: vectors,
		})
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		if len(e.Data) > MaxItemBytes {
			return nil, engine.StateTooLarge(op, "The store item", len(e.Data))
		}
		return command.Decision{{Event: e, Expect: expect}}, nil
	})
	return err
}

// authorize asks the user's rules about a store action on namespace (with the other fields of
// value) and returns the namespace they left; without rules it is namespace itself.
func authorize(ctx context.Context, op string, action engine.AuthAction, namespace []string, value map[string]any) (map[string]any, []string, engine.Filter, error) {
	v, f, err := engine.Authorize(ctx, engine.ResourceStore, action, func() map[string]any {
		value["namespace"] = engine.LabelsValue(namespace)
		return value
	})
	if err != nil {
		return nil, nil, f, err
	}
	ns, err := engine.ValueLabels(op, v, "namespace", namespace)
	return v, ns, f, err
}

// ruleFault is the error of a namespace a rule left invalid: the rule's fault, not the client's.
func ruleFault(op string, err error) error {
	return engine.E(engine.Op(op), engine.Other, "Your auth handler left an invalid namespace: "+err.Error())
}

// authorizeItem is authorize for an action on one item: the namespace the rules left must still
// address an item.
func authorizeItem(ctx context.Context, op string, action engine.AuthAction, namespace []string, key string, value map[string]any) ([]string, error) {
	value["key"] = key
	v, ns, _, err := authorize(ctx, op, action, namespace, value)
	if err != nil || v == nil {
		return ns, err
	}
	if err := checkItem(op, ns, key); err != nil {
		return nil, ruleFault(op, err)
	}
	return ns, nil
}

// checkItem validates the address of an item: a non-empty namespace of valid labels and a key.
func checkItem(op string, namespace []string, key string) error {
	if len(namespace) == 0 {
		return engine.E(engine.Op(op), engine.Invalid, "Namespace must have at least one label")
	}
	if err := engine.CheckNamespace(op, namespace); err != nil {
		return err
	}
	if key == "" {
		return engine.E(engine.Op(op), engine.Invalid, "Key is required")
	}
	if len(key) > engine.MaxStoreKeyBytes {
		return engine.E(engine.Op(op), engine.Invalid, fmt.Sprintf("A key is at most %d bytes (MaxStoreKeyBytes); this one has %d", engine.MaxStoreKeyBytes, len(key)))
	}
	return nil
}

// Get returns the item at namespace and key, or false when there is none (expired items are
// gone). With refresh, an item with a time to live has it restarted.
func (s *Service) Get(ctx context.Context, namespace []string, key string, refresh bool) (engine.Item, bool, error) {
	const op = "store.get"
	if err := checkItem(op, namespace, key); err != nil {
		return engine.Item{}, false, err
	}
	namespace, err := authorizeItem(ctx, op, engine.ActionGet, namespace, key, map[string]any{})
	if err != nil {
		return engine.Item{}, false, err
	}
	rec, ok, err := s.view.Get(engine.TenantFrom(ctx), namespace, key, s.clock())
	if err != nil {
		return engine.Item{}, false, engine.E(engine.Op(op), err)
	}
	if !ok {
		return engine.Item{}, false, nil
	}
	if refresh {
		s.refresh(ctx, []projections.StoreRecord{rec})
	}
	return rec.Item, true, nil
}

// Delete removes the item at namespace and key. Deleting a missing item does nothing, as on the
// reference servers.
func (s *Service) Delete(ctx context.Context, namespace []string, key string) error {
	const op = "store.delete"
	if err := checkItem(op, namespace, key); err != nil {
		return err
	}
	namespace, err := authorizeItem(ctx, op, engine.ActionDelete, namespace, key, map[string]any{})
	if err != nil {
		return err
	}
	_, err = s.delete(ctx, namespace, key, "")
	return err
}

// delete appends a deletion of the item unless it is gone; reason "ttl" deletes it only if it
// is still expired. It reports whether it deleted.
func (s *Service) delete(ctx context.Context, namespace []string, key, reason string) (bool, error) {
	const op = "store.delete"
	agg := Aggregate(ctx, namespace, key)
	seq, err := s.cmd.Run(ctx, op, func() (command.Decision, error) {
		now := s.clock()
		if reason == "ttl" {
			// Read past the expiry check: the sweeper deletes what reads no longer see.
			now = time.Time{}
		}
		rec, ok, err := s.view.Get(agg.Tenant, namespace, key, now)
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		if !ok || (reason == "ttl" && !rec.Expired(s.clock())) {
			return nil, nil
		}
		expect, err := s.cmd.Version(agg)
		if err != nil {
			return nil, err
		}
		e, err := s.event(agg, engine.StoreDeleted, engine.StoreDeletedData{Namespace: namespace, Key: key, Reason: reason})
		if err != nil {
			return nil, engine.E(engine.Op(op), err)
		}
		return command.Decision{{Event: e, Expect: expect}}, nil
	})
	return seq > 0, err
}

// Search returns one page of the items matching q. With refresh, the items returned that have a
// time to live have it restarted.
func (s *Service) Search(ctx context.Context, q engine.StoreQuery, refresh bool) ([]engine.Item, error) {
	const op = "store.search"
	if err := engine.CheckNamespace(op, q.Prefix); err != nil {
		return nil, err
	}
	var errs engine.Violations
	engine.CheckFilter(q.Filter, &errs, "filter")
	if err := errs.Err(op); err != nil {
		return nil, err
	}
	if err := authorizeSearch(ctx, op, &q); err != nil {
		return nil, err
	}
	if err := s.embedQuery(ctx, op, &q); err != nil {
		return nil, err
	}
	recs, err := s.view.Search(engine.TenantFrom(ctx), q, s.clock())
	if err != nil {
		return nil, engine.E(engine.Op(op), err)
	}
	if refresh {
		s.refresh(ctx, recs)
	}
	items := make([]engine.Item, len(recs))
	for i, r := range recs {
		items[i] = r.Item
	}
	return items, nil
}

// authorizeSearch asks the user's rules about the search q and applies what they answered: the
// namespace prefix and filter they left, and their own filter on the items' values, ANDed with
// the request's (as the reference servers do).
func authorizeSearch(ctx context.Context, op string, q *engine.StoreQuery) error {
	var filter any
	if q.Filter != nil {
		filter = q.Filter
	}
	v, ns, f, err := authorize(ctx, op, engine.ActionSearch, q.Prefix, map[string]any{
		"filter": filter, "limit": q.Limit, "offset": q.Offset, "query": engine.StringValue(q.Query)})
	if err != nil || v == nil {
		return err
	}
	if err := engine.CheckNamespace(op, ns); err != nil {
		return ruleFault(op, err)
	}
	q.Prefix = ns
	if q.Filter, err = engine.ValueMap(op, v, "filter", q.Filter); err != nil {
		return err
	}
	var errs engine.Violations
	engine.CheckFilter(q.Filter, &errs, "filter")
	if err := errs.Err(op); err != nil {
		return engine.E(engine.Op(op), engine.Other, "Your auth handler left an invalid filter: "+err.Error())
	}
	q.Auth = q.Auth.And(f)
	return nil
}

// ListNamespaces returns one page of the distinct namespaces matching q, within those the user's
// rules let them see (they may rewrite the prefix and suffix).
func (s *Service) ListNamespaces(ctx context.Context, q engine.NamespaceQuery) ([][]string, error) {
	const op = "store.namespaces"
	if err := engine.CheckNamespace(op, q.Prefix); err != nil {
		return nil, err
	}
	if err := engine.CheckNamespace(op, q.Suffix); err != nil {
		return nil, err
	}
	var depth any
	if q.MaxDepth > 0 {
		depth = q.MaxDepth
	}
	v, ns, _, err := authorize(ctx, op, engine.ActionListNamespaces, q.Prefix, map[string]any{
		"suffix": engine.LabelsValue(q.Suffix), "max_depth": depth, "limit": q.Limit, "offset": q.Offset})
	if err != nil {
		return nil, err
	}
	if v != nil {
		suffix, err := engine.ValueLabels(op, v, "suffix", q.Suffix)
		if err != nil {
			return nil, err
		}
		for _, l := range [][]string{ns, suffix} {
			if err := engine.CheckNamespace(op, l); err != nil {
				return nil, ruleFault(op, err)
			}
		}
		q.Prefix, q.Suffix = ns, suffix
	}
	list, err := s.view.ListNamespaces(engine.TenantFrom(ctx), q, s.clock())
	if err != nil {
		return nil, engine.E(engine.Op(op), err)
	}
	return list, nil
}

// refresh restarts the time to live of the records that have one, one event per item, appended
// in batches. It is best effort: a read never fails because its refresh did; the failure is
// logged.
func (s *Service) refresh(ctx context.Context, recs []projections.StoreRecord) {
	const op = "store.refresh"
	now := s.clock()
	var due []projections.StoreRecord
	for _, r := range recs {
		if r.TTL > 0 && now.Add(minutes(r.TTL)).Sub(r.ExpiresAt.Time) >= minRefresh {
			due = append(due, r)
		}
	}
	for len(due) > 0 {
		chunk := due[:min(len(due), refreshBatch)]
		due = due[len(chunk):]
		_, err := s.cmd.Run(ctx, op, func() (command.Decision, error) {
			var d command.Decision
			for _, r := range chunk {
				// Decide afresh: a concurrent delete or put may have won a race.
				cur, ok, err := s.view.Get(r.Tenant, r.Item.Namespace, r.Item.Key, s.clock())
				if err != nil {
					return nil, engine.E(engine.Op(op), err)
				}
				if !ok || cur.TTL == 0 {
					continue
				}
				agg := eventlog.Aggregate{Kind: "store", Tenant: r.Tenant, ID: ItemID(r.Item.Namespace, r.Item.Key)}
				expect, err := s.cmd.Version(agg)
				if err != nil {
					return nil, err
				}
				e, err := s.event(agg, engine.StoreTouched, engine.StoreTouchedData{Namespace: r.Item.Namespace, Key: r.Item.Key})
				if err != nil {
					return nil, engine.E(engine.Op(op), err)
				}
				d = append(d, eventlog.Pending{Event: e, Expect: expect})
			}
			return d, nil
		})
		if err != nil {
			s.log.Warn("store: refreshing the time to live of items read failed", "items", len(chunk), "err", err)
		}
	}
}

func minutes(m float64) time.Duration { return time.Duration(m * float64(time.Minute)) }

// Sweep deletes the items whose time to live has passed and returns how many it deleted. Several
// processes may sweep at once: the loser of a race finds the item gone (or refreshed) and moves on.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	expired, err := s.view.Expired(s.clock(), 500)
	if err != nil {
		return 0, engine.E(engine.Op("store.sweep"), err)
	}
	n := 0
	for _, r := range expired {
		deleted, err := s.delete(engine.WithTenant(ctx, r.Tenant), r.Item.Namespace, r.Item.Key, "ttl")
		switch {
		case err != nil && !engine.Is(engine.NotFound, err):
			return n, err
		case deleted:
			n++
		}
	}
	return n, nil
}

// RunSweeper deletes expired items every interval until ctx ends.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration) {
	command.Sweep(ctx, interval, s.log, "store items", s.Sweep)
}
