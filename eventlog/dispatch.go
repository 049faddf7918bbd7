package eventlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DispatchConfig describes a dispatch queue: a durable work queue over the runtime stream.
type DispatchConfig struct {
	// Name is the durable consumer's name, shared by every process that works the queue.
	Name string
	// Filter is the subject of the events that are the queue's work (run creations).
	Filter string
	// AckWait is how long a delivered message waits for its worker's acknowledgement (or its
	// word that it is in progress) before it is delivered to another.
	AckWait time.Duration
	// Stream is the stream the queue reads; empty is RuntimeStream.
	Stream string
}

// dispatchMaxAckPending bounds the messages of a dispatch queue delivered and not acknowledged.
const dispatchMaxAckPending = 10_000

// Pulls of a dispatch queue last dispatchExpiry and are kept alive by a heartbeat every
// dispatchHeartbeat: a pull lost with its server (a failover) is noticed after two missed.
const (
	dispatchExpiry    = 10 * time.Second
	dispatchHeartbeat = 2 * time.Second
)

// DispatchQueue hands the events of a filter on a stream (the runtime's by default) to workers of any process,
// each to one at a time: a message not acknowledged within AckWait (its worker died) goes to
// another. Every event is delivered, from the start of the stream, until acknowledged.
type DispatchQueue struct {
	cons    jetstream.Consumer
	nc      *nats.Conn // for in-progress acknowledgements the consumer confirms (Hold)
	ackWait time.Duration
}

// OpenDispatch creates (or updates) the queue's durable consumer with the log's replicas. A
// cluster that is still forming is waited for, as long as ctx lets.
func (l *Log) OpenDispatch(ctx context.Context, cfg DispatchConfig) (*DispatchQueue, error) {
	var cons jetstream.Consumer
	err := l.Retry(ctx, "dispatch consumer "+cfg.Name, func(ctx context.Context) error {
		name := cfg.Stream
		if name == "" {
			name = RuntimeStream
		}
		stream, err := l.js.Stream(ctx, name)
		if err != nil {
			return err
		}
		cons, err = stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
			Durable:       cfg.Name,
			FilterSubject: cfg.Filter,
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       cfg.AckWait,
			MaxAckPending: dispatchMaxAckPending,
			DeliverPolicy: jetstream.DeliverAllPolicy,
			Replicas:      l.cfg.Replicas,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &DispatchQueue{cons: cons, nc: l.nc, ackWait: cfg.AckWait}, nil
}

// Pull starts pulling up to batch messages at a time. A pull whose consumer was lost (a
// failover) ends with an error from Next: pull anew.
func (q *DispatchQueue) Pull(batch int) (*DispatchPull, error) {
	msgs, err := q.cons.Messages(jetstream.PullMaxMessages(batch),
		jetstream.PullExpiry(dispatchExpiry), jetstream.PullHeartbeat(dispatchHeartbeat))
	if err != nil {
		return nil, fmt.Errorf("eventlog: pull: %w", err)
	}
	return &DispatchPull{msgs: msgs}, nil
}

// Fetch returns, in order, at most max of the queue's next messages: those there now, or else
// the first to arrive within wait (and those there with it); none (no error) when none did. It
// returns as soon as it has messages, whose AckWait runs from then.
func (q *DispatchQueue) Fetch(ctx context.Context, max int, wait time.Duration) ([]*Dispatch, error) {
	msgs, err := fetched(time.Now())(q.cons.FetchNoWait(max))
	if len(msgs) > 0 || err != nil {
		return msgs, err
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if msgs, err = fetched(time.Now())(q.cons.Fetch(1, jetstream.FetchContext(wctx))); len(msgs) == 0 || err != nil || max == 1 {
		if ctx.Err() != nil {
			err = nil // (its messages, if any came, are settled by the caller)
		}
		return msgs, err
	}
	more, err := fetched(time.Now())(q.cons.FetchNoWait(max - 1))
	return append(msgs, more...), err
}

// fetched is collect for a fetch asked for at at.
func fetched(at time.Time) func(jetstream.MessageBatch, error) ([]*Dispatch, error) {
	return func(batch jetstream.MessageBatch, err error) ([]*Dispatch, error) {
		msgs, err := collect(batch, err)
		for _, m := range msgs {
			m.fetched = at
		}
		return msgs, err
	}
}

// collect reads a fetched batch whole; the end of a fetch that found nothing is no error.
func collect(batch jetstream.MessageBatch, err error) ([]*Dispatch, error) {
	if err != nil {
		return nil, fmt.Errorf("eventlog: fetch: %w", err)
	}
	var out []*Dispatch
	for msg := range batch.Messages() {
		out = append(out, &Dispatch{msg: msg})
	}
	if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) &&
		!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return out, fmt.Errorf("eventlog: fetch: %w", err)
	}
	return out, nil
}

// DispatchPull is one pull of a dispatch queue; Next is for one goroutine.
type DispatchPull struct {
	msgs jetstream.MessagesContext
}

// Next waits for the next message; it fails once Stop was called or the pull was lost.
func (p *DispatchPull) Next() (*Dispatch, error) {
	msg, err := p.msgs.Next()
	if err != nil {
		return nil, err
	}
	return &Dispatch{msg: msg}, nil
}

// Stop ends the pull: Next fails from then on.
func (p *DispatchPull) Stop() { p.msgs.Stop() }

// Dispatch is one delivered message of a dispatch queue, which its worker settles: Ack when its
// work is done, Nak to have it delivered again, Term to drop it.
type Dispatch struct {
	msg jetstream.Msg
	// fetched is when the fetch that delivered it was asked for (zero for a Pull's): its
	// AckWait ran from later than that (see DispatchQueue.Hold).
	fetched time.Time
}

// Subject is the subject of the event delivered.
func (d *Dispatch) Subject() string { return d.msg.Subject() }

// Seq is the stream sequence of the event delivered.
func (d *Dispatch) Seq() (uint64, error) {
	md, err := d.msg.Metadata()
	if err != nil {
		return 0, err
	}
	return md.Sequence.Stream, nil
}

// Data is the stored body of the message: decode it with Log.DecodeBody (it may pack several
// events, or refer to a blob).
func (d *Dispatch) Data() []byte { return d.msg.Data() }

// Ack says the work is done: the message is not delivered again.
func (d *Dispatch) Ack() error { return d.msg.Ack() }

// Nak has the message delivered again after delay.
func (d *Dispatch) Nak(delay time.Duration) error { return d.msg.NakWithDelay(delay) }

// InProgress restarts the message's AckWait: its worker is still at it.
func (d *Dispatch) InProgress() error { return d.msg.InProgress() }

// keepInProgress tells the consumer that msgs are in progress every interval until stop is
// called or ctx ends (see Held.Progress); stop returns once the telling has stopped.
func keepInProgress(ctx context.Context, interval time.Duration, msgs []InProgresser) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				for _, m := range msgs {
					_ = m.InProgress()
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Term drops the message for good: it can never be worked on.
func (d *Dispatch) Term() error { return d.msg.Term() }
