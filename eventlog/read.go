package eventlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// decode reads the events of a stored message (one, or several packed by AppendBatch), fetching
// a body stored by reference, and stamps them with its sequence.
func (l *Log) decode(ctx context.Context, msg jetstream.Msg) ([]Event, error) {
	md, err := msg.Metadata()
	if err != nil {
		return nil, fmt.Errorf("eventlog: metadata of %s: %w", msg.Subject(), err)
	}
	events, err := l.DecodeBody(ctx, msg.Data())
	if err != nil {
		return nil, fmt.Errorf("eventlog: decode %s: %w", msg.Subject(), err)
	}
	for i := range events {
		events[i].Seq = md.Sequence.Stream
	}
	return events, nil
}

// Load returns every event of agg in log order. It holds them all: for an aggregate that may be
// long (a thread with its checkpoints), Tail hands them over one by one.
func (l *Log) Load(ctx context.Context, agg Aggregate) ([]Event, error) {
	var events []Event
	_, err := l.each(ctx, agg, func(e Event) error {
		events = append(events, e)
		return nil
	})
	return events, err
}

// each hands every event of agg now in the log to emit, in log order, reading them as they come
// from the log rather than all at once, and returns the sequence of the last one (0: none).
func (l *Log) each(ctx context.Context, agg Aggregate, emit func(Event) error) (uint64, error) {
	if err := agg.Validate(); err != nil {
		return 0, err
	}
	stream, err := StreamOf(agg.Kind)
	if err != nil {
		return 0, err
	}
	s := l.streams[stream]
	last, err := s.GetLastMsgForSubject(ctx, agg.Filter())
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("eventlog: load %s: %w", agg, err)
	}
	var emitErr error
	err = l.read(ctx, stream, 1, []string{agg.Filter()}, func(e Event) bool {
		if emitErr == nil {
			emitErr = emit(e)
		}
		return emitErr == nil && e.Seq < last.Sequence
	})
	if emitErr != nil {
		return 0, emitErr
	}
	if err != nil {
		return 0, fmt.Errorf("eventlog: load %s: %w", agg, err)
	}
	return last.Sequence, nil
}

// read delivers events of stream from seq on, matching filters, until f returns false.
func (l *Log) read(ctx context.Context, stream string, from uint64, filters []string, f func(Event) bool) error {
	sub, err := l.Subscribe(ctx, stream, from, filters...)
	if err != nil {
		return err
	}
	defer sub.Stop()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			return err
		}
		// A packed message is delivered whole before f may stop the reading.
		if !f(e) && sub.Buffered() == 0 {
			return nil
		}
	}
}

// Subscription delivers the events of a stream in order, from a starting sequence, as they come.
// It uses an ordered (ephemeral, unreplicated) consumer: cheap, and never one per aggregate.
// Next and TryNext are for one reader goroutine.
type Subscription struct {
	cc   jetstream.ConsumeContext
	ch   chan []Event
	cur  []Event // the rest of the message being read
	done chan struct{}
	// cancel ends the fetching of bodies stored by reference.
	cancel context.CancelFunc
	once   sync.Once
	mu     sync.Mutex
	err    error
}

// subscriptionBuffer bounds the events held between the consumer and a slow reader.
const subscriptionBuffer = 4096

// Subscribe starts delivering events of stream from sequence from (1 for all), optionally only those
// on the given subject filters.
func (l *Log) Subscribe(ctx context.Context, stream string, from uint64, filters ...string) (*Subscription, error) {
	s, ok := l.streams[stream]
	if !ok {
		return nil, fmt.Errorf("eventlog: subscribe: unknown stream %q", stream)
	}
	if from == 0 {
		from = 1
	}
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects: filters,
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:    from,
	}
	cons, err := s.OrderedConsumer(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("eventlog: subscribe to %s: %w", stream, err)
	}
	// Bodies stored by reference are fetched as long as the subscription lasts.
	fetchCtx, cancel := context.WithCancel(context.Background())
	sub := &Subscription{ch: make(chan []Event, subscriptionBuffer), done: make(chan struct{}), cancel: cancel}
	sub.cc, err = cons.Consume(func(msg jetstream.Msg) {
		events, err := l.decode(fetchCtx, msg)
		if err != nil {
			sub.fail(err)
			return
		}
		select {
		case sub.ch <- events:
		case <-sub.done:
		}
	}, jetstream.PullExpiry(10*time.Second), jetstream.PullHeartbeat(2*time.Second),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			// Heartbeat misses and reconnects are recovered by the ordered consumer itself.
			l.log.Debug("eventlog: consume", "stream", stream, "err", err)
		}))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("eventlog: subscribe to %s: %w", stream, err)
	}
	return sub, nil
}

func (s *Subscription) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.Stop()
}

// Next waits for the next event.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	if e, ok := s.pop(); ok {
		return e, nil
	}
	select {
	case s.cur = <-s.ch:
		return s.Next(ctx)
	case <-ctx.Done():
		return Event{}, ctx.Err()
	case <-s.done:
		select {
		case s.cur = <-s.ch:
			return s.Next(ctx)
		default:
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.err != nil {
			return Event{}, s.err
		}
		return Event{}, errors.New("eventlog: subscription stopped")
	}
}

// TryNext returns the next event if one is already waiting.
func (s *Subscription) TryNext() (Event, bool) {
	if e, ok := s.pop(); ok {
		return e, true
	}
	select {
	case s.cur = <-s.ch:
		return s.pop()
	default:
		return Event{}, false
	}
}

// Incoming delivers the events of the next message, for a reader that waits for one while it
// waits for something else too. Use it only when Buffered is 0 (the events it delivers come
// after every event read so far), and read on with TryNext or Next.
func (s *Subscription) Incoming() <-chan []Event { return s.ch }

// Buffered is the number of events left of the message being read: a reader that groups events
// takes them too, so that a packed batch is never split.
func (s *Subscription) Buffered() int { return len(s.cur) }

func (s *Subscription) pop() (Event, bool) {
	if len(s.cur) == 0 {
		return Event{}, false
	}
	e := s.cur[0]
	s.cur = s.cur[1:]
	return e, true
}

// Stop ends the subscription and releases its consumer.
func (s *Subscription) Stop() {
	s.once.Do(func() {
		close(s.done)
		s.cancel()
		if s.cc != nil {
			s.cc.Stop()
		}
	})
}

// Tail hands every event of agg to emit in log order and, with follow, keeps handing new ones
// as they are appended until ctx ends or emit fails.
func (l *Log) Tail(ctx context.Context, agg Aggregate, follow bool, emit func(Event) error) error {
	last, err := l.each(ctx, agg, emit)
	if err != nil || !follow {
		return err
	}
	stream, err := StreamOf(agg.Kind)
	if err != nil {
		return err
	}
	sub, err := l.Subscribe(ctx, stream, last+1, agg.Filter())
	if err != nil {
		return err
	}
	defer sub.Stop()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := emit(e); err != nil {
			return err
		}
	}
}
