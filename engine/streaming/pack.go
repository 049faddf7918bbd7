package streaming

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/jetgraph/jetgraph/eventlog"
)

// A run's events reach the output stream through a sender, which keeps at most one message of
// the run awaiting its acknowledgement. An event emitted while none is awaited is sent at once;
// the events emitted while one is awaited are sent together, in one message, when its
// acknowledgement arrives. A slow run (a model streaming tokens) thus gets each event out at
// once, and a fast one is stored in a few messages rather than one per event: each message
// costs the log's server a parse, a store and an acknowledgement, whatever its size.
//
// A packed message holds several records, each in the single-event form (see wireVersion):
//
//	jgm
//	<length of the record in bytes>
//	<record>
//	<length>
//	<record>
//	...
//
// A message holding one record is sent in the single-event form, as before packing existed.
const packVersion = "jgm"

// Bounds of one packed message. Records are few enough that their frames fit the frame slots of
// one message (frameSlots): no record shapes into more than a few frames.
const (
	maxPackRecords = 32
	maxPackBytes   = 256 << 10
	// maxQueuedBytes bounds the events of a run waiting to be sent: a run that emits faster
	// than the log stores waits for room.
	maxQueuedBytes = 8 << 20
	// lengthLine is room for a record's length line in a packed message (digits and newline).
	lengthLine = 12
)

// sender sends the records of one run in order, packing those that wait. Its goroutine runs
// only while records wait or are in flight, so a run abandoned without its end leaves nothing
// running.
//
// Once the run's graph is done (flush), nothing more is worth waiting for: the sender turns
// urgent and sends what waits at once, without waiting for the acknowledgements before it (the
// server stores the messages of one connection in the order they come).
type sender struct {
	s       *Streamer
	subject string
	runID   string

	mu       sync.Mutex
	room     *sync.Cond // signalled when queued bytes shrink
	queue    [][]byte
	queued   int    // bytes in queue or in flight
	enqueued uint64 // records ever queued
	done     uint64 // records sent and acknowledged (or given up on)
	running  bool   // the goroutine is sending
	urgent   bool
	wake     chan struct{} // closed when the sender turns urgent
	progress chan struct{} // closed and replaced whenever done moves
	// lost counts the records the stream refused since the client was last told, and why.
	lost    int
	lostWhy error
}

func newSender(s *Streamer, subject, runID string) *sender {
	q := &sender{s: s, subject: subject, runID: runID, progress: make(chan struct{}), wake: make(chan struct{})}
	q.room = sync.NewCond(&q.mu)
	return q
}

// add queues one record (it keeps rec) and starts sending if nothing is being sent.
func (q *sender) add(rec []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.queued > 0 && q.queued+len(rec) > maxQueuedBytes {
		q.room.Wait()
	}
	q.queue = append(q.queue, rec)
	q.queued += len(rec)
	q.enqueued++
	if !q.running {
		q.running = true
		q.s.senders.Add(1)
		go q.run()
	}
}

// flight is a message awaiting its acknowledgement.
type flight struct {
	ack           eventlog.Published
	id            string // the message's id: sent again, it is stored once
	body          []byte
	since         time.Time // when it was first sent
	records, size int
}

// run sends what waits, one message at a time (or at once when urgent), until nothing waits
// or is in flight.
func (q *sender) run() {
	defer q.s.senders.Done()
	var inflight []flight
	for {
		q.mu.Lock()
		if len(q.queue) > 0 && (len(inflight) == 0 || q.urgent) {
			body, n, size := q.take()
			q.mu.Unlock()
			f := flight{id: eventlog.NewID(time.Now()), body: body, since: time.Now(), records: n, size: size}
			if ack, err := q.send(&f); err == nil {
				f.ack = ack
				inflight = append(inflight, f)
			} else {
				q.refused(n, err)
				q.complete(n, size)
			}
			continue
		}
		if len(inflight) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		wake := q.wake
		if q.urgent {
			wake = nil // already sending everything: wait for the acks
		}
		q.mu.Unlock()
		if settled, err := q.await(&inflight[0], wake); settled {
			if err != nil {
				q.refused(inflight[0].records, err)
			}
			q.complete(inflight[0].records, inflight[0].size)
			inflight = inflight[1:]
		}
	}
}

// refused notes that records were refused by the stream: the next message tells the client.
func (q *sender) refused(records int, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.lost += records
	q.lostWhy = err
}

// take removes from the queue the records of the next message, and returns its body, how many
// records it holds and their bytes. Called with mu held and the queue not empty. Records lost
// before are announced first, by an "error" record (not counted: it was never queued).
func (q *sender) take() ([]byte, int, int) {
	if q.lost > 0 {
		why := fmt.Sprintf("%d events were refused by the log (%v)", q.lost, q.lostWhy)
		rec := lostRecord("run", why)
		q.queue = append([][]byte{rec}, q.queue...)
		q.lost, q.lostWhy = 0, nil
		body, n, size := q.take()
		return body, n - 1, size - len(rec)
	}
	limit := min(maxPackBytes, q.s.bus.MaxPayload())
	n, size, packed := 1, len(q.queue[0]), len(packVersion)+1+len(q.queue[0])+lengthLine
	for n < len(q.queue) && n < maxPackRecords {
		next := packed + len(q.queue[n]) + lengthLine
		if next > limit {
			break
		}
		packed, size = next, size+len(q.queue[n])
		n++
	}
	var body []byte
	if n == 1 {
		body = q.queue[0]
	} else {
		body = make([]byte, 0, packed)
		body = append(body, packVersion+"\n"...)
		for _, r := range q.queue[:n] {
			body = strconv.AppendInt(body, int64(len(r)), 10)
			body = append(body, '\n')
			body = append(body, r...)
		}
	}
	clear(q.queue[:n])
	q.queue = q.queue[n:]
	return body, n, size
}

// send publishes f's message. Its id makes a message sent again (its acknowledgement was lost
// in a failover) stored once.
func (q *sender) send(f *flight) (eventlog.Published, error) {
	ack, err := q.s.bus.Publish(q.subject, f.id, f.body)
	if err != nil {
		q.s.log.Warn("streaming: publish failed; events are lost", "run_id", q.runID, "events", f.records, "err", err)
	}
	return ack, err
}

// resendFor is how long a message whose acknowledgement does not come (the stream's leader was
// lost, a new one is being elected) is sent again before its events are given up on.
const resendFor = 30 * time.Second

// await waits for f's acknowledgement (at most ackWait) and reports whether it is settled, and
// why its events are lost if they are: false when wake fired first, or when f was sent again
// (its acknowledgement was lost: f.ack is then the new one's). A message refused by the stream,
// or unacknowledged for resendFor, is settled with the failure, which the run's next message
// announces to its clients.
func (q *sender) await(f *flight, wake <-chan struct{}) (bool, error) {
	settled, failure := f.ack.Await(wake, ackWait)
	if !settled || failure == nil {
		return settled, nil
	}
	if eventlog.Unanswered(failure) && time.Since(f.since) < resendFor {
		q.s.log.Debug("streaming: events of a run not acknowledged, sending them again", "run_id", q.runID, "err", failure)
		time.Sleep(resendWait)
		if ack, err := q.send(f); err == nil {
			f.ack = ack
			return false, nil
		}
	}
	q.s.log.Warn("streaming: events of a run were not stored", "run_id", q.runID, "events", f.records, "err", failure)
	return true, failure
}

// resendWait paces the sending again of an unacknowledged message while the stream has no leader.
const resendWait = 100 * time.Millisecond

// complete counts records as settled.
func (q *sender) complete(records, size int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queued -= size
	q.done += uint64(records)
	close(q.progress)
	q.progress = make(chan struct{})
	q.room.Broadcast()
}

// hurry makes the sender urgent: what waits, and what is added from now on, is sent at once.
func (q *sender) hurry() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.urgent {
		q.urgent = true
		close(q.wake)
	}
}

// flush sends what waits at once and waits until every record queued so far is stored (or
// given up on), at most ackWait after the last progress.
func (q *sender) flush() {
	q.hurry()
	q.mu.Lock()
	target := q.enqueued
	q.mu.Unlock()
	t := time.NewTimer(ackWait)
	defer t.Stop()
	for {
		q.mu.Lock()
		if q.done >= target {
			q.mu.Unlock()
			return
		}
		progress := q.progress
		q.mu.Unlock()
		select {
		case <-progress:
			t.Reset(ackWait)
		case <-t.C:
			q.s.log.Warn("streaming: the end of a run's stream was not stored in time", "run_id", q.runID)
			return
		}
	}
}

// records splits a message body into its records: one for the single-event form, each of a
// packed message's otherwise.
func records(body []byte) ([][]byte, error) {
	rest, ok := bytes.CutPrefix(body, []byte(packVersion+"\n"))
	if !ok {
		return [][]byte{body}, nil
	}
	var out [][]byte
	for len(rest) > 0 {
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return nil, errors.New("streaming: packed output message cut short")
		}
		n, err := strconv.Atoi(string(rest[:nl]))
		if err != nil || n < 0 || n > len(rest)-nl-1 {
			return nil, fmt.Errorf("streaming: packed output message: bad record length %.16q", rest[:nl])
		}
		out = append(out, rest[nl+1:nl+1+n])
		rest = rest[nl+1+n:]
	}
	return out, nil
}
