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
