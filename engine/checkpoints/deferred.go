package checkpoints

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Deferred is the saver of one run whose durability is "async" or "exit": its checkpoints and
// pending writes are kept in memory and appended later, many to a message. With "exit" they wait
// for the end of the run, where the run layer takes them (Take) and appends them in one message
// with the event that ends the run; with "async" they are also appended in the background
// flushAfter after the first of them was put, so a long run's progress reaches the log while it
// goes on. What is not yet appended is lost if the process dies: the run is then resumed from the
// last checkpoint that was, which is what those durability modes promise.
//
// A checkpoint's event carries only the channels that changed since its parent when the parent
// is the last checkpoint this saver put in the namespace (compared in memory), else it asks the
// projection as Saver.Events does. Reads (Get, List) append what is kept first, so the run always
// reads its own writes.
//
// One run uses a Deferred at a time, but its background flush runs concurrently with the run's
// steps: mu guards the buffer, flushMu orders appends.
type Deferred struct {
	s          *Saver
	flushAfter time.Duration

	flushMu sync.Mutex // held while appending, so appends keep the order of puts
	before  func(context.Context) error

	mu     sync.Mutex
	events []eventlog.Event
	size   int
	last   map[string]graph.Checkpoint // namespace -> the last checkpoint put in it
	timer  *time.Timer
	closed bool
}

var _ graph.Saver = (*Deferred)(nil)

// Defer returns a Deferred saver on s. flushAfter 0 keeps everything until Take ("exit").
func (s *Saver) Defer(flushAfter time.Duration) *Deferred {
	return &Deferred{s: s, flushAfter: flushAfter, last: map[string]graph.Checkpoint{}}
}

// Before sets what is called, under the order of appends, before the saver appends anything:
// the run appends its start there, which must precede its checkpoints in the log. An error of it
// fails the append. Call it before the run puts anything.
func (d *Deferred) Before(f func(context.Context) error) { d.before = f }

// appendKept appends events, after what Before set.
func (d *Deferred) appendKept(ctx context.Context, events []eventlog.Event) (uint64, error) {
	if d.before != nil {
		if err := d.before(ctx); err != nil {
			return 0, err
		}
	}
	return d.s.appendChunked(ctx, events)
}

// deferredFlushBytes is how much a Deferred keeps before it appends at once, whatever its
// durability: more would not fit in the message that ends the run.
const deferredFlushBytes = 256 << 10

// Get implements graph.Saver: it appends what is kept, then reads.
func (d *Deferred) Get(ctx context.Context, ref graph.Ref) (*graph.Tuple, error) {
	if err := d.Flush(ctx); err != nil {
		return nil, err
	}
	return d.s.Get(ctx, ref)
}

// List implements graph.Saver: it appends what is kept, then reads.
func (d *Deferred) List(ctx context.Context, ref graph.Ref, opts graph.ListOptions) ([]graph.Tuple, error) {
	if err := d.Flush(ctx); err != nil {
		return nil, err
	}
	return d.s.List(ctx, ref, opts)
}

// Put implements graph.Saver: it keeps the checkpoint's event.
func (d *Deferred) Put(ctx context.Context, ref graph.Ref, cp graph.Checkpoint, md map[string]any, parent *graph.Ref) error {
	d.mu.Lock()
	prev, ok := d.last[ref.NS]
	d.mu.Unlock()
	var events []eventlog.Event
	if ok && parent != nil && parent.NS == ref.NS && parent.ID == prev.ID {
		data, err := CheckpointData(ref, cp, md, parent, changedChannels(prev, cp), false)
		if err != nil {
			return err
		}
		if events, err = d.s.checkpointEvents(ctx, ref.ThreadID, data); err != nil {
			return err
		}
	} else {
		// The parent is in the projection (the checkpoint the run started from), or this is a
		// fork: the projection decides, as for a synchronous put.
		if err := d.Flush(ctx); err != nil {
			return err
		}
		var err error
		if events, err = d.s.Events(ctx, ref, cp, md, parent); err != nil {
			return err
		}
	}
	d.mu.Lock()
	d.last[ref.NS] = cp
	d.mu.Unlock()
	return d.keep(ctx, events)
}

// PutWrites implements graph.Saver: it keeps the writes' event.
func (d *Deferred) PutWrites(ctx context.Context, ref graph.Ref, writes []graph.PendingWrite) error {
	if len(writes) == 0 {
		return nil
	}
	events, err := d.s.WriteEvents(ctx, ref, writes)
	if err != nil {
		return err
	}
	return d.keep(ctx, events)
}

// keep adds events to the buffer, starting the background flush of "async", or flushing now
// when the buffer is full.
func (d *Deferred) keep(ctx context.Context, events []eventlog.Event) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return fmt.Errorf("checkpoints: put after the run's checkpoints were taken")
	}
	for _, e := range events {
		d.events = append(d.events, e)
		d.size += eventSize(e)
	}
	full := d.size > deferredFlushBytes
	if !full && d.flushAfter > 0 && d.timer == nil {
		flushCtx := context.WithoutCancel(ctx)
		// A failed background flush leaves the events kept: Take hands them to the run's end.
		d.timer = time.AfterFunc(d.flushAfter, func() { _ = d.Flush(flushCtx) })
	}
	d.mu.Unlock()
	if full {
		return d.Flush(ctx)
	}
	return nil
}

// Flush appends what is kept and waits until the local projection has it. Events leave the
// buffer only once appended, so after a failed flush they are still there for the next one.
func (d *Deferred) Flush(ctx context.Context) error {
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	d.mu.Lock()
	events := d.events
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	d.mu.Unlock()
	if len(events) == 0 {
		return nil
	}
	last, err := d.appendKept(ctx, events)
	if err != nil {
		return fmt.Errorf("checkpoints: append: %w", err)
	}
	d.mu.Lock()
	d.events = slices.Clone(d.events[len(events):])
	d.size = 0
	for _, e := range d.events {
		d.size += eventSize(e)
	}
	d.mu.Unlock()
	return d.s.projector.WaitFor(ctx, last)
}

// Take ends the buffering: it returns the events not yet appended, for the caller to append
// (before the run's end, in one message with it), and keeps nothing more. When they would not
// fit in one message beside budget bytes of the caller's, it appends them itself and returns none.
// A nil Deferred has nothing to take.
func (d *Deferred) Take(ctx context.Context, budget int) ([]eventlog.Event, error) {
	if d == nil {
		return nil, nil
	}
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	events := d.close()
	size := 0
	for _, e := range events {
		size += eventSize(e)
	}
	if size+budget <= chunkBytes && len(events) < chunkEvents {
		return events, nil
	}
	last, err := d.appendKept(ctx, events)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: append: %w", err)
	}
	return nil, d.s.projector.WaitFor(ctx, last)
}

// Discard drops what is kept: the run was left to another worker, which resumes it from what
// reached the log (or was rolled back). A nil Deferred has nothing to drop.
func (d *Deferred) Discard() {
	if d == nil {
		return
	}
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	d.close()
}

// close stops the buffering and returns what was kept. The caller holds flushMu, so no flush is
// under way.
func (d *Deferred) close() []eventlog.Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	events := d.events
	d.events, d.size = nil, 0
	return events
}

// changedChannels lists, sorted, the channels of cp whose version, value or presence differs
// from prev's: what a checkpoint event must carry when prev is its parent.
func changedChannels(prev, cp graph.Checkpoint) []string {
	names := make([]string, 0, len(cp.ChannelVersions)+len(cp.ChannelValues))
	for _, m := range []map[string]int64{prev.ChannelVersions, cp.ChannelVersions} {
		for ch := range m {
			names = append(names, ch)
		}
	}
	for _, m := range []map[string]json.RawMessage{prev.ChannelValues, cp.ChannelValues} {
		for ch := range m {
			names = append(names, ch)
		}
	}
	slices.Sort(names)
	var changed []string
	for _, ch := range slices.Compact(names) {
		a, had := prev.ChannelValues[ch]
		b, has := cp.ChannelValues[ch]
		if prev.ChannelVersions[ch] != cp.ChannelVersions[ch] || had != has || !bytes.Equal(a, b) {
			changed = append(changed, ch)
		}
	}
	return changed
}

// checkpointEvents offloads the large values of a checkpoint's data and builds its event.
func (s *Saver) checkpointEvents(ctx context.Context, threadID string, d engine.CheckpointData) ([]eventlog.Event, error) {
	if err := s.blobs.put(ctx, OffloadCheckpoint(&d)); err != nil {
		return nil, err
	}
	e, primed, ok, err := checkpointEvent(engine.TenantFrom(ctx), threadID, &d)
	if err != nil {
		return nil, err
	}
	if ok && s.view != nil {
		s.view.Prime(e.ID, primed)
	}
	return []eventlog.Event{e}, nil
}
