package eventlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrNoMessage is returned (wrapped) when a stream holds no message on the subject asked for.
var ErrNoMessage = errors.New("eventlog: no message")

// Bounds of the output bus's publishing: at most outputMaxPending publishes await their
// acknowledgement, and a publish waits at most outputStallWait for room among them.
const (
	outputMaxPending = 4096
	outputStallWait  = 5 * time.Second
)

// Reading a stream (OutputBus.Read): the server sends up to readBatch messages ahead of the
// reader, and deletes a reader's consumer readInactive after its process went away without
// deleting it.
const (
	readBatch    = 256
	readInactive = 30 * time.Second
)

// OutputBus is the output stream (OutputStream) as runs publish their output to it and clients
// read it back, one subject per run: publishes are asynchronous, many in flight at once, and
// readers follow subjects with ephemeral ordered consumers. Bodies too large for a message go to
// the stream's object store (PutBlob). Read, Bounds and DecodeBody also serve the runtime stream,
// which a thread's followers read for its state updates.
type OutputBus struct {
	l  *Log
	js jetstream.JetStream // the log's connection, with the bus's own bound on pending publishes
}

// OutputBus returns the log's output bus. Each call has its own pending publishes: make one per
// publisher.
func (l *Log) OutputBus() *OutputBus {
	js, err := jetstream.New(l.nc,
		jetstream.WithPublishAsyncMaxPending(outputMaxPending),
		jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, m *nats.Msg, err error) {
			l.log.Warn("eventlog: output publish failed; the message is lost", "subject", m.Subject, "bytes", len(m.Data), "err", err)
		}))
	if err != nil {
		// jetstream.New fails only on bad options.
		panic(fmt.Sprintf("eventlog: output bus: %v", err))
	}
	return &OutputBus{l: l, js: js}
}

// Published is a message on its way to the output stream.
type Published struct {
	f jetstream.PubAckFuture
}

// Await waits until the message is stored or refused (settled, with the stream's error), timeout
// passes (settled, context.DeadlineExceeded: the answer may be lost, see Unanswered) or wake
// fires (not settled).
func (p Published) Await(wake <-chan struct{}, timeout time.Duration) (settled bool, err error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.f.Ok():
		return true, nil
	case err := <-p.f.Err():
		return true, err
	case <-t.C:
		return true, context.DeadlineExceeded
	case <-wake:
		return false, nil
	}
}

// Publish sends body on subject without waiting for its acknowledgement. id is the message's
// id: a message sent again under the same id within the stream's duplicate window is stored
// once.
func (b *OutputBus) Publish(subject, id string, body []byte) (Published, error) {
	m := nats.NewMsg(subject)
	m.Data = body
	m.Header.Set(jetstream.MsgIDHeader, id)
	f, err := b.js.PublishMsgAsync(m, jetstream.WithStallWait(outputStallWait))
	if err != nil {
		return Published{}, fmt.Errorf("eventlog: publish on %s: %w", subject, err)
	}
	return Published{f: f}, nil
}

// MaxPayload is the largest message the server takes, in bytes.
func (b *OutputBus) MaxPayload() int { return b.l.MaxPayload() }

// Oversized reports whether body is too large to be sent in a message (see InlineLimit).
func (b *OutputBus) Oversized(body []byte) bool { return b.l.Oversized(body) }

// PutBlob stores body in the output stream's object store, which keeps it a margin longer than
// the stream keeps its messages, and returns its reference.
func (b *OutputBus) PutBlob(ctx context.Context, body []byte) (BlobRef, error) {
	return b.l.PutBlob(ctx, OutputStream, body)
}

// GetBlob returns the body r names.
func (b *OutputBus) GetBlob(ctx context.Context, r BlobRef) ([]byte, error) {
	return b.l.GetBlob(ctx, r)
}

// DecodeBody is Log.DecodeBody: the events of a runtime stream message.
func (b *OutputBus) DecodeBody(ctx context.Context, body []byte) ([]Event, error) {
	return b.l.DecodeBody(ctx, body)
}

// Bounds is what a stream holds: the sequences of its first and last messages, and how long it
// keeps them (0: no limit).
type Bounds struct {
	First, Last uint64
	MaxAge      time.Duration
}

// Bounds returns the bounds of stream.
func (b *OutputBus) Bounds(ctx context.Context, stream string) (Bounds, error) {
	st, ok := b.l.streams[stream]
	if !ok {
		return Bounds{}, fmt.Errorf("eventlog: bounds: unknown stream %q", stream)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return Bounds{}, fmt.Errorf("eventlog: info of %s: %w", stream, err)
	}
	return Bounds{First: info.State.FirstSeq, Last: info.State.LastSeq, MaxAge: info.Config.MaxAge}, nil
}

// Message is a message of a stream as a reader gets it: where and when it was stored, and its
// body.
type Message struct {
	Subject string
	Seq     uint64
	Time    time.Time
	Data    []byte
}

// Last returns the newest message of the output stream on subject (wildcards allowed); an error
// wrapping ErrNoMessage when there is none.
func (b *OutputBus) Last(ctx context.Context, subject string) (Message, error) {
	m, err := b.l.streams[OutputStream].GetLastMsgForSubject(ctx, subject)
	return rawMessage(m, subject, err)
}

// First returns the oldest message of the output stream on subject; an error wrapping
// ErrNoMessage when there is none.
func (b *OutputBus) First(ctx context.Context, subject string) (Message, error) {
	m, err := b.l.streams[OutputStream].GetMsg(ctx, 1, jetstream.WithGetMsgSubject(subject))
	return rawMessage(m, subject, err)
}

func rawMessage(m *jetstream.RawStreamMsg, subject string, err error) (Message, error) {
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return Message{}, fmt.Errorf("%w on %s: %w", ErrNoMessage, subject, err)
	case err != nil:
		return Message{}, fmt.Errorf("eventlog: message on %s: %w", subject, err)
	}
	return Message{Subject: m.Subject, Seq: m.Sequence, Time: m.Time, Data: m.Data}, nil
}

// Read hands the messages of stream on filter, from sequence from (at least 1) on, to deliver,
// in order, from a goroutine of its own, until stop is called; deliver may block (the server
// then holds the rest back). It reads with an ordered consumer (ephemeral, in memory, never
// replicated), which recovers by itself from missed heartbeats and reconnections; when its
// consumer is deleted under it, failed is called and nothing more is delivered. stop deletes the
// consumer from the server, so a departed reader leaves nothing behind: unblock deliver before
// calling it.
func (b *OutputBus) Read(ctx context.Context, stream, filter string, from uint64, deliver func(Message), failed func(error)) (stop func(), err error) {
	st, ok := b.l.streams[stream]
	if !ok {
		return nil, fmt.Errorf("eventlog: read: unknown stream %q", stream)
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{filter},
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       max(from, 1),
		InactiveThreshold: readInactive,
	})
	if err != nil {
		return nil, fmt.Errorf("eventlog: read %s: %w", filter, err)
	}
	remove := func() {
		info := cons.CachedInfo()
		if info == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), consumerOpTimeout)
		defer cancel()
		// On failure it expires after readInactive anyway.
		_ = b.js.DeleteConsumer(ctx, stream, info.Name)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		msg := Message{Subject: m.Subject(), Data: m.Data()}
		if md, err := m.Metadata(); err == nil {
			msg.Seq, msg.Time = md.Sequence.Stream, md.Timestamp
		}
		deliver(msg)
	}, jetstream.PullMaxMessages(readBatch), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		// Missed heartbeats and reconnects are recovered by the ordered consumer itself;
		// a consumer deleted under it is not.
		if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) {
			failed(err)
		}
		b.l.log.Debug("eventlog: read", "filter", filter, "err", err)
	}))
	if err != nil {
		remove()
		return nil, fmt.Errorf("eventlog: read %s: %w", filter, err)
	}
	return func() {
		cc.Stop()
		<-cc.Closed()
		remove()
	}, nil
}
