package projections

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/jetgraph/jetgraph/eventlog"
)

// How the projector groups the events it reads into batches, and prepares them while the batch
// before is applied.

// preparedBatch is a batch of events and, for each Preparer among the projections (by index),
// what it prepared of each event.
type preparedBatch struct {
	events   []eventlog.Event
	prepared [][]any
	refused  []error // by event, why it could not be upcast; nil when every one was
}

// linger adds to batch the events that arrive within d, until it is full; never part of a
// packed message.
func (p *Projector) linger(ctx context.Context, sub *eventlog.Subscription, batch []eventlog.Event, d time.Duration) []eventlog.Event {
	wait, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for len(batch) < maxApplyBatch || sub.Buffered() > 0 {
		e, err := sub.Next(wait)
		if err != nil {
			break // the time is up (or the subscription ended: the next read says so)
		}
		batch = append(batch, e)
	}
	return batch
}

// read groups the events of sub into batches, prepares them and hands them to out, until
// reading fails.
func (p *Projector) read(ctx context.Context, sub *eventlog.Subscription, out chan<- preparedBatch) error {
	busy := false // the last BusyLinger brought more events
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			return err
		}
		batch := drain(sub, append(make([]eventlog.Event, 0, 64), e), maxApplyBatch)
		switch {
		case len(batch) >= maxApplyBatch:
		case p.Linger > 0:
			batch = p.linger(ctx, sub, batch, p.Linger)
		case p.BusyLinger > 0 && (busy || messages(batch) > 1):
			n := len(batch)
			batch = p.linger(ctx, sub, batch, p.BusyLinger)
			busy = len(batch) > n
		}
		b := p.prepareBatch(batch)
		// While the previous batch is applied, the events that arrive join this one: a busy
		// projector commits fewer and larger transactions, and an idle one waits for nothing.
		for {
			var incoming <-chan []eventlog.Event
			if len(b.events) < maxApplyBatch {
				incoming = sub.Incoming()
			}
			select {
			case out <- b:
			case more := <-incoming:
				b = p.extend(b, drain(sub, more, maxApplyBatch-len(b.events)))
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
			break
		}
	}
}

// messages counts the log messages a batch's events come from (a packed message's events share
// a sequence).
func messages(batch []eventlog.Event) int {
	n := 0
	for i, e := range batch {
		if i == 0 || e.Seq != batch[i-1].Seq {
			n++
		}
	}
	return n
}

// drain adds to batch the events that are already there, until it holds max; never part of a
// packed message.
func drain(sub *eventlog.Subscription, batch []eventlog.Event, max int) []eventlog.Event {
	for len(batch) < max || sub.Buffered() > 0 {
		e, ok := sub.TryNext()
		if !ok {
			break
		}
		batch = append(batch, e)
	}
	return batch
}

// extend adds events to a prepared batch, preparing them.
func (p *Projector) extend(b preparedBatch, events []eventlog.Event) preparedBatch {
	more := p.prepareBatch(events)
	b.refused = joinRefused(b.refused, len(b.events), more.refused, len(more.events))
	b.events = append(b.events, more.events...)
	for i := range b.prepared {
		if b.prepared[i] != nil {
			b.prepared[i] = append(b.prepared[i], more.prepared[i]...)
		}
	}
	return b
}

// prepareWorkers is how many goroutines prepare a batch: one per core.
var prepareWorkers = runtime.GOMAXPROCS(0)

// prepareBatch runs the Preparers of the projections on a batch, spread over prepareWorkers.
func (p *Projector) prepareBatch(batch []eventlog.Event) preparedBatch {
	batch, refused := p.upcast(batch)
	b := preparedBatch{events: batch, prepared: make([][]any, len(p.projections)), refused: refused}
	var preparers []int
	for i, pr := range p.projections {
		if _, ok := pr.(Preparer); ok {
			preparers = append(preparers, i)
			b.prepared[i] = make([]any, len(batch))
		}
	}
	if len(preparers) == 0 {
		return b
	}
	work := func(from, to int) {
		for _, i := range preparers {
			pr := p.projections[i].(Preparer)
			for j := from; j < to; j++ {
				b.prepared[i][j] = prepareOne(pr, batch[j])
			}
		}
	}
	workers := min(prepareWorkers, (len(batch)+7)/8)
	if workers <= 1 {
		work(0, len(batch))
		return b
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { work(w*len(batch)/workers, (w+1)*len(batch)/workers) })
	}
	wg.Wait()
	return b
}

// prepareFailure is a panic in Prepare; the fold of its event fails with it.
type prepareFailure struct{ err error }

func prepareOne(pr Preparer, e eventlog.Event) (prepared any) {
	defer func() {
		if r := recover(); r != nil {
			prepared = prepareFailure{fmt.Errorf("panic in prepare: %v", r)}
		}
	}()
	return pr.Prepare(e)
}
