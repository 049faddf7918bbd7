package command_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/command"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
	"github.com/jetgraph/jetgraph/projections/projectionstest"
	"go.etcd.io/bbolt"
)

// TestRefusalIsDecidedAgainOnceCaughtUp: a command refused on state (Conflict, Exists) is
// decided again once the local projection has caught up with the log, so that it does not
// refuse on what another process already changed. The projection is made to lag: after its
// first batch it waits until the first decision has been made.
func TestRefusalIsDecidedAgainOnceCaughtUp(t *testing.T) {
	for _, kind := range []engine.Kind{engine.Conflict, engine.Exists} {
		t.Run(kind.String(), func(t *testing.T) {
			ctx := context.Background()
			l := eventlogtest.Open(t)
			db, err := projections.OpenDB(filepath.Join(t.TempDir(), "p.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			threads := projections.NewThreads(db)
			p := projections.NewProjector(db, l, eventlog.RuntimeStream, threads)
			release := make(chan struct{})
			var held atomic.Bool
			p.OnApply = func(int, time.Duration) {
				if held.CompareAndSwap(false, true) {
					<-release
				}
			}
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); _ = p.Run(runCtx) }()
			t.Cleanup(func() { cancel(); <-done })
			var once sync.Once
			free := func() { once.Do(func() { close(release) }) }
			t.Cleanup(free) // (first: the projector may be waiting)

			created := func(id string) uint64 {
				e, err := eventlog.New(eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: id}, engine.ThreadCreated, engine.ThreadCreatedData{})
				if err != nil {
					t.Fatal(err)
				}
				seq, err := l.Append(ctx, e, eventlog.Any)
				if err != nil {
					t.Fatal(err)
				}
				return seq
			}
			// The first batch is applied at once; the projector then waits, and what another
			// process appends meanwhile is not in the projection yet.
			if err := p.WaitFor(ctx, created("first")); err != nil {
				t.Fatal(err)
			}
			created("elsewhere")

			r := &command.Runner{Log: l, Projector: p}
			decisions := 0
			_, err = r.Append(ctx, "test", func() (command.Decision, error) {
				decisions++
				if decisions == 1 {
					defer free()
				}
				if _, ok, err := threads.Get("default", "elsewhere"); err != nil || !ok {
					return nil, engine.E(engine.Op("test"), kind, "not there yet")
				}
				return nil, nil
			})
			if err != nil || decisions != 2 {
				t.Fatalf("after %d decisions: %v (want the second, caught up, to pass)", decisions, err)
			}
		})
	}
}

// heldFold is a projection whose fold of the thread "held" signals folding and then waits until
// release is closed: a fold in progress, for as long as a test needs.
type heldFold struct {
	folding chan struct{}
	release chan struct{}
	once    sync.Once
}

// free lets the held fold go on.
func (h *heldFold) free() { h.once.Do(func() { close(h.release) }) }

func (h *heldFold) Name() string      { return "held" }
func (h *heldFold) Buckets() []string { return nil }
func (h *heldFold) Apply(_ *bbolt.Tx, e eventlog.Event) error {
	if e.Aggregate.ID == "held" {
		close(h.folding)
		<-h.release
	}
	return nil
}

// commandFixture is a runtime log with a projector of threads and a heldFold.
func commandFixture(t *testing.T) (*eventlog.Log, *projections.Projector, *heldFold) {
	t.Helper()
	l := eventlogtest.Open(t)
	db := projectionstest.OpenDB(t, filepath.Join(t.TempDir(), "p.db"))
	held := &heldFold{folding: make(chan struct{}), release: make(chan struct{})}
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, projections.NewThreads(db), held)
	projectionstest.Run(t, p)
	t.Cleanup(held.free) // (first: the fold may be held)
	return l, p, held
}

func threadCreated(t *testing.T, l *eventlog.Log, id string) uint64 {
	t.Helper()
	return eventlogtest.Append(t, l, threadAgg(id), engine.ThreadCreated, engine.ThreadCreatedData{})
}

func threadAgg(id string) eventlog.Aggregate {
	return eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: id}
}

// TestDecisionIsNotHeldByAFold: a command decides and appends while the projector folds a batch:
// a fold changes nothing its reads see until the commit. Under load the batches fold back to
// back, and a command that waited for a fold to end starved (503 "The projections kept
// changing", 11 of 9,000 requests in one A/B run of issue 28).
func TestDecisionIsNotHeldByAFold(t *testing.T) {
	ctx := context.Background()
	l, p, held := commandFixture(t)
	threadCreated(t, l, "held")
	<-held.folding

	r := &command.Runner{Log: l, Projector: p}
	seq, err := r.Append(ctx, "test", func() (command.Decision, error) {
		return r.One("test", threadAgg("next"), engine.ThreadCreated, engine.ThreadCreatedData{})
	})
	if err != nil || seq == 0 {
		t.Fatalf("a command decided during a fold: seq %d, %v (want it appended)", seq, err)
	}
	held.free()
	if err := p.WaitFor(ctx, seq); err != nil {
		t.Fatal(err)
	}
}

// TestDecisionTornByACommitIsDecidedAgain: a decision whose reads straddle a commit is made
// again, so that no command decides on a record older than the version its append expects.
func TestDecisionTornByACommitIsDecidedAgain(t *testing.T) {
	ctx := context.Background()
	l, p, held := commandFixture(t)
	held.free()
	r := &command.Runner{Log: l, Projector: p}
	decisions := 0
	_, err := r.Run(ctx, "test", func() (command.Decision, error) {
		decisions++
		if decisions == 1 {
			// A commit between this decision's first read and its last.
			if err := p.WaitFor(ctx, threadCreated(t, l, "between")); err != nil {
				return nil, err
			}
		}
		return r.One("test", threadAgg("next"), engine.ThreadCreated, engine.ThreadCreatedData{})
	})
	if err != nil || decisions != 2 {
		t.Fatalf("after %d decisions: %v (want the torn first one made again)", decisions, err)
	}
}
