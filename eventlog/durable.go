package eventlog

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// groupSync makes the embedded server's files durable for --sync always, one fsync round for
// every append that waits at once (a group commit), instead of the server's fsync of every
// message under its stream's lock, which serialises all concurrent runs behind the disk.
//
// It is used only while the embedded server has no client but this process (no --nats-listen),
// because only this process's appends wait for it: the server then writes every message to its
// file before acknowledging it (a single-node file store flushes in place), and an append
// returns only after a round that began after its acknowledgement has synced every file and
// folder of the store that changed since the round before. Nothing acknowledged to a caller is
// therefore in the page cache alone, as with the server's own sync.
type groupSync struct {
	dir   string
	mu    sync.Mutex
	next  *syncRound // the round that appends waiting now will be in
	kick  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	since time.Time // start of the last round that synced: files older were synced then

	rounds atomic.Uint64
}

// syncRound is one fsync of the store; done closes when it ends, with err.
type syncRound struct {
	done chan struct{}
	err  error
}

// recentSlack covers file times coarser than the clock: a file changed just before a round
// began may carry a time a little before it.
const recentSlack = time.Second

var errLogClosed = errors.New("eventlog: closed before the append was synced to disk")

func newGroupSync(dir string) *groupSync {
	g := &groupSync{dir: dir, next: &syncRound{done: make(chan struct{})}, kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	go g.loop()
	return g
}

// wait returns once everything written to the store before it was called is on disk.
func (g *groupSync) wait(ctx context.Context) error {
	g.mu.Lock()
	r := g.next
	g.mu.Unlock()
	select {
	case g.kick <- struct{}{}:
	default: // a round is asked for already; it takes r or is r
	}
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *groupSync) loop() {
	defer close(g.done)
	for {
		select {
		case <-g.stop:
			g.mu.Lock()
			r := g.next
			g.mu.Unlock()
			r.err = errLogClosed
			close(r.done)
			return
		case <-g.kick:
		}
		g.mu.Lock()
		r := g.next
		g.next = &syncRound{done: make(chan struct{})}
		g.mu.Unlock()
		start := time.Now()
		r.err = g.syncChanged()
		if r.err == nil {
			g.since = start
		}
		g.rounds.Add(1)
		close(r.done)
	}
}

// syncChanged fsyncs every file and folder of the store changed since the last round.
func (g *groupSync) syncChanged() error {
	after := g.since.Add(-recentSlack)
	return filepath.WalkDir(g.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile (a compacted block, a temporary file)
			}
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !g.since.IsZero() && info.ModTime().Before(after) {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		err = f.Sync()
		_ = f.Close()
		return err
	})
}

// close ends the loop; appends still waiting fail.
func (g *groupSync) close() {
	close(g.stop)
	<-g.done
}
