package streaming

import (
	"context"
	"fmt"
	"sync"

	"github.com/jetgraph/jetgraph/eventlog"
)

// consumer reads the messages of a stream matching a subject filter, from a sequence on (Bus.Read:
// an ordered consumer, one per client stream), into a channel. close stops it and deletes it
// from the server, so a departed client leaves nothing behind.
type consumer struct {
	stop func()
	ch   chan eventlog.Message
	done chan struct{}
	once sync.Once

	mu  sync.Mutex
	err error
}

// consumerBuffer bounds the messages held between the log and a slow client; past it the log
// holds the rest back until the client catches up.
const consumerBuffer = 256

// consume starts reading stream from sequence from (at least 1) on, filtered on filter.
func (s *Streamer) consume(ctx context.Context, stream, filter string, from uint64) (*consumer, error) {
	if s.bus == nil {
		return nil, errNoLog
	}
	c := &consumer{ch: make(chan eventlog.Message, consumerBuffer), done: make(chan struct{})}
	stop, err := s.bus.Read(ctx, stream, filter, max(from, 1), func(m eventlog.Message) {
		select {
		case c.ch <- m:
		case <-c.done:
		}
	}, c.fail)
	if err != nil {
		return nil, fmt.Errorf("streaming: read %s: %w", filter, err)
	}
	c.stop = stop
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
	if c.stop != nil {
		c.stop()
	}
}
