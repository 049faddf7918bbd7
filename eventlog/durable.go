package eventlog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// groupSync makes the embedded server's files durable for --sync always, one fsync round for
// every append that waits at once (a group commit), instead of the server's fsync of every
// message under its stream's lock, which serialises all concurrent runs behind the disk.
//
// The server writes every message to its file before acknowledging it (a single-node file
// store flushes in place), and an append returns only after a round that began after its
// acknowledgement has synced every file and folder of the store that changed since the round
// before. Nothing acknowledged to a caller is therefore in the page cache alone, as with the
// server's own sync.
//
// That holds only for clients that wait for the rounds, so it is used only while every client
// the embedded server admits does: with no listener (this process alone), or with the control
// plane's own listener (Config.JetgraphListener), whose clients are jetgraph processes, the
// deployments' and the commands'. They ask for a round on syncSubject after each append
// (remoteSync), which this process answers once a round begun after the request has synced
// (serveSyncs); the listener refuses clients whose connection name does not say they wait
// (syncRoundsName). A listener for other programs (--nats-listen) keeps the server's own sync
// of every write.
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

// syncSubject is where a jetgraph process connected to another's embedded server asks for a
// sync round; every deployment's account imports it from the global account.
const syncSubject = "$JG.SYNC"

// syncRoundsName ends the connection name of every client that waits for the sync rounds
// after its appends: the control plane's listener admits no other while the store is synced
// in rounds.
const syncRoundsName = " (waits for sync rounds)"

// syncTimeout bounds the wait for one round asked by another process.
const syncTimeout = 10 * time.Second

// serveSyncs answers the sync rounds asked on syncSubject, from this process's account and
// every deployment's (AddAccount imports it): an empty answer once a round begun after the
// request has synced the store, the error's text if it failed.
func (l *Log) serveSyncs(nc *nats.Conn) error {
	if err := l.srv.GlobalAccount().AddServiceExport(syncSubject, nil); err != nil {
		return fmt.Errorf("eventlog: export the sync rounds: %w", err)
	}
	_, err := nc.Subscribe(syncSubject, func(m *nats.Msg) {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), syncTimeout)
			defer cancel()
			var answer []byte
			if err := l.durable.wait(ctx); err != nil {
				answer = []byte(err.Error())
			}
			_ = m.Respond(answer) // a requester gone has given the append up
		}()
	})
	if err == nil {
		err = nc.Flush()
	}
	if err != nil {
		return fmt.Errorf("eventlog: serve the sync rounds: %w", err)
	}
	return nil
}

// remoteSync is the wait for the sync rounds of the server a log connected to URLs uses, when
// that server is a jetgraph process's embedded server that syncs in rounds. Whether it does is
// asked once per server connected to (its id): a server that answers is waited for after every
// append; one with no responder (an external NATS, or an embedded server that syncs each write
// itself or not at all) is not asked again until the connection moves to another. The first
// append on a connection asks.
type remoteSync struct {
	nc *nats.Conn

	mu     sync.Mutex
	server string // the server id the answer below is about
	rounds bool   // that server answers on syncSubject
}

// wait returns once what this process appended so far is on disk, as far as its server says.
func (r *remoteSync) wait(ctx context.Context) error {
	id := r.nc.ConnectedServerId()
	r.mu.Lock()
	known, rounds := id != "" && id == r.server, r.rounds
	r.mu.Unlock()
	if known && !rounds {
		return nil
	}
	ctx, cancel := withDefaultTimeout(ctx, syncTimeout)
	defer cancel()
	m, err := r.nc.RequestWithContext(ctx, syncSubject, nil)
	switch {
	case errors.Is(err, nats.ErrNoResponders) && !known:
		r.learn(id, false)
		return nil
	case err != nil:
		// A server known to sync in rounds that does not answer now (stopping, restarting)
		// leaves the append unconfirmed: the caller sends it again (its id stores it once).
		return fmt.Errorf("eventlog: wait for the sync round: %w", err)
	case len(m.Data) > 0:
		return fmt.Errorf("eventlog: sync round: %s", m.Data)
	}
	r.learn(id, true)
	return nil
}

func (r *remoteSync) learn(server string, rounds bool) {
	r.mu.Lock()
	r.server, r.rounds = server, rounds
	r.mu.Unlock()
}

// syncedBy is synced, waiting until the time until at most.
func (l *Log) syncedBy(ctx context.Context, until time.Time) error {
	if l.durable == nil && l.remote == nil {
		return nil
	}
	ctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	return l.synced(ctx)
}

// synced returns once everything this process appended so far is on disk, with --sync always
// where the log's server syncs in rounds (the embedded one, or another process's it is
// connected to); at once otherwise.

func (l *Log) synced(ctx context.Context) error {
	switch {
	case l.durable != nil:
		return l.durable.wait(ctx)
	case l.remote != nil:
		return l.remote.wait(ctx)
	}
	return nil
}

// SyncRounds is the number of sync rounds the store has had (--sync always, where it syncs in
// rounds: see groupSync), for tests and benchmarks that count them; 0 otherwise.
func (l *Log) SyncRounds() uint64 {
	if l.durable == nil {
		return 0
	}
	return l.durable.rounds.Load()
}
