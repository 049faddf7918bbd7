// Package checkpoints keeps graph checkpoints on the event log: every checkpoint is an event on
// its thread's subject (thread.<tenant>.<thread_id>.checkpoint), pending writes another
// (….writes), values too large for an event go to a JetStream object store by digest, and the
// projections.Checkpoints projection answers the reads.
//
// A checkpoint event carries only the channels that changed since its parent (LangGraph's blob
// per channel version), so a long message list is not rewritten by every step. This file holds
// the pure part: building, offloading and decoding the events.
package checkpoints

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/jsoncount"
	"github.com/jetgraph/jetgraph/eventlog"
)

const (
	// BlobBucket is the object store of values too large for an event.
	BlobBucket = "JG_BLOBS"
	// MaxInline is the largest value an event carries; larger ones go to the object store.
	MaxInline = 512 << 10
	// MaxInlineTotal bounds the values one event carries (the largest go to the object store
	// first), so that an event stays well under NATS's default 1 MiB message size.
	MaxInlineTotal = 512 << 10
)

// Aggregate is the thread whose subject a checkpoint is appended to.
func Aggregate(tenant, threadID string) eventlog.Aggregate {
	return eventlog.Aggregate{Kind: "thread", Tenant: tenant, ID: threadID}
}

// Object is a value bound for the object store, named by its digest.
type Object struct {
	Digest string
	Data   []byte
}

// CheckpointData is the payload of cp's event. With full it carries every channel that has a
// value; otherwise only the channels listed in changed (those whose version or value differ from
// the stored parent's, see projections.Checkpoints.Diff), a changed channel without a value
// meaning the value is gone. A state over engine.MaxStateBytes is refused (TooLarge).
func CheckpointData(ref graph.Ref, cp graph.Checkpoint, md map[string]any, parent *graph.Ref, changed []string, full bool) (engine.CheckpointData, error) {
	if ref.ID != "" && ref.ID != cp.ID {
		return engine.CheckpointData{}, fmt.Errorf("checkpoints: ref names checkpoint %s, checkpoint is %s", ref.ID, cp.ID)
	}
	size := 0
	for _, v := range cp.ChannelValues {
		size += len(v)
	}
	if size > engine.MaxStateBytes {
		return engine.CheckpointData{}, engine.StateTooLarge("checkpoints.put", "The state of checkpoint "+cp.ID, size)
	}
	// Written into the checkpoint's event (one document with it), without encoding/json's
	// reflection over the map (see encode.go).
	raw, err := encodeMetadata(md)
	if err != nil {
		return engine.CheckpointData{}, fmt.Errorf("checkpoints: metadata: %w", err)
	}
	d := engine.CheckpointData{
		NS: ref.NS,
		Checkpoint: engine.CheckpointHeader{V: cp.V, ID: cp.ID, TS: cp.TS,
			ChannelVersions: cp.ChannelVersions, VersionsSeen: cp.VersionsSeen},
		Metadata: raw, Blobs: map[string]engine.BlobData{}, Full: full,
	}
	if parent != nil {
		d.Parent = &engine.CheckpointRef{ThreadID: parent.ThreadID, NS: parent.NS, ID: parent.ID}
	}
	blob := func(ch string) engine.BlobData {
		b := engine.BlobData{Version: cp.ChannelVersions[ch]}
		if v, ok := cp.ChannelValues[ch]; ok {
			b.Value = orNull(v)
		}
		return b
	}
	if full {
		for ch := range cp.ChannelValues {
			d.Blobs[ch] = blob(ch)
		}
	} else {
		for _, ch := range changed {
			d.Blobs[ch] = blob(ch)
		}
	}
	return d, nil
}

// WritesData is the payload of the event of pending writes on the checkpoint ref.
func WritesData(ref graph.Ref, writes []graph.PendingWrite) engine.WritesData {
	d := engine.WritesData{NS: ref.NS, CheckpointID: ref.ID, Writes: make([]engine.PendingWriteData, len(writes))}
	for i, w := range writes {
		d.Writes[i] = engine.PendingWriteData{TaskID: w.TaskID, Channel: w.Channel, Value: orNull(w.Value)}
	}
	return d
}

// orNull is v, or JSON null for a missing value (as MemorySaver stores a nil RawMessage).
func orNull(v json.RawMessage) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	return v
}

// slot is a value of an event that may move to the object store.
type slot struct {
	key   string // orders equal sizes, so offloading is deterministic
	value *json.RawMessage
	ref   *string
}

// offload moves values out of slots: every one over MaxInline, then the largest of the rest
// until they total at most MaxInlineTotal. It returns the objects to store, each digest once.
func offload(slots []slot) []Object {
	var objs []Object
	seen := map[string]bool{}
	move := func(s slot) {
		data := *s.value
		d := engine.BlobDigest(data)
		*s.ref, *s.value = d, nil
		if !seen[d] {
			seen[d] = true
			objs = append(objs, Object{Digest: d, Data: data})
		}
	}
	var rest []slot
	total := 0
	for _, s := range slots {
		switch n := len(*s.value); {
		case n == 0:
		case n > MaxInline:
			move(s)
		default:
			rest = append(rest, s)
			total += n
		}
	}
	slices.SortFunc(rest, func(a, b slot) int {
		return cmp.Or(len(*b.value)-len(*a.value), cmp.Compare(a.key, b.key))
	})
	for _, s := range rest {
		if total <= MaxInlineTotal {
			break
		}
		total -= len(*s.value)
		move(s)
	}
	return objs
}

// OffloadCheckpoint replaces the values of d that are too large for an event by their digests
// and returns the objects to put in the object store before d is appended.
func OffloadCheckpoint(d *engine.CheckpointData) []Object {
	keys := sortedKeys(d.Blobs)
	bs := make([]engine.BlobData, len(keys))
	slots := make([]slot, len(keys))
	for i, k := range keys {
		bs[i] = d.Blobs[k]
		slots[i] = slot{key: k, value: &bs[i].Value, ref: &bs[i].Ref}
	}
	objs := offload(slots)
	for i, k := range keys {
		d.Blobs[k] = bs[i]
	}
	return objs
}

// OffloadWrites is OffloadCheckpoint for pending writes.
func OffloadWrites(d *engine.WritesData) []Object {
	slots := make([]slot, len(d.Writes))
	for i := range d.Writes {
		w := &d.Writes[i]
		slots[i] = slot{key: fmt.Sprintf("%08d", i), value: &w.Value, ref: &w.Ref}
	}
	return offload(slots)
}

// Decode returns the payload of a checkpoint event (*engine.CheckpointData) or of a writes event
// (*engine.WritesData); nil for any other event.
func Decode(e eventlog.Event) (any, error) {
	var v any
	switch e.Type {
	case engine.ThreadCheckpoint:
		v = &engine.CheckpointData{}
	case engine.ThreadWrites:
		v = &engine.WritesData{}
	default:
		return nil, nil
	}
	jsoncount.Decoded()
	if err := json.Unmarshal(e.Data, v); err != nil {
		return nil, fmt.Errorf("checkpoints: decode %s event %s: %w", e.Type, e.ID, err)
	}
	return v, nil
}

// Rethread returns a checkpoint or writes event of a thread as a new event (new id, stamped now)
// of thread toThread of the same tenant: the checkpoint ids are kept, the parent ref and a
// "thread_id" key of the metadata name the new thread, and values stay where they are (the
// object store is shared). ok is false for any other event.
func Rethread(e eventlog.Event, toThread string) (out eventlog.Event, ok bool, err error) {
	v, err := Decode(e)
	if v == nil || err != nil {
		return eventlog.Event{}, false, err
	}
	if d, isCP := v.(*engine.CheckpointData); isCP {
		if d.Parent != nil {
			d.Parent.ThreadID = toThread
		}
		if d.Metadata, err = setThreadID(d.Metadata, toThread); err != nil {
			return eventlog.Event{}, false, err
		}
	}
	out, err = eventlog.New(Aggregate(e.Aggregate.Tenant, toThread), e.Type, v)
	return out, err == nil, err
}

// setThreadID sets md's "thread_id" to id when md has one, leaving the rest as it is.
func setThreadID(md json.RawMessage, id string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	jsoncount.Decoded()
	if err := json.Unmarshal(md, &m); err != nil {
		return nil, fmt.Errorf("checkpoints: metadata: %w", err)
	}
	if _, ok := m["thread_id"]; !ok {
		return md, nil
	}
	m["thread_id"], _ = json.Marshal(id)
	jsoncount.Encoded()
	return json.Marshal(m)
}
