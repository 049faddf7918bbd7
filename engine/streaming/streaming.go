// Package streaming is jetgraph's output bus: what runs stream (tokens, values, updates, task
// and checkpoint events) is published while they execute to a short-lived JetStream stream
// (eventlog.OutputStream), one subject per run, and read back from there by whichever process
// serves a client: the request that created the run, a client joining it later, or one resuming
// it with Last-Event-ID after a dropped connection.
//
// The parts:
//   - Streamer.Begin/End (publish.go) are the run scheduler's runs.Streamer: the graph events
//     a run's stream modes are shaped from, with their subgraph namespace, are published on
//     out.<tenant>.<thread_id>.<run_id>, framed by a "metadata" event at the start of an
//     attempt and "error"/"end" at its end. Events emitted while the run's previous message
//     awaits its acknowledgement are packed into one message (pack.go).
//   - Shaper (shape.go, events.go) turns those messages into the server-sent events a client
//     asked for: it filters by stream mode and subgraph, names subgraph events
//     "<mode>|<ns>", and derives the "messages", "events" and "debug" shapes.
//   - Follower (follow.go) reads a run's or a thread's subject with an ordered consumer and
//     hands the shaped frames to a FrameSink, with heartbeats while idle; Close releases the
//     consumer and every goroutine.
//   - Frame (frame.go) is one SSE event, written with CR/LF stripped from its event and id.
//   - Events too large for a message (large.go) are stored in the output stream's object store
//     and sent by reference; what cannot be streamed reaches the client as an "error" event.
//
// Invariants:
//   - Event ids are "<ms>-<seq>": the publish time in milliseconds and the message's stream
//     sequence, so an id maps straight back to where a resumed stream starts. A resumed stream
//     sends only events strictly after the id.
//   - The events of one run are published in the order the graph emitted them (one message of
//     the run in flight at a time), and read back in that order. The frames of a packed
//     message share its sequence: frame k of the message counts the frames of its earlier
//     events.
//   - A message over the connection's payload limit is skipped with a log line; the stream
//     goes on.
package streaming

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/runner"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// Defaults of the Streamer's tunables.
const (
	DefaultHeartbeat = 5 * time.Second
	DefaultEndGrace  = 3 * time.Second
)

// Bus is what a Streamer needs of the log (eventlog.OutputBus gives it): publishing on the
// output stream and reading it back, storing bodies too large for a message, and reading a
// thread's state updates on the runtime stream.
type Bus interface {
	// Publish sends body on subject without waiting; a message sent again under the same id is
	// stored once.
	Publish(subject, id string, body []byte) (eventlog.Published, error)
	MaxPayload() int
	Oversized(body []byte) bool
	PutBlob(ctx context.Context, body []byte) (eventlog.BlobRef, error)
	GetBlob(ctx context.Context, ref eventlog.BlobRef) ([]byte, error)
	// Bounds are the first and last sequences of a stream and its retention.
	Bounds(ctx context.Context, stream string) (eventlog.Bounds, error)
	// Last and First are the newest and the oldest output message on a subject, failing with
	// eventlog.ErrNoMessage when there is none.
	Last(ctx context.Context, subject string) (eventlog.Message, error)
	First(ctx context.Context, subject string) (eventlog.Message, error)
	// Read delivers a stream's messages on filter from a sequence on until stop; failed is
	// called when it stops by itself.
	Read(ctx context.Context, stream, filter string, from uint64, deliver func(eventlog.Message), failed func(error)) (stop func(), err error)
	DecodeBody(ctx context.Context, body []byte) ([]eventlog.Event, error)
}

// Config says what a Streamer publishes to and reads from.
type Config struct {
	// Bus carries the runs' output (the log's output stream); nil publishes nothing.
	Bus Bus
	// Runner answers thread state: the final values and interrupts of an interrupted run, and
	// the full shape of checkpoints for the checkpoints and debug modes. Nil leaves both out.
	Runner *runner.Runner
	// Runs is the run projection and Projector the projector keeping it (and the checkpoints)
	// current: a follower learns from them that its run ended, a thread stream which runs are
	// active, End whether a run was cancelled.
	Runs      RunView
	Projector *projections.Projector
	Logger    *slog.Logger
}

// RunView is what the streamer reads of the run projection (*projections.Runs is one).
type RunView interface {
	Get(tenant, thread, run string) (engine.RunRecord, bool, error)
	State(tenant, thread, run string) (projections.RunState, bool, error)
	Active(tenant, thread string) ([]engine.RunRecord, error)
	// Watch returns a channel closed at the run's next change; Unwatch forgets it.
	Watch(tenant, thread, run string) <-chan struct{}
	Unwatch(tenant, thread, run string, ch <-chan struct{})
}

// Streamer publishes the output of the runs executing in this process and follows the output of
// any run for the clients of this process.
type Streamer struct {
	// Heartbeat is how long a stream stays silent before a comment line is sent to keep the
	// connection (and the proxies on its way) alive. Set it before serving.
	Heartbeat time.Duration
	// EndGrace is how long a follower waits, after its run ended, for the run's "end" message
	// before it ends the stream itself (a run cancelled before it started publishes none).
	EndGrace time.Duration

	cfg Config
	bus Bus // nil: no log, nothing is published
	log *slog.Logger

	mu      sync.Mutex
	runs    map[string]*runPub // run id -> publisher of an executing run
	senders sync.WaitGroup     // the runs' senders that are sending
}

// Wait waits, at most timeout, until the events published so far are sent and acknowledged:
// call it at shutdown, after the runs stopped and before the log is closed.
func (s *Streamer) Wait(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() { s.senders.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		s.log.Warn("streaming: shutting down with run events still unsent")
		return false
	}
}

// New returns a Streamer over cfg.Bus. Each executing run has at most one message awaiting its
// acknowledgement at a time; its further events wait, packed (pack.go).
func New(cfg Config) *Streamer {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Streamer{Heartbeat: DefaultHeartbeat, EndGrace: DefaultEndGrace, cfg: cfg, bus: cfg.Bus, log: cfg.Logger,
		runs: map[string]*runPub{}}
}

// errNoLog is what a follower gets from a Streamer without a bus.
var errNoLog = errors.New("streaming: no event log")

// Subject is where the output of a run is published.
func Subject(tenant, thread, run string) string { return "out." + tenant + "." + thread + "." + run }

// threadFilter matches the output of every run of a thread.
func threadFilter(tenant, thread string) string { return "out." + tenant + "." + thread + ".*" }

// runOfSubject returns the run id of an output subject.
func runOfSubject(subject string) string {
	if i := strings.LastIndexByte(subject, '.'); i >= 0 {
		return subject[i+1:]
	}
	return subject
}

// frameSlots is how many SSE frames one bus message may become. A frame's id counts frames, not
// messages (frame k of the message at sequence seq is seq*frameSlots+k), so a client that resumes
// between two frames of one message misses neither.
const frameSlots = 1024

// EventID is the SSE id of the first frame of the message at stream sequence seq published at t.
func EventID(t time.Time, seq uint64) string { return FrameID(t, seq, 0) }

// FrameID is the SSE id of frame k of the message at stream sequence seq published at t:
// "<ms>-<position>".
func FrameID(t time.Time, seq uint64, k int) string {
	return strconv.FormatInt(t.UnixMilli(), 10) + "-" + strconv.FormatUint(position(seq, k), 10)
}

// position is where frame k of the message at seq stands in a stream.
func position(seq uint64, k int) uint64 { return seq*frameSlots + uint64(k) }

// messageOf is the stream sequence of the message a position belongs to.
func messageOf(pos uint64) uint64 { return pos / frameSlots }

// MessageOf is the stream sequence of the message an event id ("<ms>-<position>") belongs to:
// the plain-integer form of Last-Event-ID older clients send.
func MessageOf(id string) (uint64, error) {
	pos, _, err := ParseEventID(id)
	return messageOf(pos), err
}

// numbered gives each frame of the event m its own id: frame k is frame slot+k of m's message
// (slot: the frames of the message's earlier events).
func numbered(m Msg, frames []Frame, slot int) []Frame {
	for k := range frames {
		if frames[k].ID != "" {
			frames[k].ID = FrameID(m.Time, m.Seq, slot+k)
		}
	}
	return frames
}

// FromStart is the Last-Event-ID that asks for a stream from its first event: the official JS
// SDK sends it when a client joins a run it has seen nothing of (useStream's joinStream).
const FromStart = "-1"

// ErrBadEventID is returned by ParseEventID for an id of neither accepted form.
var ErrBadEventID = errors.New("Last-Event-ID must be <ms>-<seq> (as the stream sends them), a plain integer, or -1 (from the start)")

// ParseEventID reads a Last-Event-ID: "<ms>-<position>" as the stream sends them, or the older
// plain integer, read as a message sequence (everything of that message was received). It
// returns the position after which a resumed stream starts; "" and FromStart are 0 with ok false
// (start from the beginning).
func ParseEventID(id string) (pos uint64, ok bool, err error) {
	id = strings.TrimSpace(id)
	if id == "" || id == FromStart {
		return 0, false, nil
	}
	ms, rest, dashed := strings.Cut(id, "-")
	if dashed {
		if _, err := strconv.ParseUint(ms, 10, 63); err != nil {
			return 0, false, ErrBadEventID
		}
	} else {
		rest = ms
	}
	n, err := strconv.ParseUint(rest, 10, 64)
	if err != nil {
		return 0, false, ErrBadEventID
	}
	if !dashed {
		return position(n, frameSlots-1), true, nil
	}
	return n, true, nil
}

// tenantOf is the tenant of ctx, as subjects name it.
func tenantOf(ctx context.Context) string { return engine.TenantFrom(ctx) }
