package streaming

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// consumer reads the messages of a stream matching a subject filter, from a sequence on, with
// an ordered consumer (ephemeral, in memory, never replicated): one per client stream. close
// stops it and deletes it from the server, so a departed client leaves nothing behind.
type consumer struct {
	js     jetstream.JetStream
	stream string
	cons   jetstream.Consumer
	cc     jetstream.ConsumeContext
	ch     chan jetstream.Msg
	done   chan struct{}
	once   sync.Once

	mu  sync.Mutex
	err error
}

// consumerBuffer bounds the messages held between the server and a slow client; past it the
// consumer stops pulling until the client catches up.
const consumerBuffer = 256

// inactiveThreshold is how long the server keeps a consumer whose process went away without
// deleting it.
const inactiveThreshold = 30 * time.Second

// consume starts reading stream st from sequence from (at least 1) on, filtered on filter.
func (s *Streamer) consume(ctx context.Context, st jetstream.Stream, filter string, from uint64) (*consumer, error) {
	if from == 0 {
		from = 1
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{filter},
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       from,
		InactiveThreshold: inactiveThreshold,
	})
	if err != nil {
		return nil, fmt.Errorf("streaming: read %s: %w", filter, err)
	}
	c := &consumer{js: s.js, stream: st.CachedInfo().Config.Name, cons: cons,
		ch: make(chan jetstream.Msg, consumerBuffer), done: make(chan struct{})}
	c.cc, err = cons.Consume(func(m jetstream.Msg) {
		select {
		case c.ch <- m:
		case <-c.done:
		}
	}, jetstream.PullMaxMessages(consumerBuffer), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		// Missed heartbeats and reconnects are recovered by the ordered consumer itself;
		// a consumer deleted under it is not.
		if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) {
			c.fail(err)
		}
		s.log.Debug("streaming: consume", "filter", filter, "err", err)
	}))
	if err != nil {
		c.deleteConsumer()
		return nil, fmt.Errorf("streaming: read %s: %w", filter, err)
	}
	return c, nil
}

// fail ends the consumer with err, which Err reports.
func (c *consumer) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	c.once.Do(func() { close(c.done) })
}

// Err is why the consumer stopped on its own, nil if it did not.
func (c *consumer) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// close stops reading and deletes the consumer from the server.
func (c *consumer) close() {
	c.once.Do(func() { close(c.done) })
	if c.cc != nil {
		c.cc.Stop()
		<-c.cc.Closed()
	}
	c.deleteConsumer()
}

func (c *consumer) deleteConsumer() {
	info := c.cons.CachedInfo()
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.js.DeleteConsumer(ctx, c.stream, info.Name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		// It expires after inactiveThreshold anyway.
		return
	}
}
