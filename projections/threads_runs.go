package projections

import (
	"bytes"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
)

// What the threads projection takes from runs: a thread is busy while it has a pending or
// running run; when its last active run ends, it is error if that run failed, else interrupted
// or idle as its latest checkpoint says (see restingStatus); a rolled back run returns the
// thread's values to the checkpoint the run started from.

// threadActiveRunsBucket holds tenant/thread_id/run_id for every active run of a thread.
var threadActiveRunsBucket = []byte("thread_active_runs")

func activeKey(tenant, thread, run string) []byte { return []byte(tenant + "/" + thread + "/" + run) }

// stageActive reads the thread's active runs (oldest first) from active, as the transaction
// leaves them so far, and stages them for the runs' queue (DB.activeRuns).
func (t *Threads) stageActive(active *bbolt.Bucket, tenant, thread string) []string {
	prefix := activeKey(tenant, thread, "")
	var ids []string
	c := active.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, string(k[len(prefix):]))
	}
	t.db.activeRuns.stage(string(prefix), ids)
	return ids
}

// applyRun folds a run event into the thread's status (and values, for a rollback).
func (t *Threads) applyRun(tx *bbolt.Tx, e eventlog.Event) error {
	tenant, thread := e.Aggregate.Tenant, e.Aggregate.ID
	active := fillBucket(tx, threadActiveRunsBucket)
	switch e.Type {
	case engine.RunCreatedEvent:
		c, err := t.db.decoded.runCreated(e)
		if err != nil {
			return err
		}
		d := c.Graph
		if err := active.Put(activeKey(tenant, thread, d.RunID), present); err != nil {
			return err
		}
		t.stageActive(active, tenant, thread)
		// One read and write of the thread: its run's graph, and busy.
		b := fillBucket(tx, threadsBucket)
		key := tenantKey(tenant, thread)
		th, ok, err := t.load(b, key)
		if err != nil || !ok {
			return err
		}
		setRunGraph(&th, d)
		if d.ThreadConfig != nil {
			th.Config = d.ThreadConfig
		}
		th.Status, th.UpdatedAt = engine.ThreadBusy, engine.At(e.Time)
		return t.store(b, key, th)
	case engine.RunFinishedEvent:
		d, err := t.db.decoded.transition(e)
		if err != nil {
			return err
		}
		// Interrupted or not, what is left to resume is the checkpoint's to say: a run
		// cancelled before it did anything leaves nothing.
		return t.endRun(tx, e, d.RunID, d.Status == engine.RunFailed || d.Status == engine.RunTimeout)
	case engine.RunDeletedEvent:
		var d engine.RunDeletedData
		if err := decodeJSON(e.Data, &d); err != nil {
			return err
		}
		if d.Rollback {
			if err := t.restore(tx, tenant, thread, d.RestoreTo); err != nil {
				return err
			}
		}
		return t.endRun(tx, e, d.RunID, false)
	}
	return nil
}

// endRun removes an ended run from the thread's active runs; with none left, the thread settles
// (error when the run failed).
func (t *Threads) endRun(tx *bbolt.Tx, e eventlog.Event, run string, failed bool) error {
	tenant, thread := e.Aggregate.Tenant, e.Aggregate.ID
	active := fillBucket(tx, threadActiveRunsBucket)
	if active.Get(activeKey(tenant, thread, run)) == nil {
		return nil // not active (already ended): the status belongs to a later run
	}
	if err := active.Delete(activeKey(tenant, thread, run)); err != nil {
		return err
	}
	if len(t.stageActive(active, tenant, thread)) > 0 {
		return nil // another run keeps it busy
	}
	return t.settle(tx, tenant, thread, failed, e.Time)
}

// restore sets the thread's values to those of its root checkpoint id ("" for none) and makes it
// the thread's head.
func (t *Threads) restore(tx *bbolt.Tx, tenant, thread, id string) error {
	b := fillBucket(tx, threadsBucket)
	key := tenantKey(tenant, thread)
	th, ok, err := t.load(b, key)
	if err != nil || !ok {
		return err
	}
	if id == "" {
		th.Values, th.Interrupts = nil, map[string]any{}
		if err := t.setHead(tx, key, ""); err != nil {
			return err
		}
		if err := setValues(tx, key, nil); err != nil {
			return err
		}
		if err := setNext(tx, key, nil, true); err != nil {
			return err
		}
		return t.store(b, key, th)
	}
	ref := graph.Ref{ThreadID: thread, ID: id}
	ns := nsPrefix(tenant, thread, "")
	ck := checkpointKey(ns, id)
	var rec checkpointRecord
	if ok, err := getJSON(fillBucket(tx, checkpointsBucket), ck, &rec); err != nil || !ok {
		return err // the checkpoint is gone: keep what the thread has
	}
	st, err := assemble(tx, ref, ns, ck, &rec, map[string]any{})
	if err != nil {
		return err
	}
	if err := setValues(tx, key, st.Checkpoint.ChannelValues); err != nil {
		return err
	}
	channels := make(map[string]engine.BlobData, len(st.Checkpoint.ChannelValues)+len(st.Blobs))
	for ch, v := range st.Checkpoint.ChannelValues {
		channels[ch] = engine.BlobData{Value: v}
	}
	for ch, ref := range st.Blobs {
		channels[ch] = engine.BlobData{Ref: ref}
	}
	if err := setNext(tx, key, channels, true); err != nil {
		return err
	}
	th.Values, th.Interrupts = hasValues, map[string]any{}
	if err := t.setHead(tx, key, id); err != nil {
		return err
	}
	return t.store(b, key, th)
}

// runGraph is what the thread takes from a run_created event.
type runGraph struct {
	RunID, AssistantID, GraphID string
	ThreadConfig                map[string]any
}

// setRunGraph records in the thread's metadata the graph and assistant its latest run uses, as
// the reference servers do (thread state is read with that graph).
func setRunGraph(th *engine.Thread, run runGraph) {
	if run.GraphID == "" {
		return
	}
	if th.Metadata == nil {
		th.Metadata = map[string]any{}
	}
	th.Metadata["graph_id"], th.Metadata["assistant_id"] = run.GraphID, run.AssistantID
}
