package checkpoints

import (
	"context"
	"fmt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// Saver is the graph.Saver of the event log. Writes append to the thread's subject and wait for
// the local projection, so a read right after a write sees it; reads come from the projection,
// with large values fetched from the object store. The tenant is the context's
// (engine.TenantFrom). Its behaviour is graph.MemorySaver's.
//
// Appends are unconditional (eventlog.Any): one writer per thread at a time is the run layer's
// to enforce.
type Saver struct {
	log       *eventlog.Log
	projector *projections.Projector
	view      *projections.Checkpoints
	blobs     *blobStore
}

var _ graph.Saver = (*Saver)(nil)

// New returns the saver appending to log and reading view, which projector keeps current.
func New(log *eventlog.Log, projector *projections.Projector, view *projections.Checkpoints) *Saver {
	return &Saver{log: log, projector: projector, view: view, blobs: newBlobStore(log)}
}

// Blob returns the value kept in the object store under digest (an engine.BlobData.Ref).
func (s *Saver) Blob(ctx context.Context, digest string) ([]byte, error) {
	return s.blobs.get(ctx, digest)
}

// Get implements graph.Saver.
func (s *Saver) Get(ctx context.Context, ref graph.Ref) (*graph.Tuple, error) {
	st, err := s.view.Get(engine.TenantFrom(ctx), ref)
	if err != nil || st == nil {
		return nil, err
	}
	return s.resolve(ctx, st)
}

// List implements graph.Saver.
func (s *Saver) List(ctx context.Context, ref graph.Ref, opts graph.ListOptions) ([]graph.Tuple, error) {
	sts, err := s.view.List(engine.TenantFrom(ctx), ref, opts)
	if err != nil {
		return nil, err
	}
	var out []graph.Tuple
	for i := range sts {
		t, err := s.resolve(ctx, &sts[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, nil
}

// resolve fetches the values the projection keeps in the object store.
func (s *Saver) resolve(ctx context.Context, st *projections.StoredTuple) (*graph.Tuple, error) {
	for ch, d := range st.Blobs {
		v, err := s.blobs.get(ctx, d)
		if err != nil {
			return nil, err
		}
		st.Checkpoint.ChannelValues[ch] = v
	}
	for i, d := range st.WriteBlobs {
		v, err := s.blobs.get(ctx, d)
		if err != nil {
			return nil, err
		}
		st.Writes[i].Value = v
	}
	return &st.Tuple, nil
}

// Put implements graph.Saver: it appends the checkpoint's event and waits for the projection.
func (s *Saver) Put(ctx context.Context, ref graph.Ref, cp graph.Checkpoint, md map[string]any, parent *graph.Ref) error {
	events, err := s.Events(ctx, ref, cp, md, parent)
	if err != nil {
		return err
	}
	return s.append(ctx, events)
}

// PutWrites implements graph.Saver.
func (s *Saver) PutWrites(ctx context.Context, ref graph.Ref, writes []graph.PendingWrite) error {
	if len(writes) == 0 {
		return nil
	}
	events, err := s.WriteEvents(ctx, ref, writes)
	if err != nil {
		return err
	}
	return s.append(ctx, events)
}

func (s *Saver) append(ctx context.Context, events []eventlog.Event) error {
	batch := make([]eventlog.Pending, len(events))
	for i, e := range events {
		batch[i] = eventlog.Pending{Event: e, Expect: eventlog.Any}
	}
	seq, err := s.log.AppendBatch(ctx, batch)
	if err != nil {
		return fmt.Errorf("checkpoints: append: %w", err)
	}
	return s.projector.WaitFor(ctx, seq)
}

// Events returns the events that store a checkpoint, for the run layer to append in one atomic
// batch with a run transition (the thread aggregate of ref). Values too large for an event are
// put in the object store now. The event carries only the channels that differ from the parent
// as the local projection has it; when the parent is not there yet, or is not the newest
// checkpoint of its namespace (a fork), it carries every channel — always correct, only larger.
func (s *Saver) Events(ctx context.Context, ref graph.Ref, cp graph.Checkpoint, md map[string]any, parent *graph.Ref) ([]eventlog.Event, error) {
	tenant := engine.TenantFrom(ctx)
	var changed []string
	full := true
	if parent != nil {
		ch, newest, found, err := s.view.Diff(tenant, graph.Ref{ThreadID: ref.ThreadID, NS: parent.NS, ID: parent.ID}, cp)
		if err != nil {
			return nil, fmt.Errorf("checkpoints: parent of %s: %w", cp.ID, err)
		}
		if found && newest {
			changed, full = ch, false
		}
	}
	d, err := CheckpointData(ref, cp, md, parent, changed, full)
	if err != nil {
		return nil, err
	}
	return s.checkpointEvents(ctx, ref.ThreadID, d)
}

// WriteEvents returns the events that store pending writes on the checkpoint ref, as Events does
// for a checkpoint.
func (s *Saver) WriteEvents(ctx context.Context, ref graph.Ref, writes []graph.PendingWrite) ([]eventlog.Event, error) {
	d := WritesData(ref, writes)
	if err := s.blobs.put(ctx, OffloadWrites(&d)); err != nil {
		return nil, err
	}
	e, err := eventlog.New(Aggregate(engine.TenantFrom(ctx), ref.ThreadID), engine.ThreadWrites, d)
	if err != nil {
		return nil, err
	}
	return []eventlog.Event{e}, nil
}

// Batching of many events: a packed batch is one NATS message, which must stay under its 1 MiB
// limit.
const (
	chunkBytes  = 512 << 10
	chunkEvents = 500
)

// eventSize is what an event adds to a packed message: its data and about its envelope.
func eventSize(e eventlog.Event) int { return len(e.Data) + 256 }

// appendChunked appends events of one thread in order, packed in as few messages as fit, and
// returns the sequence of the last (0 when there were none). It does not wait for the projection.
func (s *Saver) appendChunked(ctx context.Context, events []eventlog.Event) (uint64, error) {
	var (
		batch []eventlog.Pending
		size  int
		last  uint64
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		seq, err := s.log.AppendBatch(ctx, batch)
		if err != nil {
			return err
		}
		last, batch, size = seq, nil, 0
		return nil
	}
	for _, e := range events {
		if len(batch) > 0 && (size+eventSize(e) > chunkBytes || len(batch) == chunkEvents) {
			if err := flush(); err != nil {
				return 0, err
			}
		}
		batch = append(batch, eventlog.Pending{Event: e, Expect: eventlog.Any})
		size += eventSize(e)
	}
	if err := flush(); err != nil {
		return 0, err
	}
	return last, nil
}

// Copy re-appends every checkpoint (all namespaces) and pending write of thread fromThread to
// thread toThread, in order, keeping the checkpoint ids (see Rethread), and waits for the
// projection. Events from before the thread's last deletion are not copied. toThread should have
// no checkpoints of its own. POST /threads/{id}/copy uses it.
func (s *Saver) Copy(ctx context.Context, fromThread, toThread string) error {
	return s.rethread(ctx, "copy", fromThread, toThread, func([]any) func(int) bool {
		return func(int) bool { return true }
	})
}

// Fork is Copy of the branch that ends at checkpoint checkpointID of the root namespace alone:
// that checkpoint and its ancestors, their pending writes, and the subgraph checkpoints written
// before it (with their writes). toThread's history is the forked thread's up to that step, and
// its newest checkpoint is that one. A checkpoint the thread does not hold is NotFound.
func (s *Saver) Fork(ctx context.Context, fromThread, toThread, checkpointID string) error {
	var missing bool
	err := s.rethread(ctx, "fork", fromThread, toThread, func(decoded []any) func(int) bool {
		parent, at := map[string]string{}, -1
		for i, v := range decoded {
			if d, ok := v.(*engine.CheckpointData); ok && d.NS == "" {
				if d.Parent != nil {
					parent[d.Checkpoint.ID] = d.Parent.ID
				} else {
					parent[d.Checkpoint.ID] = ""
				}
				if d.Checkpoint.ID == checkpointID {
					at = i
				}
			}
		}
		if at < 0 {
			missing = true
			return func(int) bool { return false }
		}
		branch := map[string]bool{}
		for id := checkpointID; id != "" && !branch[id]; id = parent[id] {
			branch[id] = true
		}
		return func(i int) bool {
			switch d := decoded[i].(type) {
			case *engine.CheckpointData:
				return d.NS == "" && branch[d.Checkpoint.ID] || d.NS != "" && i < at
			case *engine.WritesData:
				return d.NS == "" && branch[d.CheckpointID] || d.NS != "" && i < at
			}
			return false
		}
	})
	if err == nil && missing {
		return engine.E(engine.Op("checkpoints.fork"), engine.NotFound, fmt.Sprintf("Checkpoint %s not found", checkpointID))
	}
	return err
}

// Import appends to toThread the checkpoint and writes events among events (another thread's,
// from an export file, in log order), as Copy does; the other events are left out. A value
// kept in the object store (a Ref) is refused: the file does not carry it.
func (s *Saver) Import(ctx context.Context, toThread string, events []eventlog.Event) error {
	return s.rethreadEvents(ctx, "import", "file", toThread, events, func(decoded []any) func(int) bool {
		return func(int) bool { return true }
	})
}

// rethread re-appends to toThread the checkpoint and writes events of fromThread (since its
// last deletion) that keep, made from their decoded payloads, lets through.
func (s *Saver) rethread(ctx context.Context, op, fromThread, toThread string, keep func(decoded []any) func(int) bool) error {
	if fromThread == toThread {
		return fmt.Errorf("checkpoints: %s: a thread cannot be copied onto itself", op)
	}
	tenant := engine.TenantFrom(ctx)
	events, err := s.log.Load(ctx, Aggregate(tenant, fromThread))
	if err != nil {
		return fmt.Errorf("checkpoints: %s %s: %w", op, fromThread, err)
	}
	return s.rethreadEvents(ctx, op, fromThread, toThread, events, keep)
}

func (s *Saver) rethreadEvents(ctx context.Context, op, fromThread, toThread string, events []eventlog.Event, keep func(decoded []any) func(int) bool) error {
	var err error
	start := 0
	for i, e := range events {
		if e.Type == engine.ThreadDeleted {
			start = i + 1
		}
	}
	events = events[start:]
	decoded := make([]any, len(events))
	for i, e := range events {
		// The copies are written in the current version of their types: read the stored
		// events so too.
		if events[i], err = eventlog.Upcasts.Upcast(e); err != nil {
			return fmt.Errorf("checkpoints: %s %s: %w", op, fromThread, err)
		}
		if decoded[i], err = Decode(events[i]); err != nil {
			return err
		}
	}
	kept := keep(decoded)
	var copied []eventlog.Event
	for i, e := range events {
		if !kept(i) {
			continue
		}
		ne, ok, err := Rethread(e, toThread)
		if err != nil {
			return err
		}
		if ok {
			copied = append(copied, ne)
		}
	}
	last, err := s.appendChunked(ctx, copied)
	if err != nil {
		return fmt.Errorf("checkpoints: %s %s to %s: %w", op, fromThread, toThread, err)
	}
	if last == 0 {
		return nil
	}
	return s.projector.WaitFor(ctx, last)
}

// PatchMetadata merges metadata into the metadata of the checkpoint ref (the newest of its
// namespace when ref.ID is "").
func (s *Saver) PatchMetadata(ctx context.Context, ref graph.Ref, metadata map[string]any) error {
	if ref.ID == "" {
		t, err := s.Get(ctx, ref)
		if err != nil {
			return err
		}
		if t == nil {
			return engine.E(engine.Op("checkpoints.patch"), engine.NotFound, fmt.Sprintf("Thread %s has no checkpoint", ref.ThreadID))
		}
		ref.ID = t.Ref.ID
	} else if t, err := s.Get(ctx, ref); err != nil {
		return err
	} else if t == nil {
		return engine.E(engine.Op("checkpoints.patch"), engine.NotFound, fmt.Sprintf("Checkpoint %s not found", ref.ID))
	}
	e, err := eventlog.New(Aggregate(engine.TenantFrom(ctx), ref.ThreadID), engine.ThreadCheckpointPatched,
		engine.CheckpointPatchedData{NS: ref.NS, CheckpointID: ref.ID, Metadata: metadata})
	if err != nil {
		return err
	}
	return s.append(ctx, []eventlog.Event{e})
}
