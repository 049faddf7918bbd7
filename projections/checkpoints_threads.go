package projections

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
)

// What the threads projection takes from checkpoints: a thread's values, interrupts and status
// follow its latest root checkpoint (namespace "").
//
// A thread that no run has busy is, as on the reference servers, derived from that checkpoint:
// interrupted when it has something to resume (a task left to run, or a pending interrupt),
// idle when not; error only when its last run failed, until the next checkpoint.

var (
	// threadHeadsBucket maps tenant/thread_id to the id of the thread's latest root checkpoint
	// (the last one folded), whose pending interrupts are the thread's.
	threadHeadsBucket = []byte("thread_heads")
	// threadNextBucket holds the trigger channels (graph.TriggerChannel) that have a value in the
	// thread's latest root checkpoint, tenant/thread_id 00 channel -> present: the thread has a
	// task left to run while it has one. Checkpoint events carry the channels that changed, so
	// the set is kept here rather than read from the checkpoint, which costs a fold a key or two.
	threadNextBucket = []byte("thread_next")
)

// setNext records which trigger channels of blobs have a value: over the thread's set when the
// event carries only the changed channels, in place of it when all (full).
func setNext(tx *bbolt.Tx, key []byte, blobs map[string]engine.BlobData, full bool) error {
	b := fillBucket(tx, threadNextBucket)
	prefix := valuesPrefix(key)
	if full {
		if err := deletePrefix(b, prefix); err != nil {
			return err
		}
	}
	for ch, blob := range blobs {
		if !graph.TriggerChannel(ch) {
			continue
		}
		k := append(bytes.Clone(prefix), ch...)
		var err error
		if blob.Value != nil || blob.Ref != "" {
			err = b.Put(k, present)
		} else if !full {
			err = b.Delete(k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// hasNext reports whether the thread under key has a task left to run.
func hasNext(tx *bbolt.Tx, key []byte) bool {
	prefix := valuesPrefix(key)
	k, _ := tx.Bucket(threadNextBucket).Cursor().Seek(prefix)
	return k != nil && bytes.HasPrefix(k, prefix)
}

// restingStatus is the status of th (under key) when no run has it busy and its last run did not
// fail: interrupted when there is something to resume, idle otherwise.
func restingStatus(tx *bbolt.Tx, key []byte, th *engine.Thread) string {
	if len(th.Interrupts) > 0 || hasNext(tx, key) {
		return engine.ThreadInterrupted
	}
	return engine.ThreadIdle
}

// internalChannel reports whether a channel belongs to the runtime, not to the state.
func internalChannel(ch string) bool {
	return strings.HasPrefix(ch, "__") || strings.HasPrefix(ch, "branch:")
}

// getThreadRaw reads the thread under key, leaving its values as JSON (a *json.RawMessage, or nil
// for null) so that a fold does not decode and encode every value.
func getThreadRaw(b *bbolt.Bucket, key []byte) (engine.Thread, bool, error) {
	var values json.RawMessage
	th := engine.Thread{Values: &values}
	ok, err := getJSON(b, key, &th)
	return th, ok, err
}

// applyCheckpoint sets the thread's values to those of a root checkpoint, clears its interrupts
// and makes it idle (unless a run has it busy: the run decides its status when it ends).
//
// The event carries only the channels that changed since its parent, so only those are written
// over the values of the previous root checkpoint; the writer sends every channel (Full)
// whenever the parent is not the newest checkpoint (a fork), and then the values are replaced.
// Values kept in the object store cannot be read by a fold: their references are kept instead
// (see ValueRef), for the reader to resolve.
func (t *Threads) applyCheckpoint(tx *bbolt.Tx, e eventlog.Event, key []byte, at engine.Time) error {
	d, err := t.db.decoded.checkpointData(e, &t.db.primed)
	if err != nil {
		return err
	}
	if d.NS != "" {
		return nil
	}
	b := fillBucket(tx, threadsBucket)
	th, ok, err := t.load(b, key)
	if err != nil || !ok {
		return err // checkpoints of a thread that does not exist (a saver used on its own)
	}
	first := false
	if raw, _ := th.Values.(*json.RawMessage); raw == nil || len(*raw) == 0 || string(*raw) == "null" || d.Full {
		// No checkpoint yet (null), or all new.
		first = true
		all := make(map[string]json.RawMessage, len(d.Blobs))
		for ch, blob := range d.Blobs {
			if v := storedValue(blob); v != nil {
				all[ch] = v
			}
		}
		if err := setValues(tx, key, all); err != nil {
			return err
		}
	} else {
		vals := fillBucket(tx, threadValuesBucket)
		prefix := valuesPrefix(key)
		for ch, blob := range d.Blobs {
			if internalChannel(ch) {
				continue
			}
			k := append(bytes.Clone(prefix), ch...)
			if v := storedValue(blob); v != nil {
				err = vals.Put(k, v)
			} else {
				err = vals.Delete(k)
			}
			if err != nil {
				return err
			}
		}
	}
	if err := setNext(tx, key, d.Blobs, first); err != nil {
		return err
	}
	th.Values = hasValues
	th.Interrupts = map[string]any{}
	if th.Status != engine.ThreadBusy {
		// A state update (no run): interrupted still when the update leaves a task to run.
		th.Status = restingStatus(tx, key, &th)
	}
	th.UpdatedAt, th.StateUpdatedAt = at, at
	if err := t.setHead(tx, key, d.Checkpoint.ID); err != nil {
		return err
	}
	return t.store(b, key, th)
}

// applyWrites records the interrupts written on the thread's latest root checkpoint, by task id
// (tasks whose list is empty are left out, as the thread state shows them), and makes the thread
// interrupted (unless a run has it busy).
func (t *Threads) applyWrites(tx *bbolt.Tx, e eventlog.Event, key []byte, at engine.Time) error {
	var d engine.WritesData
	if err := decodeJSON(e.Data, &d); err != nil {
		return err
	}
	if d.NS != "" || t.head(tx, key) != d.CheckpointID {
		return nil
	}
	var interrupts []engine.PendingWriteData
	for _, w := range d.Writes {
		if w.Channel == graph.Interrupt && w.Value != nil {
			interrupts = append(interrupts, w)
		}
	}
	if len(interrupts) == 0 {
		return nil
	}
	b := fillBucket(tx, threadsBucket)
	th, ok, err := t.load(b, key)
	if err != nil || !ok {
		return err
	}
	if th.Interrupts == nil {
		th.Interrupts = map[string]any{}
	}
	for _, w := range interrupts {
		var ivs []any
		if err := decodeJSON(w.Value, &ivs); err != nil {
			return err
		}
		if len(ivs) == 0 {
			continue // a task waiting for a subgraph that stopped before a node
		}
		th.Interrupts[w.TaskID] = ivs
	}
	if th.Status != engine.ThreadBusy {
		th.Status = engine.ThreadInterrupted
	}
	th.UpdatedAt, th.StateUpdatedAt = at, at
	return t.store(b, key, th)
}

// settle sets the status of thread tenant/id once its last active run has ended: error when that
// run failed, else its resting status. A thread that does not exist is left alone.
func (t *Threads) settle(tx *bbolt.Tx, tenant, id string, failed bool, at time.Time) error {
	b := fillBucket(tx, threadsBucket)
	key := tenantKey(tenant, id)
	th, ok, err := t.load(b, key)
	if err != nil || !ok {
		return err
	}
	th.Status = engine.ThreadError
	if !failed {
		th.Status = restingStatus(tx, key, &th)
	}
	th.UpdatedAt = engine.At(at)
	return t.store(b, key, th)
}

// Head returns the id of the thread's newest root checkpoint, "" when it has none.
func (t *Threads) Head(tenant, id string) (string, error) {
	if head, ok := t.heads.get(string(tenantKey(tenant, id))); ok {
		return head, nil
	}
	var head string
	err := t.db.View(func(tx *bbolt.Tx) error {
		head = string(tx.Bucket(threadHeadsBucket).Get(tenantKey(tenant, id)))
		return nil
	})
	return head, err
}
