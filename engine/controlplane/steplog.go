package controlplane

import (
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jetgraph/jetgraph/engine/controlplane/scrub"
)

// Bounds of a step's streamed log.
const (
	// logFlushInterval is how often a step's new output is appended to the revision's log
	// while the step runs.
	logFlushInterval = time.Second
	// logChunkBytes bounds one log event (and appends one as soon as that much is pending): far
	// under the log's message size limit even when JSON escapes every byte.
	logChunkBytes = 64 << 10
	// stepLogBudget is how much of one step's output is streamed whole; beyond it only the last
	// maxLogEvent bytes are kept, appended at the end after a line saying how much was cut, so
	// that a step printing without end cannot fill the log and the projection.
	stepLogBudget = 2 << 20
)

// stepLog is the io.Writer a pipeline step (a build, a rollout) writes its output to. It
// appends the output to the revision's log while the step runs: what is pending every
// logFlushInterval, or at once when logChunkBytes are pending; Close appends the rest, before
// the step's status event is appended. Write never blocks on the log and never fails: an append
// that fails keeps its text pending for the next one. Writers may call Write concurrently (a
// command's stdout and stderr).
type stepLog struct {
	emit func(text string) error

	mu       sync.Mutex
	pending  []byte // not appended yet, in order
	streamed int    // bytes taken into pending so far (at most stepLogBudget)
	tail     []byte // past the budget: the last maxLogEvent bytes
	cut      int    // past the budget: bytes dropped from before tail
	failed   error  // the last append's error, while its text is pending again
	last     byte   // the last byte written (0 before any)

	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

// newStepLog starts a step's log; emit appends one piece of it (a RevisionLogged event).
func newStepLog(emit func(text string) error) *stepLog {
	l := &stepLog{emit: emit, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

// Write takes p into the log.
func (l *stepLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	n := len(p)
	if n > 0 {
		l.last = p[n-1]
	}
	if room := stepLogBudget - l.streamed; room > 0 {
		take := min(room, len(p))
		l.pending = append(l.pending, p[:take]...)
		l.streamed += take
		p = p[take:]
	}
	if len(p) > 0 {
		l.tail = append(l.tail, p...)
		if over := len(l.tail) - maxLogEvent; over > 0 {
			l.cut += over
			l.tail = append(l.tail[:0], l.tail[over:]...)
		}
	}
	full := len(l.pending) >= logChunkBytes
	l.mu.Unlock()
	if full {
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
	return n, nil
}

// run appends what is pending every logFlushInterval, or when a chunk is full, until Close.
func (l *stepLog) run() {
	defer close(l.done)
	t := time.NewTicker(logFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		case <-l.kick:
		}
		_ = l.flush(false)
	}
}

// flush appends what is pending, in chunks of at most logChunkBytes, each cut at a rune's
// boundary (a rune written in two pieces waits for its end, unless final). With final, the
// tail kept past the budget goes too. A failed append puts its text back in front.
func (l *stepLog) flush(final bool) error {
	for {
		l.mu.Lock()
		if final && len(l.tail) > 0 {
			l.pending = fmt.Appendf(l.pending, "[... %d bytes of output cut ...]\n", l.cut)
			l.pending = append(l.pending, l.tail...)
			l.tail, l.cut = nil, 0
		}
		chunk := l.pending[:min(len(l.pending), logChunkBytes)]
		if !final || len(chunk) == logChunkBytes {
			chunk = chunk[:runeBoundary(chunk)]
		}
		if len(chunk) == 0 {
			err := l.failed
			l.mu.Unlock()
			if final {
				return nil
			}
			return err
		}
		l.pending = l.pending[len(chunk):]
		chunk = append([]byte(nil), chunk...)
		l.mu.Unlock()
		if err := l.emit(string(chunk)); err != nil {
			l.mu.Lock()
			l.pending = append(chunk, l.pending...)
			l.failed = err
			l.mu.Unlock()
			return err
		}
		l.mu.Lock()
		l.failed = nil
		l.mu.Unlock()
	}
}

// Close stops the timed appends and appends the rest of the output: the step's log is whole
// in the revision's log once it returns nil.
func (l *stepLog) Close() error {
	close(l.stop)
	<-l.done
	return l.flush(true)
}

// runeBoundary is the length of b's longest prefix that does not end inside a UTF-8 sequence.
func runeBoundary(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// line appends s as a line of its own: after a newline when the output so far does not end
// with one.
func (l *stepLog) line(s string) {
	l.mu.Lock()
	open := l.last != 0 && l.last != '\n'
	l.mu.Unlock()
	if open {
		s = "\n" + s
	}
	_, _ = l.Write([]byte(s + "\n"))
}

// stepOutput is what a step writes its output to: scrubbed of the deployment's secret values,
// then streamed to the revision's log (stepLog).
type stepOutput struct {
	log   *stepLog
	scrub *scrub.Writer
}

// Write takes p into the step's output.
func (o *stepOutput) Write(p []byte) (int, error) { return o.scrub.Write(p) }

// line ends the output with s as its own line (the step's outcome).
func (o *stepOutput) line(s string) {
	_ = o.scrub.Flush()
	o.log.line(o.scrub.String(s))
}

// Close writes what the scrubber held back and closes the log (see stepLog.Close).
func (o *stepOutput) Close() error {
	_ = o.scrub.Flush()
	return o.log.Close()
}
