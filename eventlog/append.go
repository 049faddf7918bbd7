package eventlog

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrConflict is returned (wrapped) when an append's Expect does not hold: another writer changed
// the aggregate first. It is recognised by JetStream error code, never by text.
var ErrConflict = errors.New("eventlog: aggregate changed concurrently")

// Header names jetgraph sets on every event message besides the JetStream ones.
const (
	HeaderType = "Jg-Type"
)

// maxBatch is the largest atomic batch JetStream accepts by default.
const maxBatch = 1000

func (l *Log) message(ctx context.Context, p Pending) (*nats.Msg, error) {
	if err := p.Event.validate(); err != nil {
		return nil, err
	}
	body, err := encodeFrame([]Event{p.Event})
	if err != nil {
		return nil, err
	}
	if body, err = l.storeLarge(ctx, p.Event.Aggregate.Kind, body); err != nil {
		return nil, fmt.Errorf("eventlog: append %s: %w", p.Event.Subject(), err)
	}
	m := nats.NewMsg(p.Event.Subject())
	m.Data = body
	m.Header.Set(jetstream.MsgIDHeader, p.Event.ID)
	m.Header.Set(HeaderType, p.Event.Aggregate.Kind+"."+p.Event.Type)
	setExpect(m, p)
	return m, nil
}

func setExpect(m *nats.Msg, p Pending) {
	if p.Expect.set {
		m.Header.Set(jetstream.ExpectedLastSubjSeqSubjHeader, p.Event.Aggregate.Filter())
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(p.Expect.seq, 10))
	}
}

// Append stores one event if expect holds and returns its stream sequence. A conflict returns an
// error wrapping ErrConflict; nothing is stored then.
func (l *Log) Append(ctx context.Context, e Event, expect Expect) (uint64, error) {
	start := time.Now()
	m, err := l.message(ctx, Pending{Event: e, Expect: expect})
	if err != nil {
		return 0, err
	}
	ack, err := l.publish(ctx, m)
	if err != nil {
		return 0, appendError("append "+e.Subject(), err)
	}
	l.observe(start)
	return ack.Sequence, nil
}

// appended counts the messages this process appended to the log (BenchmarkEchoRunCounts).
var appended atomic.Uint64

// Appended returns the number of messages this process has appended to the log since it
// started (an atomic batch counts each of its messages), for benchmarks that count per run.
func Appended() uint64 { return appended.Load() }

// attemptTimeout bounds one publish attempt. On a cluster, a publish sent while the stream's
// leader is lost can go unanswered; it is sent again, and its Nats-Msg-Id makes sure it is
// stored once.
const attemptTimeout = time.Second

// publishFor bounds how long publish sends a message again: well inside the streams' duplicate
// window, so that a message sent again is never stored twice, and long enough for a cluster to
// elect a stream's new leader.
const publishFor = 20 * time.Second

// publish sends m and waits for its acknowledgement, retrying unanswered attempts until ctx ends
// (or 10 seconds when ctx has no deadline), for publishFor at most. It makes no context of its
// own (see request).
func (l *Log) publish(ctx context.Context, m *nats.Msg) (*jetstream.PubAck, error) {
	appended.Add(1)
	now := time.Now()
	until := now.Add(defaultRequestTimeout)
	if d, ok := ctx.Deadline(); ok {
		until = now.Add(publishFor)
		if d.Before(until) {
			until = d
		}
	}
	wait := 20 * time.Millisecond
	for {
		ack, err := l.request(ctx, min(attemptTimeout, time.Until(until)), m, false)
		if err == nil {
			err = l.syncedBy(ctx, until) // on disk before it is acknowledged (--sync always)
		}
		if err == nil {
			l.noteAcked(ack)
		}
		if err == nil || ctx.Err() != nil || !Unanswered(err) || !time.Now().Before(until) {
			return ack, err
		}
		l.log.Debug("eventlog: publish unanswered, sending again", "subject", m.Subject, "err", err)
		if !errors.Is(err, nats.ErrTimeout) {
			// Refused at once (no responders: the stream has no leader yet): wait a little.
			if engine.Sleep(ctx, min(wait, time.Until(until))) != nil {
				return nil, err
			}
			wait = min(2*wait, attemptTimeout/2)
		}
	}
}

// Unanswered reports whether a publish may have been lost rather than refused: it was not
// answered in time, or no server took it (a cluster electing a leader, or the connection down:
// nothing is buffered while it is, see connect). Sending the same message (with its id) again is
// safe: it is stored once.
func Unanswered(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrAsyncPublishTimeout) || errors.Is(err, nats.ErrReconnectBufExceeded)
}

// AppendBatch stores events as one atomic batch: all of them, in order, or none. It returns the
// sequence of the last event. All events must belong to one stream.
//
// Events of a single aggregate (a run transition with its checkpoints) are packed into one
// message: atomic by construction and as cheap as one append. Only the first event's Expect
// counts then. So are the unconditional events of several aggregates of one tenant of a kind
// named in PackAcross (traces). Events of several aggregates otherwise use JetStream's atomic
// batch publish, where every
// Expect is checked against the log as it was before the batch, so give at most one condition
// per aggregate. (On a single-node file store each such batch costs a few milliseconds, since
// the server stages it in a synced file store of its own; on R3 streams it is staged in memory.)
func (l *Log) AppendBatch(ctx context.Context, batch []Pending) (uint64, error) {
	switch {
	case len(batch) == 0:
		return 0, errors.New("eventlog: append batch: empty batch")
	case len(batch) == 1:
		return l.Append(ctx, batch[0].Event, batch[0].Expect)
	case len(batch) > maxBatch:
		return 0, fmt.Errorf("eventlog: append batch: %d events, at most %d", len(batch), maxBatch)
	}
	single := true
	for _, p := range batch[1:] {
		if p.Event.Aggregate != batch[0].Event.Aggregate {
			single = false
			break
		}
	}
	if single || packsAcross(batch) {
		return l.appendPacked(ctx, batch)
	}
	return l.appendAtomic(ctx, batch)
}

// HeaderPacked, on a message that packs several events (of one aggregate, or of several of a
// kind named in PackAcross), holds their count. The
// message's subject (and Jg-Type) is that of its first event, so subscribers filtering on a
// type (run_created, say) see the commands that begin with it.
const HeaderPacked = "Jg-Packed"

func (l *Log) appendPacked(ctx context.Context, batch []Pending) (uint64, error) {
	start := time.Now()
	events := make([]Event, len(batch))
	for i, p := range batch {
		if err := p.Event.validate(); err != nil {
			return 0, err
		}
		events[i] = p.Event
	}
	body, err := encodeFrame(events)
	if err != nil {
		return 0, err
	}
	first := batch[0]
	if body, err = l.storeLarge(ctx, first.Event.Aggregate.Kind, body); err != nil {
		return 0, fmt.Errorf("eventlog: append batch %s: %w", first.Event.Subject(), err)
	}
	m := nats.NewMsg(first.Event.Subject())
	m.Data = body
	m.Header.Set(jetstream.MsgIDHeader, first.Event.ID)
	m.Header.Set(HeaderType, first.Event.Aggregate.Kind+"."+first.Event.Type)
	m.Header.Set(HeaderPacked, strconv.Itoa(len(events)))
	setExpect(m, first)
	ack, err := l.publish(ctx, m)
	if err != nil {
		return 0, appendError("append batch "+m.Subject, err)
	}
	l.observe(start)
	return ack.Sequence, nil
}

func (l *Log) appendAtomic(ctx context.Context, batch []Pending) (uint64, error) {
	start := time.Now()
	stream, err := StreamOf(batch[0].Event.Aggregate.Kind)
	if err != nil {
		return 0, err
	}
	msgs := make([]*nats.Msg, len(batch))
	for i, p := range batch {
		if s, err := StreamOf(p.Event.Aggregate.Kind); err != nil || s != stream {
			return 0, fmt.Errorf("eventlog: append batch: events span streams %s and %s", stream, s)
		}
		if msgs[i], err = l.message(ctx, p); err != nil {
			return 0, err
		}
	}
	id := NewID(start)
	for i, m := range msgs {
		m.Header.Set("Nats-Batch-Id", id)
		m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(i+1))
	}
	last := msgs[len(msgs)-1]
	last.Header.Set("Nats-Batch-Commit", "1")

	// The first message is a request so that a batch the stream refuses outright fails fast with
	// its real reason; the middle ones are plain publishes on the same connection, which keeps
	// their order; the commit's acknowledgement tells whether the whole batch was stored.
	appended.Add(uint64(len(msgs)))
	if _, err := l.request(ctx, defaultRequestTimeout, msgs[0], true); err != nil {
		return 0, appendError("append batch", err)
	}
	for _, m := range msgs[1 : len(msgs)-1] {
		if err := l.nc.PublishMsg(m); err != nil {
			return 0, appendError("append batch", err)
		}
	}
	ack, err := l.request(ctx, defaultRequestTimeout, last, false)
	if err != nil {
		return 0, appendError("append batch", err)
	}
	if ack.Sequence == 0 {
		return 0, errors.New("eventlog: append batch: commit acknowledged without a sequence")
	}
	l.noteAcked(ack)
	if err := l.synced(ctx); err != nil { // on disk before it is acknowledged (--sync always)
		return 0, appendError("append batch", err)
	}
	l.observe(start)
	return ack.Sequence, nil
}

// request sends m and decodes the stream's answer, waiting for it for limit at most, and no
// longer than ctx lets. An empty answer is the acknowledgement of a batch message before the
// commit (staged); anywhere else it is not an acknowledgement. An answer that does not come in
// time is nats.ErrTimeout.
//
// It does what jetstream's PublishMsg does for a message without options, but decodes the
// acknowledgement with a typed decoder: encoding/json's, which PublishMsg uses, cost about 2% of
// the server's CPU under echo runs (issue 28), at seven acknowledgements a run. It waits with the
// connection's pooled timers rather than a context of its own: two contexts with their timers
// an append were another 1.5% of the allocations. ctx's cancellation is seen before sending
// (an attempt is bounded by limit, a second at most in publish).
func (l *Log) request(ctx context.Context, limit time.Duration, m *nats.Msg, staged bool) (*jetstream.PubAck, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d, ok := ctx.Deadline(); ok {
		limit = min(limit, time.Until(d))
	}
	if limit <= 0 {
		return nil, context.DeadlineExceeded
	}
	resp, err := l.nc.RequestMsg(m, limit)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			return nil, jetstream.ErrNoStreamResponse
		}
		return nil, err
	}
	if len(resp.Data) == 0 && staged {
		return &jetstream.PubAck{}, nil
	}
	return decodeAck(resp.Data)
}

// defaultRequestTimeout is how long request waits for an answer when its caller names no bound.
const defaultRequestTimeout = 10 * time.Second

// noteAcked raises what Known returns for ack's stream to ack's sequence.
func (l *Log) noteAcked(ack *jetstream.PubAck) {
	k := l.known[ack.Stream]
	if k == nil {
		return
	}
	for {
		cur := k.Load()
		if ack.Sequence <= cur || k.CompareAndSwap(cur, ack.Sequence) {
			return
		}
	}
}

// Known returns the highest sequence this process knows stream to hold: its last when the log
// was opened, or the last of this process's appends acknowledged since. On an Exclusive log
// nobody else appends, so it is the stream's last sequence, and a projection that has folded up
// to it is as new as the log, without asking the server.
func (l *Log) Known(stream string) uint64 {
	if k := l.known[stream]; k != nil {
		return k.Load()
	}
	return 0
}

// Exclusive reports whether this process is the only one that appends to the log's streams of
// events and holds its leases (see exclusive).
func (l *Log) Exclusive() bool { return l.exclusive() }

// appendError wraps err with the operation and marks optimistic-concurrency failures.
func appendError(op string, err error) error {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case jetstream.JSErrCodeStreamWrongLastSequence, jetstream.JSErrCodeStreamWrongLastSequenceConstant:
			return fmt.Errorf("eventlog: %s: %w", op, ErrConflict)
		}
	}
	return fmt.Errorf("eventlog: %s: %w", op, err)
}

func (l *Log) observe(start time.Time) {
	if f := l.appendObserver.Load(); f != nil {
		(*f)(time.Since(start))
	}
}

func splitHostPort(hp string) (string, int, error) {
	host, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("port %q: %w", p, err)
	}
	return host, port, nil
}
