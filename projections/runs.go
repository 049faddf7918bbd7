package projections

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/jsoncount"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Runs folds run events into run records.
//
// Keys: runs: esc(tenant) 00 esc(thread) 00 esc(run_id) -> RunRecord JSON as created; run_state:
// the same key -> RunState, what changed since, in a binary form (runs_state.go); run ids are UUIDv7, so a thread's runs are
// in creation order. run_index: esc(tenant) 00 esc(run_id) -> thread id, for the endpoints that
// name a run without its thread.
//
// A record's kwargs are by far its biggest part and never change: keeping what does change
// apart means a run's transitions, and the loops that wait for them, never decode its kwargs.
//
// The states of the active runs this process folded are also kept in memory (live), so that the
// loops that wait on a run (a wait, a worker watching for a cancel) read them without a
// transaction. A state enters live when its transaction commits (committed) and leaves it when
// the run ends or goes; a run live does not hold is read from the file. The states of the runs
// that ended last are kept too (ended), for the wait that wakes at a run's end and reads it.
// Beside them, held keeps the decoded records of active runs this process created (Hold,
// HoldCreating), for the worker that takes one (Next) instead of decoding it from the file.
type Runs struct {
	db *DB

	mu       sync.Mutex
	changed  map[string]*RunState       // runs changed by the transaction being applied: state, or nil (gone)
	created  int                        // runs created by the transaction being applied
	watchers map[string][]chan struct{} // run key -> closed at its next change

	liveMu    sync.RWMutex
	live      map[string]RunState    // watchKey -> state, of active runs
	held      map[string]heldRun     // watchKey -> record as created, of active runs (a subset of live)
	creating  map[string]heldRun     // watchKey -> record as created, of runs being appended (HoldCreating)
	heldBytes int                    // the estimated size of held and creating
	ended     [2]map[string]RunState // watchKey -> state, of runs ended lately: [0] the newest, [1] the ones before

	// OnRunCreated and OnRunEnded, when set before the projector runs, are told of each run
	// that a committed transaction made active (created) or ended, with its status and, for a run
	// that started, how long its last attempt ran (metrics).
	OnRunCreated func()
	OnRunEnded   func(status string, ran time.Duration)
}

// NewRuns returns the runs projection stored in db.
func NewRuns(db *DB) *Runs {
	return &Runs{db: db, changed: map[string]*RunState{}, watchers: map[string][]chan struct{}{},
		live: map[string]RunState{}, held: map[string]heldRun{}, creating: map[string]heldRun{},
		ended: [2]map[string]RunState{{}, {}}}
}

func watchKey(tenant, thread, run string) string { return tenant + "/" + thread + "/" + run }

// Watch returns a channel closed the next time the run's record changes (or goes). Call it
// before reading the record, then wait on it if the record is not what you wait for.
func (r *Runs) Watch(tenant, thread, run string) <-chan struct{} {
	ch := make(chan struct{})
	r.mu.Lock()
	k := watchKey(tenant, thread, run)
	r.watchers[k] = append(r.watchers[k], ch)
	r.mu.Unlock()
	return ch
}

// Unwatch forgets a channel Watch returned, when its reader gives up waiting.
func (r *Runs) Unwatch(tenant, thread, run string, ch <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := watchKey(tenant, thread, run)
	ws := r.watchers[k]
	for i, w := range ws {
		if w == ch {
			ws = append(ws[:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) == 0 {
		delete(r.watchers, k)
	} else {
		r.watchers[k] = ws
	}
}

// touch records that the transaction being applied leaves the run in state st (nil: gone).
func (r *Runs) touch(tenant, thread, run string, st *RunState) {
	if st != nil {
		// As the file keeps them: to the microsecond.
		for _, t := range []*engine.Time{&st.UpdatedAt, &st.StartedAt, &st.EndedAt} {
			t.Time = t.Truncate(time.Microsecond)
		}
	}
	r.mu.Lock()
	r.changed[watchKey(tenant, thread, run)] = st
	r.mu.Unlock()
}

// committed keeps the states a committed transaction left, then wakes the watchers of the runs
// it changed (who read the new states).
func (r *Runs) committed(ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ok {
		r.liveMu.Lock()
		for k, st := range r.changed {
			if st == nil || !st.Active() {
				delete(r.live, k)
				r.take(k)
				r.keepEnded(k, st)
			} else {
				r.live[k] = *st
				r.promote(k)
				delete(r.ended[0], k)
				delete(r.ended[1], k)
			}
			if st != nil && !st.Active() && r.OnRunEnded != nil {
				r.OnRunEnded(st.Status, st.ran())
			}
		}
		r.liveMu.Unlock()
		if r.OnRunCreated != nil {
			for range r.created {
				r.OnRunCreated()
			}
		}
		for k := range r.changed {
			for _, ch := range r.watchers[k] {
				close(ch)
			}
			delete(r.watchers, k)
		}
	}
	clear(r.changed)
	r.created = 0
}

// maxEnded is how many ended runs' states ended keeps in each of its two generations.
const maxEnded = 1024

// keepEnded keeps the state st of a run that ended (or forgets a run that went: st nil) in
// ended. Called with liveMu held.
func (r *Runs) keepEnded(k string, st *RunState) {
	delete(r.ended[1], k)
	if st == nil {
		delete(r.ended[0], k)
		return
	}
	if _, ok := r.ended[0][k]; !ok && len(r.ended[0]) >= maxEnded {
		r.ended[1], r.ended[0] = r.ended[0], make(map[string]RunState, maxEnded)
	}
	r.ended[0][k] = *st
}

// ran is how long the run's last attempt ran, 0 when it never started.
func (st RunState) ran() time.Duration {
	if st.StartedAt.IsZero() || !st.EndedAt.After(st.StartedAt.Time) {
		return 0
	}
	return st.EndedAt.Sub(st.StartedAt.Time)
}

// LiveCounts returns how many runs this process has folded as pending (created, not started:
// the queue) and running, of every tenant. Runs that were active when the process started, and
// that it has not seen change since, are not counted.
func (r *Runs) LiveCounts() (pending, running int) {
	r.liveMu.RLock()
	defer r.liveMu.RUnlock()
	for _, st := range r.live {
		if st.Status == engine.RunPending {
			pending++
		} else if st.Status == engine.RunRunning {
			running++
		}
	}
	return pending, running
}

// forget empties live: the projection is being rebuilt.
func (r *Runs) forget() {
	r.liveMu.Lock()
	clear(r.live)
	clear(r.ended[0])
	clear(r.ended[1])
	clear(r.held)
	clear(r.creating)
	r.heldBytes = 0
	r.liveMu.Unlock()
}

var (
	runsBucket     = []byte("runs")
	runStateBucket = []byte("run_state")
	runIndexBucket = []byte("run_index")
	// runsTruncatedBucket holds truncatedKey once the runs have been truncated: the later events
	// of a run that was active then find no record, and change nothing.
	runsTruncatedBucket = []byte("runs_truncated")
	truncatedKey        = []byte("truncated")
)

// present is the value of keys that only say something is there: bbolt's Get answers nil for a
// key put with an empty value in the same transaction, as for one that is not there.
var present = []byte{1}

// truncate folds a truncation that names the runs: they are all forgotten, in the file and in
// memory (their watchers are woken).
func (r *Runs) truncate(tx *bbolt.Tx, e eventlog.Event) error {
	d, ok, err := truncation(e)
	if !ok || err != nil || !d.Runs {
		return err
	}
	r.liveMu.RLock()
	keys := slices.Collect(maps.Keys(r.live))
	for _, m := range r.ended {
		keys = slices.AppendSeq(keys, maps.Keys(m))
	}
	r.liveMu.RUnlock()
	r.mu.Lock() // (never while holding liveMu: committed takes them in this order)
	for _, k := range keys {
		r.changed[k] = nil
	}
	for k := range r.changed { // runs of this transaction, which the file loses too
		r.changed[k] = nil
	}
	r.mu.Unlock()
	if err := emptyBuckets(tx, string(runsBucket), string(runStateBucket), string(runIndexBucket)); err != nil {
		return err
	}
	return fillBucket(tx, runsTruncatedBucket).Put(truncatedKey, present)
}

// RunState is what changes of a run after its creation: what waiting for a run reads.
type RunState struct {
	Status    string           `json:"status"`
	Cancel    string           `json:"cancel,omitempty"`
	Attempt   int              `json:"attempt"`
	UpdatedAt engine.Time      `json:"updated_at"`
	StartedAt engine.Time      `json:"started_at"`
	EndedAt   engine.Time      `json:"ended_at"`
	Error     *engine.RunError `json:"error,omitempty"`
	// Checkpoint is set by the first attempt's start (where a rollback returns the thread).
	Checkpoint string `json:"checkpoint,omitempty"`
}

// Active reports whether the run has not ended.
func (st RunState) Active() bool {
	return st.Status == engine.RunPending || st.Status == engine.RunRunning
}

// Onto sets the fields of rec that st holds: rec as it is now, when rec is the run as created.
func (st RunState) Onto(rec *engine.RunRecord) {
	rec.Status, rec.Cancel, rec.Attempt, rec.UpdatedAt = st.Status, st.Cancel, st.Attempt, st.UpdatedAt
	rec.StartedAt, rec.EndedAt, rec.Error, rec.Checkpoint = st.StartedAt, st.EndedAt, st.Error, st.Checkpoint
}

func stateOf(rec engine.RunRecord) RunState {
	return RunState{Status: rec.Status, Cancel: rec.Cancel, Attempt: rec.Attempt, UpdatedAt: rec.UpdatedAt,
		StartedAt: rec.StartedAt, EndedAt: rec.EndedAt, Error: rec.Error, Checkpoint: rec.Checkpoint}
}

// Name implements Projection.
func (*Runs) Name() string { return "runs" }

// Buckets implements Projection.
func (*Runs) Buckets() []string {
	return []string{string(runsBucket), string(runStateBucket), string(runIndexBucket), string(runsTruncatedBucket)}
}

func runThreadPrefix(tenant, thread string) []byte {
	return escKey(keyBuf(len(tenant)+len(thread)), tenant, thread)
}

func runKey(tenant, thread, run string) []byte {
	return esc(escKey(keyBuf(len(tenant)+len(thread)+len(run)), tenant, thread), run)
}

func runIndexKey(tenant, run string) []byte {
	return esc(escKey(keyBuf(len(tenant)+len(run)), tenant), run)
}

// runTransition holds the fields of the payloads of the run events that change a run's state
// (engine.RunStartedData, RunFinishedData, RunCancelRequestedData), decoded at once.
type runTransition struct {
	RunID      string           `json:"run_id"`
	Attempt    int              `json:"attempt"`
	Checkpoint string           `json:"checkpoint"`
	Status     string           `json:"status"`
	Error      *engine.RunError `json:"error"`
	Action     string           `json:"action"`
}

var errNoRunID = errors.New("run event without run_id")

// runID reads the run_id of a run event's payload.
func runID(data json.RawMessage) (string, error) {
	var d struct {
		RunID string `json:"run_id"`
	}
	if err := decodeJSON(data, &d); err != nil {
		return "", err
	}
	if d.RunID == "" {
		return "", errNoRunID
	}
	return d.RunID, nil
}

// Apply implements Projection.
func (r *Runs) Apply(tx *bbolt.Tx, e eventlog.Event) error {
	if e.Aggregate.Kind != "thread" {
		return r.truncate(tx, e)
	}
	states := fillBucket(tx, runStateBucket)
	tenant, thread := e.Aggregate.Tenant, e.Aggregate.ID
	at := engine.At(e.Time)
	switch e.Type {
	case engine.RunCreatedEvent:
		c, err := r.db.decoded.runCreated(e)
		if err != nil {
			return err
		}
		id, raw, st := c.ID, c.Raw, c.State
		if err := fillBucket(tx, runIndexBucket).Put(runIndexKey(tenant, id), []byte(thread)); err != nil {
			return err
		}
		key := runKey(tenant, thread, id)
		r.touch(tenant, thread, id, &st)
		r.mu.Lock()
		r.created++
		r.mu.Unlock()
		if err := putState(states, key, st); err != nil {
			return err
		}
		return fillBucket(tx, runsBucket).Put(key, raw)
	case engine.RunStartedEvent, engine.RunFinishedEvent, engine.RunCancelRequestedEvent:
		d, err := r.db.decoded.transition(e) // one decode for the run's id and what changes
		if err != nil {
			return err
		}
		if d.RunID == "" {
			return errNoRunID
		}
		id := d.RunID
		key := runKey(tenant, thread, id)
		st, ok, err := r.foldedState(states, tenant, thread, id, key)
		if err != nil || !ok {
			if err == nil && fillBucket(tx, runsTruncatedBucket).Get(truncatedKey) != nil {
				return nil // a run that was active when the runs were truncated
			}
			return orMissing(err, e)
		}
		st.UpdatedAt = at
		switch e.Type {
		case engine.RunStartedEvent:
			st.Status, st.Attempt, st.StartedAt = engine.RunRunning, d.Attempt, at
			if d.Attempt == 1 {
				st.Checkpoint = d.Checkpoint
			}
		case engine.RunFinishedEvent:
			st.Status, st.Error, st.EndedAt = d.Status, d.Error, at
		case engine.RunCancelRequestedEvent:
			st.Cancel = d.Action
		}
		r.touch(tenant, thread, id, &st)
		return putState(states, key, st)
	case engine.RunDeletedEvent:
		id, err := runID(e.Data)
		if err != nil {
			return err
		}
		if err := fillBucket(tx, runIndexBucket).Delete(runIndexKey(tenant, id)); err != nil {
			return err
		}
		r.touch(tenant, thread, id, nil)
		key := runKey(tenant, thread, id)
		if err := states.Delete(key); err != nil {
			return err
		}
		return fillBucket(tx, runsBucket).Delete(key)
	case engine.ThreadDeleted:
		var ids [][]byte
		prefix := runThreadPrefix(tenant, thread)
		c := fillBucket(tx, runsBucket).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var rec struct {
				RunID string `json:"run_id"`
			}
			if decodeJSON(v, &rec) == nil {
				ids = append(ids, runIndexKey(tenant, rec.RunID))
				r.touch(tenant, thread, rec.RunID, nil)
			}
		}
		for _, k := range ids {
			if err := fillBucket(tx, runIndexBucket).Delete(k); err != nil {
				return err
			}
		}
		if err := deletePrefix(states, prefix); err != nil {
			return err
		}
		return deletePrefix(fillBucket(tx, runsBucket), prefix)
	}
	return nil
}

// foldedState returns the state of run tenant/thread/id (under key) as the transaction being
// applied has it: from what the transaction changed, or from live (which holds the committed
// state of every active run it has), and only for another run from the file. A transition then
// decodes no record: the run it changes was folded a moment before, by this process.
func (r *Runs) foldedState(states *bbolt.Bucket, tenant, thread, id string, key []byte) (RunState, bool, error) {
	k := watchKey(tenant, thread, id)
	r.mu.Lock()
	st, changed := r.changed[k]
	r.mu.Unlock()
	if changed {
		if st == nil {
			return RunState{}, false, nil
		}
		return *st, true, nil
	}
	r.liveMu.RLock()
	live, ok := r.live[k]
	r.liveMu.RUnlock()
	if ok {
		return live, true, nil
	}
	return getState(states, key)
}

// createdRun is what the folds take from a run_created payload: the run's id, its record
// (JSON) and state, and what its thread takes of it.
type createdRun struct {
	ID    string
	Raw   []byte
	State RunState
	Graph runGraph
}

// decodeCreated reads a run_created payload of thread, appended at at: the record it carries,
// on thread, pending, created at its created_at (at when it has none) and updated then. A record
// that is that already (a run made by this build) is kept as it came, its kwargs (its input
// above all) neither decoded nor encoded again; another is decoded, completed and encoded.
func decodeCreated(data []byte, thread string, at engine.Time) (createdRun, error) {
	var d struct {
		Run          jsontext.Value `json:"run"`
		ThreadConfig map[string]any `json:"thread_config"`
	}
	if err := decodeJSON(data, &d); err != nil {
		return createdRun{}, err
	}
	var head struct {
		RunState
		RunID       string      `json:"run_id"`
		ThreadID    string      `json:"thread_id"`
		CreatedAt   engine.Time `json:"created_at"`
		AssistantID string      `json:"assistant_id"`
		Kwargs      struct {
			Config struct {
				Configurable struct {
					GraphID any `json:"graph_id"`
				} `json:"configurable"`
			} `json:"config"`
		} `json:"kwargs"`
	}
	var rec engine.RunRecord
	narrow := decodeJSON(d.Run, &head) == nil
	if !narrow {
		// A shape the narrow reading does not take (a config that is no object): read it all.
		if err := decodeJSON(d.Run, &rec); err != nil {
			return createdRun{}, err
		}
		head.RunState, head.RunID, head.ThreadID, head.CreatedAt = stateOf(rec), rec.RunID, rec.ThreadID, rec.CreatedAt
		head.AssistantID, head.Kwargs.Config.Configurable.GraphID = rec.AssistantID, rec.Kwargs.GraphID()
	}
	if head.RunID == "" {
		return createdRun{}, errNoRunID
	}
	graphID, _ := head.Kwargs.Config.Configurable.GraphID.(string)
	c := createdRun{ID: head.RunID,
		Graph: runGraph{RunID: head.RunID, AssistantID: head.AssistantID, GraphID: graphID, ThreadConfig: d.ThreadConfig}}
	if head.ThreadID == thread && head.Status == engine.RunPending && !head.CreatedAt.IsZero() &&
		head.UpdatedAt.Equal(head.CreatedAt.Time) {
		c.Raw, c.State = bytes.Clone(d.Run), head.RunState
		return c, nil
	}
	if narrow {
		if err := decodeJSON(d.Run, &rec); err != nil {
			return createdRun{}, err
		}
	}
	rec.ThreadID, rec.Status = thread, engine.RunPending
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = at
	}
	rec.UpdatedAt = rec.CreatedAt
	c.State = stateOf(rec)
	jsoncount.Encoded()
	var err error
	c.Raw, err = jsonv1.Marshal(rec)
	return c, err
}

// getRun reads the run under key, its record and its state, and reports whether it is there.
func getRun(tx *bbolt.Tx, key []byte) (engine.RunRecord, bool, error) {
	st, ok, err := getState(tx.Bucket(runStateBucket), key)
	if err != nil || !ok {
		return engine.RunRecord{}, ok, err
	}
	return getRecord(tx, key, st)
}

// getRecord reads the record of the run under key, whose state st the caller read, and reports
// whether it is there.
func getRecord(tx *bbolt.Tx, key []byte, st RunState) (engine.RunRecord, bool, error) {
	var rec engine.RunRecord
	ok, err := getJSON(tx.Bucket(runsBucket), key, &rec)
	if err != nil || !ok {
		return rec, ok, err
	}
	st.Onto(&rec)
	return rec, true, nil
}

// appendRun returns a function that appends the run under a key, in state st, to out.
func appendRun(tx *bbolt.Tx, out *[]engine.RunRecord) func(key []byte, st RunState) error {
	return func(key []byte, st RunState) error {
		rec, ok, err := getRecord(tx, key, st)
		if err != nil {
			return fmt.Errorf("projections: run %q: %w", key, err)
		}
		if ok {
			*out = append(*out, rec)
		}
		return nil
	}
}

// Get returns a run of a thread, or false.
func (r *Runs) Get(tenant, thread, run string) (engine.RunRecord, bool, error) {
	var rec engine.RunRecord
	var ok bool
	err := r.db.View(func(tx *bbolt.Tx) error {
		var err error
		rec, ok, err = getRun(tx, runKey(tenant, thread, run))
		return err
	})
	return rec, ok, err
}

// State returns the state of a run of a thread, without reading the rest of its record (its
// kwargs above all): the loops that wait for a run to change read it at every change.
func (r *Runs) State(tenant, thread, run string) (RunState, bool, error) {
	r.liveMu.RLock()
	k := watchKey(tenant, thread, run)
	st, ok := r.live[k]
	if !ok {
		if st, ok = r.ended[0][k]; !ok {
			st, ok = r.ended[1][k]
		}
	}
	r.liveMu.RUnlock()
	if ok {
		return st, true, nil
	}
	err := r.db.View(func(tx *bbolt.Tx) error {
		var err error
		st, ok, err = getState(tx.Bucket(runStateBucket), runKey(tenant, thread, run))
		return err
	})
	return st, ok, err
}

// ThreadOf returns the thread a run is on, or false when the run does not exist.
func (r *Runs) ThreadOf(tenant, run string) (string, bool, error) {
	var thread string
	err := r.db.View(func(tx *bbolt.Tx) error {
		thread = string(tx.Bucket(runIndexBucket).Get(runIndexKey(tenant, run)))
		return nil
	})
	return thread, thread != "", err
}

// List returns a thread's runs, newest first, optionally only those of status.
func (r *Runs) List(tenant, thread, status string, limit, offset int) ([]engine.RunRecord, error) {
	all, err := r.all(tenant, thread)
	if err != nil {
		return nil, err
	}
	slices.Reverse(all)
	var out []engine.RunRecord
	for _, rec := range all {
		if status == "" || rec.Status == status {
			out = append(out, rec)
		}
	}
	return page(out, offset, limit), nil
}

// Active returns a thread's pending and running runs, oldest first: the queue.
func (r *Runs) Active(tenant, thread string) ([]engine.RunRecord, error) {
	var out []engine.RunRecord
	err := r.db.View(func(tx *bbolt.Tx) error {
		return r.queue(tx, tenant, thread, appendRun(tx, &out))
	})
	return out, err
}

// ActiveIDs returns the ids of a thread's pending and running runs, oldest first: Active without
// reading the runs' records.
func (r *Runs) ActiveIDs(tenant, thread string) ([]string, error) {
	if ids, ok := r.activeFromMemory(tenant, thread); ok {
		return ids, nil
	}
	var out []string
	err := r.db.View(func(tx *bbolt.Tx) error {
		prefix := runThreadPrefix(tenant, thread)
		return r.queue(tx, tenant, thread, func(key []byte, _ RunState) error {
			id, err := unesc(key[len(prefix):])
			out = append(out, id)
			return err
		})
	})
	return out, err
}

// Next returns the oldest active run of a thread other than skip (the run a worker has just
// ended, which the projection may show active still), read whole; false when there is none. The
// record of a run this process created and held (Hold) is taken from memory, once: the worker
// that takes it may change it, and a later Next decodes it from the file.
func (r *Runs) Next(tenant, thread, skip string) (engine.RunRecord, bool, error) {
	if ids, ok := r.activeFromMemory(tenant, thread); ok {
		ids = slices.DeleteFunc(ids, func(id string) bool { return id == skip })
		if len(ids) == 0 {
			return engine.RunRecord{}, false, nil
		}
		k := watchKey(tenant, thread, ids[0])
		r.liveMu.Lock()
		rec, found := r.take(k)
		st := r.live[k]
		r.liveMu.Unlock()
		if found {
			st.Onto(&rec)
			return rec, true, nil
		}
	}
	var rec engine.RunRecord
	var found bool
	err := r.db.View(func(tx *bbolt.Tx) error {
		prefix := runThreadPrefix(tenant, thread)
		err := r.queue(tx, tenant, thread, func(key []byte, st RunState) error {
			id, err := unesc(key[len(prefix):])
			if err != nil || id == skip {
				return err
			}
			r.liveMu.Lock()
			rec, found = r.take(watchKey(tenant, thread, id))
			r.liveMu.Unlock()
			if found {
				st.Onto(&rec)
				return errStop
			}
			if rec, found, err = getRecord(tx, key, st); err != nil {
				return err
			}
			if found {
				return errStop
			}
			return nil
		})
		if errors.Is(err, errStop) {
			err = nil
		}
		return err
	})
	return rec, found, err
}

// activeFromMemory returns the ids of a thread's active runs, oldest first, as Active would,
// when the last committed transactions changed the thread's runs (DB.activeRuns) and this
// process holds the state of each (live); false otherwise, for the file to answer. A run whose
// state is not live (one active before the process started, or ended since) sends the caller to
// the file, so the answer is never a mix of two transactions' that the file could not give.
func (r *Runs) activeFromMemory(tenant, thread string) ([]string, bool) {
	ids, ok := r.db.activeRuns.get(string(activeKey(tenant, thread, "")))
	if !ok {
		return nil, false
	}
	r.liveMu.RLock()
	defer r.liveMu.RUnlock()
	for _, id := range ids {
		if st, ok := r.live[watchKey(tenant, thread, id)]; !ok || !st.Active() {
			return nil, false
		}
	}
	return slices.Clone(ids), true
}

// errStop ends a walk of queue early.
var errStop = errors.New("stop")

// queue calls f with the key and the state of each active run of a thread, oldest first.
//
// It finds the thread's active runs in the index the threads projection keeps of them (so a
// thread with a long history costs no more than a new one), or, without that projection, scans
// the thread's runs; either way it reads only their states.
func (r *Runs) queue(tx *bbolt.Tx, tenant, thread string, f func(key []byte, st RunState) error) error {
	states := tx.Bucket(runStateBucket)
	index := tx.Bucket(threadActiveRunsBucket)
	if index == nil {
		return activeKeys(states, runThreadPrefix(tenant, thread), f)
	}
	prefix := activeKey(tenant, thread, "")
	c := index.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		key := runKey(tenant, thread, string(k[len(prefix):]))
		st, ok, err := getState(states, key)
		if err != nil {
			return fmt.Errorf("projections: run %q: %w", k, err)
		}
		if !ok || !st.Active() {
			continue
		}
		if err := f(key, st); err != nil {
			return err
		}
	}
	return nil
}

// activeKeys calls f with the key and the state of each active run among those whose keys start
// with prefix, in key order.
func activeKeys(states *bbolt.Bucket, prefix []byte, f func(key []byte, st RunState) error) error {
	c := states.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		st, err := decodeState(v)
		if err != nil {
			return fmt.Errorf("projections: run %q: %w", k, err)
		}
		if st.Active() {
			if err := f(k, st); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *Runs) all(tenant, thread string) ([]engine.RunRecord, error) {
	var out []engine.RunRecord
	err := r.db.View(func(tx *bbolt.Tx) error {
		prefix := runThreadPrefix(tenant, thread)
		c := tx.Bucket(runsBucket).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			rec, ok, err := getRun(tx, k)
			if err != nil {
				return fmt.Errorf("projections: run %q: %w", k, err)
			}
			if ok {
				out = append(out, rec)
			}
		}
		return nil
	})
	return out, err
}

// ActiveAll returns every active run of tenant, on any thread, oldest first within a thread.
// Ended runs, most of them, are never read whole.
func (r *Runs) ActiveAll(tenant string) ([]engine.RunRecord, error) {
	var out []engine.RunRecord
	err := r.db.View(func(tx *bbolt.Tx) error {
		return activeKeys(tx.Bucket(runStateBucket), append(esc(nil, tenant), 0x00), appendRun(tx, &out))
	})
	return out, err
}
