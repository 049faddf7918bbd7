package projections

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"

	"go.etcd.io/bbolt"
)

// Project counters (see tCounters).
const (
	cRuns      = "runs"      // every run
	cRoots     = "roots"     // root runs (traces)
	cErrors    = "errors"    // root runs with an error
	cStreaming = "streaming" // root runs with a first token in their tree
	cLastStart = "last_start"
	cPrompt    = "prompt_tokens"
	cComp      = "completion_tokens"
	cTotal     = "total_tokens"
	cPCost     = "prompt_cost" // nano-dollars
	cCCost     = "completion_cost"
	cTCost     = "total_cost"
	cCosted    = "costed"
)

func addCounter(tx *bbolt.Tx, tenant, project, name string, delta int64) error {
	if delta == 0 {
		return nil
	}
	b := tx.Bucket(tCounters)
	k := tkey(tenant, project, name)
	return b.Put(k, u64(uint64(int64(readU64(b.Get(k)))+delta)))
}

func projectKey(tenant string, m runMeta, id string) []byte {
	k := append(tkey(tenant, m.Project), 0)
	k = binary.BigEndian.AppendUint64(k, uint64(m.Start))
	return append(k, id...)
}

// reindex moves a run's entries in the indexes, counters and roll-ups from what old says to
// what neu says.
func reindex(tx *bbolt.Tx, tenant, id string, old, neu runMeta) error {
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
	if err := counters(tx, tenant, old, -1); err != nil {
		return err
	}
	if err := counters(tx, tenant, neu, 1); err != nil {
		return err
	}
	if err := rootEntries(tx, tenant, id, old, -1); err != nil {
		return err
	}
	if err := rootEntries(tx, tenant, id, neu, 1); err != nil {
		return err
	}
	if slices.Equal(old.Ancestors, neu.Ancestors) && old.Own.equal(neu.Own) {
		return nil
	}
	if err := rollUp(tx, tenant, old, -1); err != nil {
		return err
	}
	return rollUp(tx, tenant, neu, 1)
}

// counters adds (sign 1) or removes (sign -1) a run's own values in its project's counters.
func counters(tx *bbolt.Tx, tenant string, m runMeta, sign int64) error {
	if !m.Posted {
		return nil
	}
	add := func(name string, v int64) error { return addCounter(tx, tenant, m.Project, name, sign*v) }
	return errors.Join(add(cRuns, 1), add(cPrompt, m.Own.Prompt), add(cComp, m.Own.Completion),
		add(cTotal, m.Own.Total), add(cPCost, m.Own.PromptCost), add(cCCost, m.Own.CompCost),
		add(cTCost, m.Own.TotalCost), add(cCosted, m.Own.Costed))
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
func sortable(v float64) []byte { return u64(math.Float64bits(max(v, 0))) }

// rootEntries adds or removes what a root run counts for in its project's statistics: the run
// and error counts, and its latency and time to first token in the sorted index.
func rootEntries(tx *bbolt.Tx, tenant, id string, m runMeta, sign int64) error {
	if !m.Posted || len(m.Ancestors) > 0 {
		return nil
	}
	b := tx.Bucket(tRootTimes)
	entry := func(kind string, v float64) error {
		k := append(append(tkey(tenant, m.Project, kind), 0), sortable(v)...)
		k = append(k, id...)
		if sign > 0 {
			return b.Put(k, nil)
		}
		return b.Delete(k)
	}
	add := func(name string, v int64) error { return addCounter(tx, tenant, m.Project, name, sign*v) }
	var errs []error
	errs = append(errs, add(cRoots, 1))
	if m.Error {
		errs = append(errs, add(cErrors, 1))
	}
	if m.Latency != nil {
		errs = append(errs, entry("l", *m.Latency))
	}
	if ft := m.firstToken(); ft != 0 {
		errs = append(errs, add(cStreaming, 1), entry("f", float64(ft-m.Start)/1e9))
	}
	if sign > 0 {
		c := tx.Bucket(tCounters)
		k := tkey(tenant, m.Project, cLastStart)
		if int64(readU64(c.Get(k))) < m.Start {
			errs = append(errs, c.Put(k, u64(uint64(m.Start))))
		}
	}
	return errors.Join(errs...)
}

// rollUp adds (or removes) a run's own sums to those of every ancestor. A root whose tree gets
// an earlier first token is re-entered in its project's statistics.
func rollUp(tx *bbolt.Tx, tenant string, m runMeta, sign int64) error {
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
			if err := errors.Join(rootEntries(tx, tenant, a, before, -1), rootEntries(tx, tenant, a, am, 1)); err != nil {
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
