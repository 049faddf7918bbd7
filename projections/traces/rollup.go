package traces

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"

	"go.etcd.io/bbolt"
)

// Project counters, stored together as one record under tenant,project in tCounters: a
// varint for each, in this order.
const (
	cRuns      = iota // every run
	cRoots            // root runs (traces)
	cErrors           // root runs with an error
	cStreaming        // root runs with a first token in their tree
	cLastStart        // the latest start of a root run (unix nanoseconds)
	cPrompt           // tokens
	cComp
	cTotal
	cPCost // costs, nano-dollars
	cCCost
	cTCost
	cCosted // runs with a cost
	nCounters
)

// counterNames name the counters (for golden files).
var counterNames = [nCounters]string{"runs", "roots", "errors", "streaming", "last_start", "prompt_tokens",
	"completion_tokens", "total_tokens", "prompt_cost", "completion_cost", "total_cost", "costed"}

type projectCounters [nCounters]int64

func decodeCounters(b []byte) (projectCounters, error) {
	var c projectCounters
	if b == nil {
		return c, nil
	}
	r := &recReader{b: b}
	for i := range c {
		c[i] = r.varint()
	}
	if r.bad || len(r.b) != 0 {
		return c, errShortRecord
	}
	return c, nil
}

func (c *projectCounters) encode() []byte {
	b := make([]byte, 0, nCounters*3)
	for _, v := range c {
		b = binary.AppendVarint(b, v)
	}
	return b
}

// counterSet holds the counters of the projects a change touches: each read once, and written
// once by flush.
type counterSet struct {
	tx     *bbolt.Tx
	tenant string
	recs   map[string]*projectCounters
	err    error
}

func newCounterSet(tx *bbolt.Tx, tenant string) *counterSet {
	return &counterSet{tx: tx, tenant: tenant, recs: make(map[string]*projectCounters, 1)}
}

func (c *counterSet) of(project string) *projectCounters {
	if r, ok := c.recs[project]; ok {
		return r
	}
	r, err := decodeCounters(c.tx.Bucket(tCounters).Get(tkey(c.tenant, project)))
	if err != nil && c.err == nil {
		c.err = err
	}
	c.recs[project] = &r
	return &r
}

func (c *counterSet) add(project string, counter int, delta int64) {
	if delta != 0 {
		c.of(project)[counter] += delta
	}
}

func (c *counterSet) flush() error {
	if c.err != nil {
		return c.err
	}
	for project, r := range c.recs {
		if err := c.tx.Bucket(tCounters).Put(tkey(c.tenant, project), r.encode()); err != nil {
			return err
		}
	}
	return nil
}

func projectKey(tenant string, m runMeta, id string) []byte {
	k := append(tkey(tenant, m.Project), 0)
	k = binary.BigEndian.AppendUint64(k, uint64(m.Start))
	return append(k, id...)
}

// reindex moves a run's entries in the indexes, counters and roll-ups from what old says to
// what neu says.
func reindex(tx *bbolt.Tx, tenant, id string, old, neu runMeta) error {
	cs := newCounterSet(tx, tenant)
	if err := reindexWith(tx, cs, tenant, id, old, neu); err != nil {
		return err
	}
	return cs.flush()
}

func reindexWith(tx *bbolt.Tx, cs *counterSet, tenant, id string, old, neu runMeta) error {
	if old.Posted && (old.Project != neu.Project || old.Start != neu.Start) {
		if err := tx.Bucket(tByProject).Delete(projectKey(tenant, old, id)); err != nil {
			return err
		}
	}
	if !old.Posted || old.Project != neu.Project || old.Start != neu.Start {
		if err := tx.Bucket(tByProject).Put(projectKey(tenant, neu, id), nil); err != nil {
			return err
		}
	}
	if !old.Posted {
		if err := tx.Bucket(tByTrace).Put(tkey(tenant, neu.Trace, id), posted); err != nil {
			return err
		}
	}
	counters(cs, old, -1)
	counters(cs, neu, 1)
	if err := rootEntries(tx, cs, id, old, -1); err != nil {
		return err
	}
	if err := rootEntries(tx, cs, id, neu, 1); err != nil {
		return err
	}
	if slices.Equal(old.Ancestors, neu.Ancestors) && old.Own.equal(neu.Own) {
		return nil
	}
	if err := rollUp(tx, cs, old, -1); err != nil {
		return err
	}
	return rollUp(tx, cs, neu, 1)
}

// counters adds (sign 1) or removes (sign -1) a run's own values in its project's counters.
func counters(cs *counterSet, m runMeta, sign int64) {
	if !m.Posted {
		return
	}
	c := cs.of(m.Project)
	c[cRuns] += sign
	c[cPrompt] += sign * m.Own.Prompt
	c[cComp] += sign * m.Own.Completion
	c[cTotal] += sign * m.Own.Total
	c[cPCost] += sign * m.Own.PromptCost
	c[cCCost] += sign * m.Own.CompCost
	c[cTCost] += sign * m.Own.TotalCost
	c[cCosted] += sign * m.Own.Costed
}

// firstToken is the earliest first token of a run's tree, 0 when none.
func (m runMeta) firstToken() int64 {
	switch {
	case m.Own.FirstToken == 0:
		return m.Desc.FirstToken
	case m.Desc.FirstToken == 0:
		return m.Own.FirstToken
	}
	return min(m.Own.FirstToken, m.Desc.FirstToken)
}

// sortable encodes a non-negative number of seconds so that keys sort by value.
func sortable(v float64) []byte {
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(max(v, 0)))
}

// rootEntries adds or removes what a root run counts for in its project's statistics: the run
// and error counts, and its latency and time to first token in the sorted index.
func rootEntries(tx *bbolt.Tx, cs *counterSet, id string, m runMeta, sign int64) error {
	if !m.Posted || len(m.Ancestors) > 0 {
		return nil
	}
	b := tx.Bucket(tRootTimes)
	entry := func(kind string, v float64) error {
		k := append(append(tkey(cs.tenant, m.Project, kind), 0), sortable(v)...)
		k = append(k, id...)
		if sign > 0 {
			return b.Put(k, nil)
		}
		return b.Delete(k)
	}
	var errs []error
	cs.add(m.Project, cRoots, sign)
	if m.Error {
		cs.add(m.Project, cErrors, sign)
	}
	if m.Latency != nil {
		errs = append(errs, entry("l", *m.Latency))
	}
	if ft := m.firstToken(); ft != 0 {
		cs.add(m.Project, cStreaming, sign)
		errs = append(errs, entry("f", float64(ft-m.Start)/1e9))
	}
	if c := cs.of(m.Project); sign > 0 && c[cLastStart] < m.Start {
		c[cLastStart] = m.Start
	}
	return errors.Join(errs...)
}

// rollUp adds (or removes) a run's own sums to those of every ancestor. A root whose tree gets
// an earlier first token is re-entered in its project's statistics.
func rollUp(tx *bbolt.Tx, cs *counterSet, m runMeta, sign int64) error {
	tenant := cs.tenant
	if !m.Posted {
		return nil
	}
	for _, a := range m.Ancestors {
		am, err := getMeta(tx, tenant, a)
		if err != nil {
			return err
		}
		before := am
		am.Desc = am.Desc.add(m.Own, sign)
		if ft := m.Own.FirstToken; sign > 0 && ft != 0 && (am.Desc.FirstToken == 0 || ft < am.Desc.FirstToken) {
			am.Desc.FirstToken = ft // the earliest first token only ever moves earlier
		}
		if am.firstToken() != before.firstToken() {
			if err := errors.Join(rootEntries(tx, cs, a, before, -1), rootEntries(tx, cs, a, am, 1)); err != nil {
				return err
			}
		}
		if err := putMeta(tx, tkey(tenant, a), am); err != nil {
			return err
		}
	}
	return nil
}

// hasPrefix reports whether k starts with prefix followed by 0x00.
func hasPrefix(k, prefix []byte) bool {
	return len(k) > len(prefix) && bytes.HasPrefix(k, prefix) && k[len(prefix)] == 0
}
