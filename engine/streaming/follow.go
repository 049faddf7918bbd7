package streaming

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
)

// RunRequest is a client's request to follow one run.
type RunRequest struct {
	ThreadID string
	RunID    string
	// Modes are the stream modes to send; nil sends the run's own (its kwargs.stream_mode).
	Modes []engine.StreamMode
	// Subgraphs sends the events of subgraphs too, named "<mode>|<ns>".
	Subgraphs bool
	// After, when Resume is set, is the stream sequence of the client's Last-Event-ID: only
	// later events are sent.
	After  uint64
	Resume bool
}

// Follower follows a run or a thread for one client. Serve sends its frames; Close releases
// its consumers. A Follower is for one goroutine.
type Follower struct {
	s      *Streamer
	tenant string
	run    RunRequest
	modes  []engine.StreamMode
	cons   *consumer
	notice string // a comment sent first (a Last-Event-ID older than the retention)
	thread *threadFollow
}

// FollowRun prepares to follow a run's stream: it checks Last-Event-ID against the retention and
// opens the reading. An error here means nothing was sent yet.
func (s *Streamer) FollowRun(ctx context.Context, r RunRequest) (*Follower, error) {
	if s.bus == nil {
		return nil, errNoLog
	}
	var err error
	f := &Follower{s: s, tenant: tenantOf(ctx), run: r, modes: r.Modes}
	if f.modes == nil {
		f.modes = []engine.StreamMode{engine.StreamValues}
		if s.cfg.Runs != nil {
			if rec, ok, err := s.cfg.Runs.Get(f.tenant, r.ThreadID, r.RunID); err == nil && ok && rec.Kwargs.StreamMode != nil {
				f.modes = rec.Kwargs.StreamMode
			}
		}
	}
	if r.Resume {
		if f.notice, err = s.expired(ctx, r.After); err != nil {
			return nil, err
		}
	}
	// From the start of the run, also on resume: the derived shapes need the earlier messages.
	if f.cons, err = s.consume(ctx, eventlog.OutputStream, Subject(f.tenant, r.ThreadID, r.RunID), 1); err != nil {
		return nil, err
	}
	return f, nil
}

// expired returns a notice when the event after position pos may no longer be kept: the next
// message is gone, or pos's own message is, and pos was not its last frame (a message may hold
// several events).
func (s *Streamer) expired(ctx context.Context, pos uint64) (string, error) {
	b, err := s.bus.Bounds(ctx, eventlog.OutputStream)
	if err != nil {
		return "", fmt.Errorf("streaming: output stream: %w", err)
	}
	seq := messageOf(pos)
	if seq+1 < b.First || seq < b.First && pos%frameSlots != frameSlots-1 {
		return fmt.Sprintf("Last-Event-ID %d is older than the stream's retention of %s: restarting from the oldest kept event",
			seq, b.MaxAge), nil
	}
	return "", nil
}

// Close releases what the follower holds. It is safe to call more than once.
func (f *Follower) Close() {
	if f.cons != nil {
		f.cons.close()
	}
	if f.thread != nil {
		f.thread.close()
	}
}

// Serve sends the stream to sink until it ends (nil), the client leaves (ctx's error) or the
// sink fails (its error).
func (f *Follower) Serve(ctx context.Context, sink FrameSink) error {
	if f.thread != nil {
		return f.serveThread(ctx, sink)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := newWriter(sink, f.s.Heartbeat)
	if f.notice != "" {
		if err := w.write(Frame{Comment: f.notice}); err != nil {
			return err
		}
		if err := w.flush(); err != nil {
			return err
		}
	}
	ended := make(chan engine.RunRecord, 1)
	go f.watch(ctx, ended)
	shaper := NewShaper(f.modes, f.run.Subgraphs)
	hb := time.NewTicker(w.checkEvery())
	defer hb.Stop()
	var (
		frames   []Frame
		msgs     []Msg
		lastSeq  uint64
		sawError bool
		grace    <-chan time.Time
		final    engine.RunRecord
	)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-f.cons.done:
			return f.consumerGone()
		case jm := <-f.cons.ch:
			msgs = f.s.decode(ctx, jm, msgs[:0])
			slot := 0 // frames of the message so far: the events of a packed message share its slots
			for _, m := range msgs {
				lastSeq = m.Seq
				sawError = sawError || m.Event == KindError
				if m.Event == KindEnd {
					f.s.awaitEnded(ctx, f.tenant, f.run.ThreadID, f.run.RunID)
				}
				frames = numbered(m, shaper.Shape(m, frames[:0]), slot)
				for k, fr := range frames {
					if f.run.Resume && position(m.Seq, slot+k) <= f.run.After {
						continue // the client has it
					}
					if err := w.write(fr); err != nil {
						return err
					}
				}
				slot += len(frames)
				if m.Event == KindEnd {
					return w.flush()
				}
			}
			if err := w.flushUnlessMore(len(f.cons.ch)); err != nil {
				return err
			}
		case final = <-ended:
			if grace = f.endWait(ctx, lastSeq, true); grace != nil {
				continue
			}
			return f.endHere(w, final, sawError)
		case <-grace:
			if grace = f.endWait(ctx, lastSeq, false); grace != nil {
				continue
			}
			return f.endHere(w, final, sawError)
		case <-hb.C:
			if err := w.heartbeat(); err != nil {
				return err
			}
		}
	}
}

// consumerGone is Serve's error when its consumer stopped under it.
func (f *Follower) consumerGone() error {
	if err := f.cons.Err(); err != nil {
		return fmt.Errorf("streaming: reading the run's output: %w", err)
	}
	return errors.New("streaming: reading the run's output stopped")
}

// endWait is called once the run has ended (first) and then whenever its wait is over: it
// returns nil when the stream should end now — the run published nothing that is still kept,
// or everything it published was read and EndGrace passed — and otherwise a channel that fires
// after EndGrace, to look again (an "end" may still be on its way).
func (f *Follower) endWait(ctx context.Context, lastSeq uint64, first bool) <-chan time.Time {
	last, err := f.s.bus.Last(ctx, Subject(f.tenant, f.run.ThreadID, f.run.RunID))
	switch {
	case errors.Is(err, eventlog.ErrNoMessage):
		return nil
	case err != nil && ctx.Err() != nil:
		return nil
	case first || err != nil || last.Seq > lastSeq:
		return time.After(f.s.EndGrace)
	}
	return nil
}

// endHere ends a stream whose run ended without an "end" message (cancelled before it started,
// its output expired, or its worker could not publish it): the run's error if it failed, then
// "end".
func (f *Follower) endHere(w *writer, final engine.RunRecord, sawError bool) error {
	if final.Error != nil && !sawError {
		data := mustJSON(errorData(final.Error))
		if err := w.write(Frame{Event: "error", Data: data}); err != nil {
			return err
		}
	}
	if err := w.write(Frame{Event: "end", Data: []byte("null")}); err != nil {
		return err
	}
	return w.flush()
}

// watch sends the run's record on ended once it is no longer active (or no longer exists).
func (f *Follower) watch(ctx context.Context, ended chan<- engine.RunRecord) {
	if f.s.cfg.Runs == nil || f.s.cfg.Projector == nil {
		return
	}
	for {
		changed := f.s.cfg.Projector.Changed()
		// The state at every change (from memory while the run is active), the record once.
		st, ok, err := f.s.cfg.Runs.State(f.tenant, f.run.ThreadID, f.run.RunID)
		if err == nil && (!ok || !st.Active()) {
			rec, _, err := f.s.cfg.Runs.Get(f.tenant, f.run.ThreadID, f.run.RunID)
			if err == nil {
				ended <- rec
				return
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// awaitEnded returns once the local run projection shows the run ended (or gone), or after
// ackWait, or when ctx ends. A follower calls it before it passes a run's "end" on: the end can
// be read from the output stream before the run's end is folded here, and a client that acts on
// it at once (updates the thread's state, starts a run that rejects company, reads the state)
// must find the run ended.
func (s *Streamer) awaitEnded(ctx context.Context, tenant, thread, run string) {
	runs := s.cfg.Runs
	if runs == nil {
		return
	}
	t := time.NewTimer(ackWait)
	defer t.Stop()
	for {
		changed := runs.Watch(tenant, thread, run)
		st, ok, err := runs.State(tenant, thread, run)
		if err != nil || !ok || !st.Active() {
			runs.Unwatch(tenant, thread, run, changed)
			return
		}
		select {
		case <-changed:
		case <-t.C:
			runs.Unwatch(tenant, thread, run, changed)
			s.log.Warn("streaming: a run's end is not in the local projection in time; its stream ends anyway", "run_id", run)
			return
		case <-ctx.Done():
			runs.Unwatch(tenant, thread, run, changed)
			return
		}
	}
}

// writer sends frames to a sink and keeps the heartbeat: a comment once nothing was sent for a
// heartbeat period.
type writer struct {
	sink    FrameSink
	hb      time.Duration
	now     func() time.Time // the clock
	sent    time.Time        // when what was written was last flushed
	unsent  bool             // something was written since the last flush
	pending int              // events written since the last flush
}

func newWriter(sink FrameSink, hb time.Duration) *writer {
	return &writer{sink: sink, hb: hb, now: time.Now, sent: time.Now()}
}

// heartbeatChecks is how many times per heartbeat period a stream looks whether its heartbeat
// is due.
const heartbeatChecks = 4

// checkEvery is how often heartbeat is to be called.
func (w *writer) checkEvery() time.Duration { return max(w.hb/heartbeatChecks, time.Millisecond) }

func (w *writer) write(f Frame) error {
	w.unsent = true
	return w.sink.WriteFrame(f)
}

func (w *writer) flush() error {
	w.pending = 0
	if w.unsent {
		w.unsent, w.sent = false, w.now()
	}
	return w.sink.Flush()
}

// maxUnflushed bounds the events written but not flushed while more are already waiting.
const maxUnflushed = 32

// flushUnlessMore flushes after an event unless more are waiting (queued of them): then the
// next ones go out in the same write, up to maxUnflushed, so a client catching up is not sent
// one packet per event while a live stream still gets each event at once.
func (w *writer) flushUnlessMore(queued int) error {
	w.pending++
	if queued > 0 && w.pending < maxUnflushed {
		return nil
	}
	return w.flush()
}

// heartbeat is called every checkEvery: it sends a comment when nothing was sent for a heartbeat
// period. The SDKs' idle watchdog measures the time between heartbeats and reconnects after
// three of those without a line (six seconds at least): looked at several times a period, a
// stream is never silent for much longer than one, and two heartbeats are never closer than a
// period, even when a stall held a look back until just before the next (a comment at every
// tick of a period's ticker could be silent for two periods, after two heartbeats a stall made
// nearly simultaneous).
func (w *writer) heartbeat() error {
	if w.now().Sub(w.sent) < w.hb {
		return nil
	}
	if err := w.write(Frame{Comment: "heartbeat"}); err != nil {
		return err
	}
	return w.flush()
}

// decodeRecord reads one event in the single-event form into m.
func decodeRecord(rest []byte, m *Msg) error {
	var lines [5][]byte
	for i := range lines {
		n := bytes.IndexByte(rest, '\n')
		if n < 0 {
			return errors.New("streaming: output message cut short")
		}
		lines[i], rest = rest[:n], rest[n+1:]
	}
	if string(lines[0]) != wireVersion {
		return fmt.Errorf("streaming: output message of unknown form %.16q", lines[0])
	}
	m.Event, m.Data = graph.Kind(lines[1]), rest
	if m.Event == legacyTasks {
		m.Event = legacyTaskKind(rest)
	}
	if len(lines[2]) > 0 {
		if err := json.Unmarshal(lines[2], &m.NS); err != nil {
			return fmt.Errorf("streaming: namespace: %w", err)
		}
	}
	if id := lines[3]; len(id) > 1 {
		if bytes.IndexByte(id, '\\') < 0 {
			m.ChunkID = string(id[1 : len(id)-1])
		} else {
			_ = json.Unmarshal(id, &m.ChunkID)
		}
	}
	if len(lines[4]) > 0 {
		m.Run = new(RunInfo)
		if err := json.Unmarshal(lines[4], m.Run); err != nil {
			return fmt.Errorf("streaming: run info: %w", err)
		}
	}
	return nil
}

// legacyTasks is the kind records written before the task kinds existed give both a task's
// start and its result.
const legacyTasks graph.Kind = "tasks"

// legacyTaskKind tells a legacy task event's kind by its fields: a result has a "result" field
// (null when the task wrote nothing), a start never has one.
func legacyTaskKind(data []byte) graph.Kind {
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) == nil {
		if _, ok := fields["result"]; ok {
			return graph.KindTaskResult
		}
	}
	return graph.KindTaskStart
}

// Retained reports whether output of run is still kept, and the thread it is on; thread ""
// looks on every thread (a run named by its id alone).
func (s *Streamer) Retained(ctx context.Context, thread, run string) (string, bool) {
	if s.bus == nil {
		return "", false
	}
	if thread == "" {
		thread = "*"
	}
	m, err := s.bus.Last(ctx, Subject(tenantOf(ctx), thread, run))
	if err != nil {
		return "", false
	}
	parts := strings.Split(m.Subject, ".")
	if len(parts) != 4 {
		return "", false
	}
	return parts[2], true
}
