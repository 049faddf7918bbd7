package traces

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/tracing/trace"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// Feedback is kept under its trace (tFeedback: tenant,trace,feedback -> trace.Feedback JSON), so
// that it expires with the trace, and indexed by id (tFeedbackIDs: tenant,feedback ->
// trace 0x00 project), by run (tFeedbackByRun) and by the project whose statistics it counts in
// (tFeedbackByProject). Feedback counts in a project once its run is posted there (feedback
// often arrives before its run), or at once for feedback on a project without a run; the id
// index remembers which project, so that taking it out is exact whatever happened since.

// FeedbackUpdateData is the data of FeedbackUpdated: the fields an update sets (a subset of
// trace.FeedbackUpdateFields, checked by the command).
type FeedbackUpdateData struct {
	ID     string         `json:"id"`
	Update map[string]any `json:"update"`
}

// FeedbackRef is the data of FeedbackDeleted.
type FeedbackRef struct {
	ID string `json:"id"`
}

// applyFeedback folds FeedbackCreated, FeedbackUpdated, FeedbackDeleted and
// FeedbackTokenCreated.
func applyFeedback(tx *bbolt.Tx, e eventlog.Event) error {
	tenant := e.Aggregate.Tenant
	switch e.Type {
	case FeedbackCreated:
		var d FeedbackData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		var obj map[string]any
		_ = json.Unmarshal(d.Feedback, &obj) // (events of old versions were not checked: keep what is valid)
		f, _ := trace.ParseFeedback(obj)
		f.ID = strings.ToLower(d.ID)
		f.CreatedAt, f.ModifiedAt = engine.At(e.Time), engine.At(e.Time)
		old, err := dropFeedback(tx, tenant, f.ID) // a retry or a second post of an id replaces it
		if err != nil {
			return err
		}
		if old != nil {
			f.CreatedAt = old.CreatedAt
		}
		if err := touchTrace(tx, tenant, e.Aggregate.ID, e.Time); err != nil {
			return err
		}
		return putFeedback(tx, tenant, e.Aggregate.ID, &f, feedbackProject(tx, tenant, &f))
	case FeedbackUpdated:
		var d FeedbackUpdateData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		traceID, project, ok := feedbackPlace(tx, tenant, d.ID)
		if !ok {
			return nil // deleted since the command checked it: nothing to update
		}
		f, _, err := getFeedback(tx, tenant, traceID, d.ID)
		if err != nil || f == nil {
			return err
		}
		trace.ApplyFeedbackUpdate(f, d.Update, e.Time) // (checked by the command; an invalid field leaves it as it was)
		return putFeedback(tx, tenant, traceID, f, project)
	case FeedbackDeleted:
		var d FeedbackRef
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return err
		}
		_, err := dropFeedback(tx, tenant, d.ID)
		return err
	case FeedbackTokenCreated:
		if err := touchTrace(tx, tenant, e.Aggregate.ID, e.Time); err != nil {
			return err
		}
		return applyFeedbackToken(tx, tenant, e.Aggregate.ID, e.Data)
	}
	return nil
}

// feedbackProject is the project whose statistics f counts in now: its run's, once the run is
// posted; without a run, its session's.
func feedbackProject(tx *bbolt.Tx, tenant string, f *trace.Feedback) string {
	if f.RunID == nil {
		if f.SessionID != nil {
			return *f.SessionID
		}
		return ""
	}
	m, err := getMeta(tx, tenant, *f.RunID)
	if err != nil || !m.Posted {
		return ""
	}
	return m.Project
}

// feedbackPlace returns where a feedback is kept and the project it counts in.
func feedbackPlace(tx *bbolt.Tx, tenant, id string) (traceID, project string, ok bool) {
	v := tx.Bucket(tFeedbackIDs).Get(tkey(tenant, id))
	if v == nil {
		return "", "", false
	}
	traceID, project, _ = strings.Cut(string(v), "\x00")
	return traceID, project, true
}

func getFeedback(tx *bbolt.Tx, tenant, traceID, id string) (*trace.Feedback, bool, error) {
	var f trace.Feedback
	ok, err := projections.GetJSON(tx.Bucket(tFeedback), tkey(tenant, traceID, id), &f)
	if err != nil || !ok {
		return nil, false, err
	}
	return &f, true, nil
}

// putFeedback stores f under traceID with its indexes, counting it in project ("": none).
func putFeedback(tx *bbolt.Tx, tenant, traceID string, f *trace.Feedback, project string) error {
	if err := projections.PutJSON(tx.Bucket(tFeedback), tkey(tenant, traceID, f.ID), f); err != nil {
		return err
	}
	if err := tx.Bucket(tFeedbackIDs).Put(tkey(tenant, f.ID), []byte(traceID+"\x00"+project)); err != nil {
		return err
	}
	if f.RunID != nil {
		if err := tx.Bucket(tFeedbackByRun).Put(tkey(tenant, *f.RunID, f.ID), nil); err != nil {
			return err
		}
	}
	if project != "" {
		return tx.Bucket(tFeedbackByProject).Put(tkey(tenant, project, f.ID), nil)
	}
	return nil
}

// dropFeedback deletes a feedback and its indexes, returning it (nil when there was none).
func dropFeedback(tx *bbolt.Tx, tenant, id string) (*trace.Feedback, error) {
	traceID, project, ok := feedbackPlace(tx, tenant, id)
	if !ok {
		return nil, nil
	}
	f, _, err := getFeedback(tx, tenant, traceID, id)
	if err != nil {
		return nil, err
	}
	var errs []error
	errs = append(errs, tx.Bucket(tFeedback).Delete(tkey(tenant, traceID, id)), tx.Bucket(tFeedbackIDs).Delete(tkey(tenant, id)))
	if f != nil && f.RunID != nil {
		errs = append(errs, tx.Bucket(tFeedbackByRun).Delete(tkey(tenant, *f.RunID, id)))
	}
	if project != "" {
		errs = append(errs, tx.Bucket(tFeedbackByProject).Delete(tkey(tenant, project, id)))
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return f, nil
}

// runFeedbackIDs lists the feedback on a run.
func runFeedbackIDs(tx *bbolt.Tx, tenant, runID string) []string {
	var ids []string
	prefix := tkey(tenant, runID)
	c := tx.Bucket(tFeedbackByRun).Cursor()
	for k, _ := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, string(k[len(prefix)+1:]))
	}
	return ids
}

// attributeRunFeedback makes the feedback on a run count in project ("": in none), when its run
// is first posted, moves, or goes.
func attributeRunFeedback(tx *bbolt.Tx, tenant, runID, project string) error {
	for _, id := range runFeedbackIDs(tx, tenant, runID) {
		traceID, old, ok := feedbackPlace(tx, tenant, id)
		if !ok || old == project {
			continue
		}
		if old != "" {
			if err := tx.Bucket(tFeedbackByProject).Delete(tkey(tenant, old, id)); err != nil {
				return err
			}
		}
		if project != "" {
			if err := tx.Bucket(tFeedbackByProject).Put(tkey(tenant, project, id), nil); err != nil {
				return err
			}
		}
		if err := tx.Bucket(tFeedbackIDs).Put(tkey(tenant, id), []byte(traceID+"\x00"+project)); err != nil {
			return err
		}
	}
	return nil
}

// dropTraceFeedback deletes the feedback kept under a trace, with its indexes.
func dropTraceFeedback(tx *bbolt.Tx, tenant, traceID string) error {
	var ids []string
	prefix := tkey(tenant, traceID)
	c := tx.Bucket(tFeedback).Cursor()
	for k, _ := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, string(k[len(prefix)+1:]))
	}
	for _, id := range ids {
		if t, _, ok := feedbackPlace(tx, tenant, id); ok && t == traceID {
			if _, err := dropFeedback(tx, tenant, id); err != nil {
				return err
			}
		} else if err := tx.Bucket(tFeedback).Delete(tkey(tenant, traceID, id)); err != nil {
			return err // (a record no index names: a leftover of an older version)
		}
	}
	return nil
}

// FeedbackByID returns a feedback by id.
func (v *TraceView) FeedbackByID(tenant, id string) (*trace.Feedback, bool, error) {
	traceID, _, ok := feedbackPlace(v.tx, tenant, id)
	if !ok {
		return nil, false, nil
	}
	return getFeedback(v.tx, tenant, traceID, id)
}

// FeedbackTrace returns the trace a feedback is kept on.
func (v *TraceView) FeedbackTrace(tenant, id string) (string, bool) {
	traceID, _, ok := feedbackPlace(v.tx, tenant, id)
	return traceID, ok
}

// RunFeedback returns the feedback on a run.
func (v *TraceView) RunFeedback(tenant, runID string) ([]trace.Feedback, error) {
	return v.feedbackOf(tenant, runFeedbackIDs(v.tx, tenant, runID))
}

// ProjectFeedback returns the feedback counting in a project's statistics.
func (v *TraceView) ProjectFeedback(tenant, project string) ([]trace.Feedback, error) {
	var ids []string
	prefix := tkey(tenant, project)
	c := v.tx.Bucket(tFeedbackByProject).Cursor()
	for k, _ := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, string(k[len(prefix)+1:]))
	}
	return v.feedbackOf(tenant, ids)
}

// AllFeedback returns every feedback of tenant.
func (v *TraceView) AllFeedback(tenant string) ([]trace.Feedback, error) {
	var ids []string
	prefix := tkey(tenant)
	c := v.tx.Bucket(tFeedbackIDs).Cursor()
	for k, _ := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, string(k[len(prefix)+1:]))
	}
	return v.feedbackOf(tenant, ids)
}

func (v *TraceView) feedbackOf(tenant string, ids []string) ([]trace.Feedback, error) {
	out := make([]trace.Feedback, 0, len(ids))
	for _, id := range ids {
		f, ok, err := v.FeedbackByID(tenant, id)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, *f)
		}
	}
	return out, nil
}

// ProjectUpdateData is the data of ProjectUpdated: the fields set (nil: unchanged).
type ProjectUpdateData struct {
	Name        *string        `json:"name,omitempty"`
	Description *string        `json:"description,omitempty"`
	Extra       map[string]any `json:"extra,omitempty"`
	EndTime     *engine.Time   `json:"end_time,omitempty"`
}

// applyProjectUpdate folds ProjectUpdated. A new name that another project took between the
// command's check and the fold leaves the name as it was: the first to take a name keeps it.
func applyProjectUpdate(tx *bbolt.Tx, tenant, id string, d ProjectUpdateData) error {
	var p trace.Project
	ok, err := projections.GetJSON(tx.Bucket(tProjects), tkey(tenant, id), &p)
	if err != nil || !ok {
		return err // (deleted since the command checked it)
	}
	if d.Name != nil && *d.Name != p.Name {
		if _, taken := projectByName(tx, tenant, *d.Name); !taken {
			if err := tx.Bucket(tNames).Delete(tkey(tenant, p.Name)); err != nil {
				return err
			}
			if err := tx.Bucket(tNames).Put(tkey(tenant, *d.Name), []byte(id)); err != nil {
				return err
			}
			p.Name = *d.Name
		}
	}
	if d.Description != nil {
		p.Description = d.Description
	}
	if d.Extra != nil {
		p.Extra = d.Extra
	}
	if d.EndTime != nil {
		p.EndTime = d.EndTime
	}
	return projections.PutJSON(tx.Bucket(tProjects), tkey(tenant, id), p)
}

// deleteProject folds ProjectDeleted: the project goes with its traces (whole: every run of a
// trace that has a run in it) and the feedback on its runs or counting in it.
func deleteProject(tx *bbolt.Tx, tenant, id string) error {
	var p trace.Project
	ok, err := projections.GetJSON(tx.Bucket(tProjects), tkey(tenant, id), &p)
	if err != nil || !ok {
		return err
	}
	traces := map[string]bool{}
	var runs []string
	prefix := append(tkey(tenant, id), 0)
	c := tx.Bucket(tByProject).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(k) > len(prefix)+8; k, _ = c.Next() {
		runs = append(runs, string(k[len(prefix)+8:]))
	}
	for _, run := range runs {
		m, err := getMeta(tx, tenant, run)
		if err != nil {
			return err
		}
		traces[m.Trace] = true
		for _, fid := range runFeedbackIDs(tx, tenant, run) {
			if _, err := dropFeedback(tx, tenant, fid); err != nil {
				return err
			}
		}
	}
	counted, err := (&TraceView{tx: tx}).ProjectFeedback(tenant, id)
	if err != nil {
		return err
	}
	for _, f := range counted {
		if _, err := dropFeedback(tx, tenant, f.ID); err != nil {
			return err
		}
	}
	ordered := make([]string, 0, len(traces))
	for t := range traces {
		ordered = append(ordered, t)
	}
	slices.Sort(ordered)
	for _, t := range ordered {
		if err := dropTrace(tx, tenant, t); err != nil {
			return err
		}
	}
	for _, err := range []error{
		deleteUnder(tx.Bucket(tRootTimes), tkey(tenant, id)),
		tx.Bucket(tCounters).Delete(tkey(tenant, id)),
		tx.Bucket(tNames).Delete(tkey(tenant, p.Name)),
		tx.Bucket(tProjects).Delete(tkey(tenant, id)),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// dropTrace deletes a trace as its expiry does, with its expiry entry.
func dropTrace(tx *bbolt.Tx, tenant, traceID string) error {
	k := tkey(tenant, traceID)
	first := tx.Bucket(tTraces).Get(k)
	if first != nil {
		if err := tx.Bucket(tExpiry).Delete(append(slices.Clone(first), k...)); err != nil {
			return err
		}
	}
	return expireTrace(tx, tenant, traceID)
}

// freeProjectID is the id of a new project called name: ProjectID, unless a project renamed
// since holds it, then the next free id derived from the name.
func freeProjectID(tx *bbolt.Tx, tenant, name, id string) string {
	for n := 1; tx.Bucket(tProjects).Get(tkey(tenant, id)) != nil; n++ {
		id = ProjectID(tenant, name+"\x00"+strconv.Itoa(n))
	}
	return id
}

// feedbackTimeOrder sorts feedback newest first, then by id.
func feedbackTimeOrder(a, b trace.Feedback) int {
	if c := b.CreatedAt.Compare(a.CreatedAt.Time); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}

// SortFeedback sorts feedback newest first, then by id descending.
func SortFeedback(fs []trace.Feedback) { slices.SortStableFunc(fs, feedbackTimeOrder) }
