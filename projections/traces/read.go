package traces

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// TraceView reads the trace projection inside one read transaction, so that a query sees one
// consistent state.
type TraceView struct {
	tx     *bbolt.Tx
	prices *trace.Prices
}

// errNoBuckets says the projector has not created the buckets yet.
var errNoBuckets = errors.New("trace buckets not created yet")

// View runs f with a view of the projection. Before the projector has started, the buckets are
// created here, empty.
func (t *Traces) View(f func(v *TraceView) error) error {
	view := func(tx *bbolt.Tx) error {
		if tx.Bucket(tMeta) == nil {
			return errNoBuckets
		}
		return f(&TraceView{tx: tx, prices: t.prices})
	}
	err := t.db.View(view)
	if !errors.Is(err, errNoBuckets) {
		return err
	}
	err = t.db.Update(func(tx *bbolt.Tx) error {
		for _, b := range traceBucket {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return t.db.View(view)
}

// Run returns a posted run with the roll-ups of its descendants merged in: a run that is not an
// llm run has the tokens and costs of the llm runs under it (trace.RollUp's rule), and every run
// the earliest first token of its tree. Runs known only from patches are not found.
func (v *TraceView) Run(tenant, id string) (*trace.Run, bool, error) {
	m, err := getMeta(v.tx, tenant, id)
	if err != nil || !m.Posted {
		return nil, false, err
	}
	raw := v.tx.Bucket(tRuns).Get(tkey(tenant, id))
	if raw == nil {
		return nil, false, nil
	}
	var r trace.Run
	if _, err := decodeRunRecord(raw, &r); err != nil {
		return nil, false, err
	}
	trace.Derive(&r, v.prices) // the normalised messages, which are not stored
	mergeDescendants(&r, m.Desc)
	return &r, true, nil
}

func mergeDescendants(r *trace.Run, d sums) {
	if d.FirstToken != 0 && (r.FirstTokenTime == nil || d.FirstToken < r.FirstTokenTime.UnixNano()) {
		ft := time.Unix(0, d.FirstToken).UTC()
		r.FirstTokenTime = &ft
	}
	if r.RunType == trace.RunLLM {
		return
	}
	r.PromptTokens += int(d.Prompt)
	r.CompletionTokens += int(d.Completion)
	r.TotalTokens += int(d.Total)
	details := func(into map[string]int, d map[string]int64) map[string]int {
		for k, v := range d {
			if into == nil {
				into = map[string]int{}
			}
			into[k] += int(v)
		}
		return into
	}
	r.PromptTokenDetails = details(r.PromptTokenDetails, d.PromptDetails)
	r.CompletionTokenDetails = details(r.CompletionTokenDetails, d.CompDetails)
	if d.Costed > 0 {
		add := func(c **float64, n int64) {
			v := float64(nanos(*c)+n) / 1e9
			*c = &v
		}
		add(&r.PromptCost, d.PromptCost)
		add(&r.CompletionCost, d.CompCost)
		add(&r.TotalCost, d.TotalCost)
	}
}

// TraceOf returns the trace of a posted run.
func (v *TraceView) TraceOf(tenant, runID string) (string, bool, error) {
	m, err := getMeta(v.tx, tenant, runID)
	if err != nil || !m.Posted {
		return "", false, err
	}
	return m.Trace, true, nil
}

// TraceRunIDs lists the posted runs of a trace.
func (v *TraceView) TraceRunIDs(tenant, traceID string) []string {
	var ids []string
	prefix := tkey(tenant, traceID)
	c := v.tx.Bucket(tByTrace).Cursor()
	for k, v := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, v = c.Next() {
		if len(v) == 1 && v[0] == posted[0] {
			ids = append(ids, string(k[len(prefix)+1:]))
		}
	}
	return ids
}

// Position orders runs newest first: by start time (unix nanoseconds), then id, descending.
type Position struct {
	Start int64
	ID    string
}

// Before reports whether p comes before o in newest-first order.
func (p Position) Before(o Position) bool {
	if p.Start != o.Start {
		return p.Start > o.Start
	}
	return p.ID > o.ID
}

// ScanProject hands f the ids of a project's runs newest first (oldest first when ascending),
// from just after the position after (nil: from the first), until f returns false.
func (v *TraceView) ScanProject(tenant, project string, after *Position, ascending bool, f func(id string, p Position) (bool, error)) error {
	prefix := append(tkey(tenant, project), 0)
	c := v.tx.Bucket(tByProject).Cursor()
	// Keys ascend by start time then id.
	var k []byte
	step := c.Prev
	switch {
	case ascending:
		step = c.Next
		if after == nil {
			k, _ = c.Seek(prefix)
			break
		}
		target := append(binary.BigEndian.AppendUint64(slices.Clone(prefix), uint64(after.Start)), after.ID...)
		if k, _ = c.Seek(target); k != nil && string(k) == string(target) {
			k, _ = c.Next()
		}
	default:
		// Walk backwards from the greatest key below target.
		target := append(slices.Clone(prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
		if after != nil {
			target = append(binary.BigEndian.AppendUint64(slices.Clone(prefix), uint64(after.Start)), after.ID...)
		}
		if k, _ = c.Seek(target); k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
	}
	for ; k != nil && len(k) > len(prefix)+8 && string(k[:len(prefix)]) == string(prefix); k, _ = step() {
		p := Position{Start: int64(binary.BigEndian.Uint64(k[len(prefix):])), ID: string(k[len(prefix)+8:])}
		more, err := f(p.ID, p)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// Project returns a project by id.
func (v *TraceView) Project(tenant, id string) (trace.Project, bool, error) {
	var p trace.Project
	ok, err := projections.GetJSON(v.tx.Bucket(tProjects), tkey(tenant, id), &p)
	return p, ok, err
}

// ProjectByName returns a project by name.
func (v *TraceView) ProjectByName(tenant, name string) (trace.Project, bool, error) {
	id, ok := projectByName(v.tx, tenant, name)
	if !ok {
		return trace.Project{}, false, nil
	}
	return v.Project(tenant, id)
}

// Projects returns every project of tenant, the newest first.
func (v *TraceView) Projects(tenant string) ([]trace.Project, error) {
	var out []trace.Project
	prefix := tkey(tenant)
	c := v.tx.Bucket(tProjects).Cursor()
	for k, raw := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, raw = c.Next() {
		var p trace.Project
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b trace.Project) int {
		if c := b.StartTime.Compare(a.StartTime.Time); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// ProjectStats are a project's roll-ups: counters over all its runs (tokens, costs) and over its
// root runs (counts, errors, streaming), and the sorted latencies and times to first token of
// its root runs, from which percentiles are read.
type ProjectStats struct {
	Runs, Roots, Errors, Streaming              int64
	PromptTokens, CompletionTokens, TotalTokens int64
	PromptCost, CompletionCost, TotalCost       *float64
	LastRunStart                                *time.Time
	Latencies, FirstTokens                      []float64 // seconds, ascending
}

// ProjectStats reads a project's roll-ups.
func (v *TraceView) ProjectStats(tenant, id string) ProjectStats {
	c, _ := decodeCounters(v.tx.Bucket(tCounters).Get(tkey(tenant, id)))
	s := ProjectStats{Runs: c[cRuns], Roots: c[cRoots], Errors: c[cErrors], Streaming: c[cStreaming],
		PromptTokens: c[cPrompt], CompletionTokens: c[cComp], TotalTokens: c[cTotal]}
	if c[cCosted] > 0 {
		cost := func(n int64) *float64 { v := float64(n) / 1e9; return &v }
		s.PromptCost, s.CompletionCost, s.TotalCost = cost(c[cPCost]), cost(c[cCCost]), cost(c[cTCost])
	}
	if ls := c[cLastStart]; ls != 0 {
		t := time.Unix(0, ls).UTC()
		s.LastRunStart = &t
	}
	times := v.tx.Bucket(tRootTimes).Cursor()
	for _, kind := range []string{"l", "f"} {
		prefix := tkey(tenant, id, kind)
		for k, _ := times.Seek(prefix); k != nil && hasPrefix(k, prefix); k, _ = times.Next() {
			sec := math.Float64frombits(binary.BigEndian.Uint64(k[len(prefix)+1:]))
			if kind == "l" {
				s.Latencies = append(s.Latencies, sec)
			} else {
				s.FirstTokens = append(s.FirstTokens, sec)
			}
		}
	}
	return s
}

// Expire deletes up to limit traces first seen before before, with everything they hold, and
// takes them out of their projects' roll-ups: the trace stream forgets events of that age, so a
// rebuild would not have them either. It returns how many traces it deleted.
func (t *Traces) Expire(before time.Time, limit int) (int, error) {
	n := 0
	err := t.db.Update(func(tx *bbolt.Tx) error {
		exp := tx.Bucket(tExpiry)
		if exp == nil {
			return nil
		}
		var keys [][]byte
		c := exp.Cursor()
		for k, _ := c.First(); k != nil && len(keys) < limit; k, _ = c.Next() {
			if int64(binary.BigEndian.Uint64(k[:8])) >= before.UnixNano() {
				break
			}
			keys = append(keys, slices.Clone(k))
		}
		for _, k := range keys {
			tenant, traceID, _ := strings.Cut(string(k[8:]), "\x00")
			if err := expireTrace(tx, tenant, traceID); err != nil {
				return err
			}
			if err := exp.Delete(k); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

func expireTrace(tx *bbolt.Tx, tenant, traceID string) error {
	prefix := tkey(tenant, traceID)
	ancestors := map[string]bool{}
	cs := newCounterSet(tx, tenant)
	var ids []string
	c := tx.Bucket(tByTrace).Cursor()
	for k, _ := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, string(k[len(prefix)+1:]))
	}
	for _, id := range ids {
		m, err := getMeta(tx, tenant, id)
		if err != nil {
			return err
		}
		for _, a := range m.Ancestors {
			ancestors[a] = true
		}
		counters(cs, m, -1)
		if err := rootEntries(tx, cs, id, m, -1); err != nil {
			return err
		}
		for _, b := range [][]byte{tRuns, tMeta} {
			if err := tx.Bucket(b).Delete(tkey(tenant, id)); err != nil {
				return err
			}
		}
		if err := attributeRunFeedback(tx, tenant, id, ""); err != nil { // (feedback kept elsewhere)
			return err
		}
		if m.Posted {
			if err := tx.Bucket(tByProject).Delete(projectKey(tenant, m, id)); err != nil {
				return err
			}
		}
	}
	if err := cs.flush(); err != nil {
		return err
	}
	if err := dropTraceFeedback(tx, tenant, traceID); err != nil {
		return err
	}
	if err := dropTraceTokens(tx, tenant, traceID); err != nil {
		return err
	}
	if err := deleteUnder(tx.Bucket(tByTrace), prefix); err != nil {
		return err
	}
	// Roll-ups kept for ancestors that were never posted.
	for a := range ancestors {
		if err := tx.Bucket(tMeta).Delete(tkey(tenant, a)); err != nil {
			return err
		}
	}
	if err := tx.Bucket(tTraces).Delete(prefix); err != nil {
		return err
	}
	// The projector's version of the aggregate, so that its bucket does not grow forever.
	if vb := tx.Bucket([]byte("_versions/" + eventlog.TraceStream)); vb != nil {
		agg := eventlog.Aggregate{Kind: TraceKind, Tenant: tenant, ID: traceID}
		return vb.Delete([]byte(agg.Key()))
	}
	return nil
}

// deleteUnder removes every key of b under prefix (prefix, 0x00, ...).
func deleteUnder(b *bbolt.Bucket, prefix []byte) error {
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
