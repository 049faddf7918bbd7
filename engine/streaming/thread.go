package streaming

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
)

// ThreadRequest is a client's request to follow a thread: every run on it, as they come.
type ThreadRequest struct {
	ThreadID string
	// Modes: "run_modes" (each run's events in its own modes, and a run_done metadata event at
	// its end), "lifecycle" (only the metadata events of each run's start and end),
	// "state_update" (a state_update event, the new state, when the state is updated outside
	// a run). Nil is run_modes.
	Modes []engine.StreamMode
	// After, when Resume is set, is the output stream sequence of the client's Last-Event-ID.
	After  uint64
	Resume bool
}

// threadFollow is what a thread follower reads besides the runs' output.
type threadFollow struct {
	req     ThreadRequest
	updates *consumer // the thread's checkpoints on the runtime stream (state_update)
}

func (t *threadFollow) close() {
	if t.updates != nil {
		t.updates.close()
	}
}

// FollowThread prepares to follow a thread: without Last-Event-ID it starts at the first message
// of the thread's active runs (or at the next message to come), so a run in progress is seen
// whole.
func (s *Streamer) FollowThread(ctx context.Context, r ThreadRequest) (*Follower, error) {
	if r.Modes == nil {
		r.Modes = []engine.StreamMode{engine.StreamRunModes}
	}
	if s.bus == nil {
		return nil, errNoLog
	}
	f := &Follower{s: s, tenant: tenantOf(ctx), thread: &threadFollow{req: r}}
	var from uint64
	var err error
	if r.Resume {
		if f.notice, err = s.expired(ctx, r.After); err != nil {
			return nil, err
		}
		from = max(messageOf(r.After), 1) // that message again: the client may lack its later frames
	} else if from, err = s.threadStart(ctx, f.tenant, r.ThreadID); err != nil {
		return nil, err
	}
	if slices.Contains(r.Modes, engine.StreamRunModes) || slices.Contains(r.Modes, engine.StreamLifecycle) {
		if f.cons, err = s.consume(ctx, eventlog.OutputStream, threadFilter(f.tenant, r.ThreadID), from); err != nil {
			return nil, err
		}
	}
	if slices.Contains(r.Modes, engine.StreamStateUpdate) {
		var rt eventlog.Bounds
		if rt, err = s.bus.Bounds(ctx, eventlog.RuntimeStream); err == nil {
			// The thread's every message: its checkpoints share a subject with its other events
			// (eventlog.ShareSubjects); stateUpdates picks them.
			agg := eventlog.Aggregate{Kind: engine.KindThread, Tenant: f.tenant, ID: r.ThreadID}
			f.thread.updates, err = s.consume(ctx, eventlog.RuntimeStream, agg.Filter(), rt.Last+1)
		}
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// threadStart is where a thread stream without Last-Event-ID starts: at the first kept message
// of its active runs, or after the last message of the output stream.
func (s *Streamer) threadStart(ctx context.Context, tenant, thread string) (uint64, error) {
	b, err := s.bus.Bounds(ctx, eventlog.OutputStream)
	if err != nil {
		return 0, err
	}
	if s.cfg.Runs == nil {
		return b.Last + 1, nil
	}
	active, err := s.cfg.Runs.Active(tenant, thread)
	if err != nil {
		return 0, err
	}
	return s.activeStart(ctx, tenant, thread, b, active)
}

// activeStart is the first kept message of the active runs, or b.Last+1 when none has
// published yet. b must be read before active: what a run published after b is then read from
// b.Last+1, and what it published before is found by its first message.
func (s *Streamer) activeStart(ctx context.Context, tenant, thread string, b eventlog.Bounds, active []engine.RunRecord) (uint64, error) {
	from := b.Last + 1
	for _, r := range active {
		m, err := s.bus.First(ctx, Subject(tenant, thread, r.RunID))
		switch {
		case errors.Is(err, eventlog.ErrNoMessage):
		case err != nil:
			return 0, err
		case m.Seq < from:
			from = m.Seq
		}
	}
	return from, nil
}

// serveThread is Serve for a thread: it never ends by itself.
func (f *Follower) serveThread(ctx context.Context, sink FrameSink) error {
	w := newWriter(sink, f.s.Heartbeat)
	if f.notice != "" {
		if err := w.write(Frame{Comment: f.notice}); err != nil {
			return err
		}
		if err := w.flush(); err != nil {
			return err
		}
	}
	shapers := map[string]*Shaper{}
	var out, updates <-chan eventlog.Message
	var outDone, updatesDone <-chan struct{}
	if f.cons != nil {
		out, outDone = f.cons.ch, f.cons.done
	}
	if f.thread.updates != nil {
		updates, updatesDone = f.thread.updates.ch, f.thread.updates.done
	}
	hb := time.NewTicker(w.checkEvery())
	defer hb.Stop()
	var (
		frames []Frame
		msgs   []Msg
	)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-outDone:
			return f.consumerGone()
		case <-updatesDone:
			return errors.New("streaming: reading the thread's state updates stopped")
		case jm := <-out:
			msgs = f.s.decode(ctx, jm, msgs[:0])
			slot := 0 // frames of the message so far: the events of a packed message share its slots
			for _, m := range msgs {
				if err := f.threadEvent(ctx, w, shapers, m, slot, &frames); err != nil {
					return err
				}
				slot += len(frames)
			}
			if err := w.flushUnlessMore(len(out)); err != nil {
				return err
			}
		case jm := <-updates:
			for _, fr := range f.stateUpdates(ctx, jm) {
				if err := w.write(fr); err != nil {
					return err
				}
			}
			if err := w.flush(); err != nil {
				return err
			}
		case <-hb.C:
			if err := w.heartbeat(); err != nil {
				return err
			}
		}
	}
}

// threadEvent writes the frames of one event of a run on the thread; slot is the number of
// frames of its message's earlier events. frames is scratch space, left holding the event's
// frames.
func (f *Follower) threadEvent(ctx context.Context, w *writer, shapers map[string]*Shaper, m Msg, slot int, frames *[]Frame) error {
	req := f.thread.req
	runModes, lifecycle := slices.Contains(req.Modes, engine.StreamRunModes), slices.Contains(req.Modes, engine.StreamLifecycle)
	sh := shapers[m.RunID]
	if sh == nil {
		sh = NewShaper(f.runModes(m), false)
		shapers[m.RunID] = sh
	}
	*frames = numbered(m, sh.Shape(m, (*frames)[:0]), slot)
	if m.Event == KindEnd {
		delete(shapers, m.RunID)
		f.s.awaitEnded(ctx, f.tenant, f.thread.req.ThreadID, m.RunID)
	}
	for k, fr := range *frames {
		if req.Resume && position(m.Seq, slot+k) <= req.After {
			continue // the client has it
		}
		keep := runModes && fr.Event != "end" || lifecycle && m.Event == KindMetadata && fr.Event == "metadata"
		if keep {
			if err := w.write(fr); err != nil {
				return err
			}
		}
	}
	if m.Event == KindEnd && (runModes || lifecycle) {
		// run_done stands in the slot of the run's end frame, which a thread stream does not
		// show: its id is the end's, as a run's own stream sends it.
		end := len(*frames)
		for k, fr := range *frames {
			if fr.Event == "end" {
				end = k
			}
		}
		done := mustJSON(map[string]any{"run_id": m.RunID, "status": "run_done"})
		if !req.Resume || position(m.Seq, slot+end) > req.After {
			if err := w.write(Frame{Event: "metadata", Data: done, ID: FrameID(m.Time, m.Seq, slot+end)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// runModes are the modes a run of the thread streams in: those of its request.
func (f *Follower) runModes(m Msg) []engine.StreamMode {
	if m.Run != nil && m.Run.StreamMode != nil {
		return m.Run.StreamMode
	}
	if f.s.cfg.Runs != nil {
		if rec, ok, err := f.s.cfg.Runs.Get(f.tenant, f.thread.req.ThreadID, m.RunID); err == nil && ok {
			if rec.Kwargs.StreamMode != nil {
				return rec.Kwargs.StreamMode
			}
		}
	}
	return []engine.StreamMode{engine.StreamValues}
}

// stateUpdates turns the checkpoints of a runtime stream message into state_update frames: one
// per root checkpoint written by a state update (source update or fork), with the new state.
func (f *Follower) stateUpdates(ctx context.Context, jm eventlog.Message) []Frame {
	events, err := f.s.bus.DecodeBody(ctx, jm.Data)
	if err != nil {
		return nil
	}
	var out []Frame
	for _, e := range events {
		var cp engine.CheckpointData
		if e.Type != engine.ThreadCheckpoint || json.Unmarshal(e.Data, &cp) != nil || cp.NS != "" {
			continue
		}
		var meta struct {
			Source string `json:"source"`
		}
		if json.Unmarshal(cp.Metadata, &meta) != nil || (meta.Source != "update" && meta.Source != "fork") {
			continue
		}
		var state any = map[string]any{"checkpoint_id": cp.Checkpoint.ID, "metadata": cp.Metadata}
		if f.s.cfg.Runner != nil && f.s.cfg.Projector != nil {
			ref := graph.Ref{ThreadID: f.thread.req.ThreadID, ID: cp.Checkpoint.ID}
			if f.s.cfg.Projector.WaitFor(ctx, jm.Seq) == nil {
				if snap, err := f.s.cfg.Runner.State(engine.WithTenant(ctx, f.tenant), ref, false); err == nil && snap != nil {
					state = CheckpointJSON(ref.ThreadID, snap)
				}
			}
		}
		out = append(out, Frame{Event: "state_update", Data: mustJSON(state)})
	}
	return out
}
