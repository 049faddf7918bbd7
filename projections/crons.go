package projections

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Crons folds cron events into the current state of each cron: its record (with the next tick)
// and the fire whose run is not known to exist yet.
type Crons struct{ db *DB }

// NewCrons returns the crons projection stored in db.
func NewCrons(db *DB) *Crons { return &Crons{db: db} }

// cronsBucket maps tenant/id to an engine.CronState.
var cronsBucket = []byte("crons")

// Name implements Projection.
func (*Crons) Name() string { return "crons" }

// Buckets implements Projection.
func (*Crons) Buckets() []string { return []string{string(cronsBucket)} }

// Apply implements Projection.
func (p *Crons) Apply(tx *bbolt.Tx, e eventlog.Event) error {
	if e.Aggregate.Kind != "cron" {
		return nil
	}
	b := fillBucket(tx, cronsBucket)
	key := tenantKey(e.Aggregate.Tenant, e.Aggregate.ID)
	at := engine.At(e.Time)
	switch e.Type {
	case engine.CronCreated:
		var d engine.CronCreatedData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		st := engine.CronState{Cron: cronRecord(e.Aggregate.ID, d.CronSpec, d.NextRunDate, at, at)}
		return putJSON(b, key, st)
	case engine.CronUpdated:
		var d engine.CronUpdatedData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		var st engine.CronState
		if ok, err := getJSON(b, key, &st); err != nil || !ok {
			return orMissing(err, e)
		}
		st.Cron = cronRecord(e.Aggregate.ID, d.CronSpec, d.NextRunDate, st.CreatedAt, at)
		return putJSON(b, key, st)
	case engine.CronFired:
		var d engine.CronFiredData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		var st engine.CronState
		if ok, err := getJSON(b, key, &st); err != nil || !ok {
			return orMissing(err, e)
		}
		st.NextRunDate = d.NextRunDate
		st.Pending = &engine.CronFire{Tick: d.Tick, RunID: d.RunID, ThreadID: d.ThreadID, FiredAt: at}
		return putJSON(b, key, st)
	case engine.CronFireDone:
		var d engine.CronFireDoneData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		var st engine.CronState
		if ok, err := getJSON(b, key, &st); err != nil || !ok {
			return orMissing(err, e)
		}
		if st.Pending != nil && st.Pending.Tick.Equal(d.Tick.Time) {
			st.Pending = nil
		}
		return putJSON(b, key, st)
	case engine.CronDeleted:
		return b.Delete(key)
	}
	return nil
}

// cronRecord is the record of cron id defined by spec.
func cronRecord(id string, spec engine.CronSpec, next *engine.Time, created, updated engine.Time) engine.Cron {
	c := engine.Cron{
		CronID: id, AssistantID: spec.AssistantID, OnRunCompleted: spec.OnRunCompleted, EndTime: spec.EndTime,
		Schedule: spec.Schedule, CreatedAt: created, UpdatedAt: updated, Payload: spec.Payload,
		NextRunDate: next, Metadata: orEmpty(spec.Metadata), Enabled: spec.Enabled,
	}
	if spec.ThreadID != "" {
		c.ThreadID = &spec.ThreadID
	}
	if spec.Timezone != "" {
		c.Timezone = &spec.Timezone
	}
	return c
}

// Get returns the cron's state, or false when it does not exist.
func (p *Crons) Get(tenant, id string) (engine.CronState, bool, error) {
	var st engine.CronState
	var ok bool
	err := p.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(cronsBucket)
		if b == nil {
			return nil
		}
		var err error
		ok, err = getJSON(b, tenantKey(tenant, id), &st)
		return err
	})
	return st, ok, err
}

// each calls f with every cron of every tenant, in key order.
func (p *Crons) each(prefix []byte, f func(tenant string, st engine.CronState)) error {
	return p.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(cronsBucket)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var st engine.CronState
			if err := decodeJSON(v, &st); err != nil {
				return fmt.Errorf("projections: cron %s: %w", k, err)
			}
			tenant, _, _ := strings.Cut(string(k), "/")
			f(tenant, st)
		}
		return nil
	})
}

// TenantCron is a cron with the tenant that owns it.
type TenantCron struct {
	Tenant string
	engine.CronState
}

// Due returns the crons of every tenant with work at now: enabled with a tick at or before now,
// or with a fire whose run is not known to exist.
func (p *Crons) Due(now time.Time) ([]TenantCron, error) {
	var out []TenantCron
	err := p.each(nil, func(tenant string, st engine.CronState) {
		due := st.Enabled && st.NextRunDate != nil && !st.NextRunDate.After(now)
		if due || st.Pending != nil {
			out = append(out, TenantCron{Tenant: tenant, CronState: st})
		}
	})
	return out, err
}

// Search returns one page of the tenant's crons matching q, and how many match in all.
func (p *Crons) Search(tenant string, q engine.CronQuery) ([]engine.Cron, int, error) {
	var all []engine.Cron
	err := p.each([]byte(tenant+"/"), func(_ string, st engine.CronState) {
		c := st.Cron
		switch {
		case q.AssistantID != "" && c.AssistantID != q.AssistantID,
			q.ThreadID != "" && (c.ThreadID == nil || *c.ThreadID != q.ThreadID),
			q.Enabled != nil && c.Enabled != *q.Enabled,
			len(q.Metadata) > 0 && !engine.Contains(anyMap(c.Metadata), anyMap(q.Metadata)),
			!q.Auth.Match(c.Metadata):
			return
		}
		all = append(all, c)
	})
	if err != nil {
		return nil, 0, err
	}
	sortCrons(all, q.SortBy, q.SortOrder)
	return page(all, q.Offset, q.Limit), len(all), nil
}

func sortCrons(cs []engine.Cron, by, order string) {
	key := func(c engine.Cron) string {
		switch by {
		case "cron_id":
			return c.CronID
		case "assistant_id":
			return c.AssistantID
		case "thread_id":
			if c.ThreadID == nil {
				return ""
			}
			return *c.ThreadID
		case "updated_at":
			return c.UpdatedAt.Format(engine.TimeLayout)
		case "next_run_date":
			if c.NextRunDate == nil {
				return "~" // after every date: a cron that will not fire again sorts last ascending
			}
			return c.NextRunDate.Format(engine.TimeLayout)
		}
		return c.CreatedAt.Format(engine.TimeLayout)
	}
	slices.SortStableFunc(cs, func(a, b engine.Cron) int {
		c := strings.Compare(key(a), key(b))
		if c == 0 {
			c = strings.Compare(a.CronID, b.CronID)
		}
		if order != "asc" {
			c = -c
		}
		return c
	})
}
