package eventlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Load returns every event of agg in log order. It holds them all: for an aggregate that may be
// long (a thread with its checkpoints), Tail hands them over one by one.
func (l *Log) Load(ctx context.Context, agg Aggregate) ([]Event, error) {
	var events []Event
	_, err := l.each(ctx, agg, 1, func(e Event) error {
		events = append(events, e)
		return nil
	})
	return events, err
}

// each hands every event of agg now in the log to emit, in log order, reading them as they come
// from the log rather than all at once, and returns the sequence of the last one (0: none).
func (l *Log) each(ctx context.Context, agg Aggregate, from uint64, emit func(Event) error) (uint64, error) {
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
	if from > last.Sequence {
		return max(last.Sequence, from-1), nil
	}
	var emitErr error
	err = l.read(ctx, stream, max(from, 1), []string{agg.Filter()}, func(e Event) bool {
		if emitErr == nil && (!packedAcross[agg.Kind] || e.Aggregate == agg) { // (see PackAcross)
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
// It reads with an ephemeral consumer (in memory, unreplicated): cheap, and never one per
// aggregate. Next and TryNext are for one reader goroutine.
//
// The subscription outlives its consumer: when the consumer is lost (its server left the
// cluster, the connection moved to another server, heartbeats stopped, messages came out of
// order), a new one is created from the event after the last one delivered, retried at short
// intervals until the cluster answers again. Nothing is skipped or delivered twice.
type Subscription struct {
	l       *Log
	stream  jetstream.Stream
	filters []string

	ch   chan []Event
	cur  []Event // the rest of the message being read
	done chan struct{}
	once sync.Once
	// fetch lasts as long as the subscription: bodies stored by reference are fetched with it.
	fetch  context.Context
	cancel context.CancelFunc

	// deliver serializes handing messages to ch across consumers: a message of a consumer
	// replaced while it waited for room is handed over before the new consumer's first.
	deliver sync.Mutex

	mu      sync.Mutex
	err     error
	gen     int    // the current consumer's number; messages of older ones are dropped
	next    uint64 // the stream sequence the next message must have at least
	cseq    uint64 // the current consumer's last delivery sequence
	cc      jetstream.ConsumeContext
	name    string        // the current consumer's name
	created time.Time     // when the current consumer was created
	trouble chan struct{} // the current consumer needs replacing
}

// subscriptionBuffer bounds the events held between the consumer and a slow reader.
const subscriptionBuffer = 4096

// Timing of a subscription's consumer: it pulls for pullExpiry at a time and the server sends a
// heartbeat every pullHeartbeat, two of which missed mean the consumer is lost. A lost consumer
// is created again after resubscribeMin, doubling up to resubscribeMax while the cluster does
// not answer (a leader election takes a few seconds).
const (
	pullExpiry        = 10 * time.Second
	pullHeartbeat     = 2 * time.Second
	resubscribeMin    = 50 * time.Millisecond
	resubscribeMax    = time.Second
	consumerInactive  = time.Minute
	consumerOpTimeout = 2 * time.Second
	// stallCheck is how often a subscription that delivered nothing asks the server whether its
	// consumer still exists and has nothing pending: a safety net for a consumer that stopped
	// delivering without any error.
	stallCheck = 5 * time.Second
)

// Subscribe starts delivering events of stream from sequence from (1 for all), optionally only those
// on the given subject filters.
func (l *Log) Subscribe(ctx context.Context, stream string, from uint64, filters ...string) (*Subscription, error) {
	st, ok := l.streams[stream]
	if !ok {
		return nil, fmt.Errorf("eventlog: subscribe: unknown stream %q", stream)
	}
	if from == 0 {
		from = 1
	}
	fetch, cancel := context.WithCancel(context.Background())
	sub := &Subscription{l: l, stream: st, filters: filters, next: from, fetch: fetch, cancel: cancel,
		ch: make(chan []Event, subscriptionBuffer), done: make(chan struct{}), trouble: make(chan struct{}, 1)}
	if err := sub.consume(ctx); err != nil {
		cancel()
		return nil, fmt.Errorf("eventlog: subscribe to %s: %w", stream, err)
	}
	go sub.supervise()
	return sub, nil
}

// consume creates a consumer from s.next on and starts reading it.
func (s *Subscription) consume(ctx context.Context) error {
	s.mu.Lock()
	s.gen++
	s.cseq = 0
	gen, next := s.gen, s.next
	s.mu.Unlock()
	cfg := jetstream.ConsumerConfig{
		Name:              "jg_" + NewID(time.Now()),
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       next,
		AckPolicy:         jetstream.AckNonePolicy,
		MemoryStorage:     true,
		Replicas:          1,
		InactiveThreshold: consumerInactive,
	}
	if len(s.filters) == 1 {
		cfg.FilterSubject = s.filters[0]
	} else {
		cfg.FilterSubjects = s.filters
	}
	cctx, cancel := context.WithTimeout(ctx, consumerOpTimeout)
	cons, err := s.stream.CreateOrUpdateConsumer(cctx, cfg)
	cancel()
	if err != nil {
		return err
	}
	if ci := cons.CachedInfo(); ci != nil && ci.Cluster != nil {
		s.l.log.Debug("eventlog: consumer created", "name", cfg.Name, "host", ci.Cluster.Leader, "from", next, "filters", s.filters)
	}
	trouble := func() {
		select {
		case s.trouble <- struct{}{}:
		default:
		}
	}
	cc, err := cons.Consume(func(msg jetstream.Msg) { s.handle(gen, msg, trouble) },
		jetstream.PullExpiry(pullExpiry), jetstream.PullHeartbeat(pullHeartbeat),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			s.l.log.Debug("eventlog: consume", "stream", s.stream.CachedInfo().Config.Name, "err", err)
			if !consumerLost(err) {
				s.fail(err)
				return
			}
			s.mu.Lock()
			current := gen == s.gen
			s.mu.Unlock()
			if current {
				trouble()
			}
		}))
	if err != nil {
		s.deleteConsumer(cfg.Name)
		return err
	}
	s.mu.Lock()
	s.cc, s.name, s.created = cc, cfg.Name, time.Now()
	stopped := s.isDone()
	s.mu.Unlock()
	if stopped {
		cc.Stop()
		s.deleteConsumer(cfg.Name)
	}
	return nil
}

// consumerLost reports whether a consumer error may mean the consumer will deliver no more:
// every error does (missed heartbeats, the consumer or its server gone, no responders, a
// reconnection) but that of a closed connection, which ends the subscription.
func consumerLost(err error) bool {
	return !errors.Is(err, jetstream.ErrConnectionClosed) && !errors.Is(err, nats.ErrConnectionClosed)
}

// handle passes a message of consumer gen on, unless it comes out of order.
func (s *Subscription) handle(gen int, msg jetstream.Msg, trouble func()) {
	md, err := msg.Metadata()
	if err != nil {
		s.fail(fmt.Errorf("eventlog: metadata of %s: %w", msg.Subject(), err))
		return
	}
	s.deliver.Lock()
	defer s.deliver.Unlock()
	s.mu.Lock()
	switch {
	case gen != s.gen:
		s.mu.Unlock()
		return
	case md.Sequence.Consumer != s.cseq+1:
		// A delivery went missing: read again from the last one handed over.
		s.mu.Unlock()
		trouble()
		return
	}
	s.cseq = md.Sequence.Consumer
	if md.Sequence.Stream < s.next {
		s.mu.Unlock()
		return // handed over already, by the consumer before this one
	}
	s.next = md.Sequence.Stream + 1
	s.mu.Unlock()
	events, err := s.l.DecodeBody(s.fetch, msg.Data())
	if err != nil {
		s.fail(fmt.Errorf("eventlog: decode %s: %w", msg.Subject(), err))
		return
	}
	for i := range events {
		events[i].Seq = md.Sequence.Stream
	}
	select {
	case s.ch <- events:
	case <-s.done:
	}
}

// supervise replaces the consumer whenever it is lost, when the connection moved to another
// server (a pull request parked on the old one is gone with it), or when the consumer idles
// while the server says it holds messages for it, until the subscription stops.
func (s *Subscription) supervise() {
	check := time.NewTicker(stallCheck)
	defer check.Stop()
	var seen uint64 // the delivery sequence at the last check
	for {
		reconnected := s.l.reconnected()
		var why string
		select {
		case <-s.done:
			s.release()
			return
		case <-s.trouble:
			why = "it reported an error or skipped a delivery"
		case <-reconnected:
			why = "the connection moved to another server"
		case <-check.C:
			s.mu.Lock()
			cseq, young := s.cseq, time.Since(s.created) < stallCheck
			s.mu.Unlock()
			// (A reader that has not taken what was delivered holds the consumer back.)
			if cseq != seen || young || len(s.ch) > 0 || !s.stalled(cseq) {
				seen = cseq
				continue
			}
			why = "it stopped delivering"
		}
		// Said at Info: until the new consumer delivers, a projection reading here folds nothing,
		// and the commands waiting for it wait too.
		s.mu.Lock()
		next := s.next
		s.mu.Unlock()
		s.l.log.Info("eventlog: replacing a consumer", "stream", s.stream.CachedInfo().Config.Name, "from", next, "why", why)
		s.replace()
		seen = 0
	}
}

// stalled reports whether the current consumer, which delivered nothing past cseq since the
// last check, is gone or holds messages it does not deliver.
func (s *Subscription) stalled(cseq uint64) bool {
	s.mu.Lock()
	name := s.name
	s.mu.Unlock()
	if name == "" {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), consumerOpTimeout)
	defer cancel()
	c, err := s.stream.Consumer(ctx, name)
	if err != nil {
		return true
	}
	info := c.CachedInfo()
	return info.NumPending > 0 || info.Delivered.Consumer > cseq
}

// replace stops the current consumer and creates another from the next sequence, retrying
// until it succeeds or the subscription stops.
func (s *Subscription) replace() {
	s.release()
	wait := resubscribeMin
	for {
		err := s.consume(context.Background())
		if err == nil {
			// Trouble reported by the consumer just replaced concerns it alone.
			select {
			case <-s.trouble:
			default:
			}
			return
		}
		s.l.log.Debug("eventlog: resubscribing", "stream", s.stream.CachedInfo().Config.Name, "err", err)
		select {
		case <-s.done:
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, resubscribeMax)
	}
}

// release stops the current consumer and deletes it from the server in the background.
func (s *Subscription) release() {
	s.mu.Lock()
	cc, name := s.cc, s.name
	s.cc, s.name = nil, ""
	s.gen++ // whatever the stopped consumer still delivers is dropped
	s.mu.Unlock()
	if cc != nil {
		cc.Stop()
	}
	if name != "" {
		go s.deleteConsumer(name)
	}
}

// deleteConsumer removes a consumer this subscription no longer reads (it expires after
// consumerInactive anyway).
func (s *Subscription) deleteConsumer(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), consumerOpTimeout)
	defer cancel()
	_ = s.l.js.DeleteConsumer(ctx, s.stream.CachedInfo().Config.Name, name)
}

func (s *Subscription) isDone() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
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
	})
}

// Tail hands every event of agg to emit in log order and, with follow, keeps handing new ones
// as they are appended until ctx ends or emit fails.
func (l *Log) Tail(ctx context.Context, agg Aggregate, follow bool, emit func(Event) error) error {
	return l.TailFrom(ctx, agg, 1, follow, emit)
}

// TailFrom is Tail from the stream sequence from on: a reader that has seen the events up to
// sequence n asks for n+1, and the log delivers only what follows (a page of a long thread
// does not read the thread from its start).
func (l *Log) TailFrom(ctx context.Context, agg Aggregate, from uint64, follow bool, emit func(Event) error) error {
	last, err := l.each(ctx, agg, from, emit)
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
