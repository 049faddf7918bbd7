package runs

import (
	"context"
	"sync"

	"github.com/jetgraph/jetgraph/engine/graph"
)

// results hands the final values of the runs executed in this process to the requests of this
// process that wait for them (/runs/wait), sparing those a read of the thread's state: the
// values a run ended with are what its wait answers, as a reference server answers with the
// run's last values event (the thread's state may already hold what a later run wrote). A
// request registers before it waits and takes what was offered once the run ended; a run
// nobody waits for here leaves nothing behind, and a request whose run executed elsewhere
// finds nothing and reads the state.
//
// A worker marks its run as ending before it appends the run's end, and settles it (offering
// the values or none) once the append answered: a wait that sees the end folded before the
// worker got the append's answer waits for it to settle rather than finding nothing.
type results struct {
	mu     sync.Mutex
	slots  map[string]graph.State   // run id -> its final values; nil until offered
	ending map[string]chan struct{} // run id -> closed when its worker settled the run's end
	// taking, settling and settled, when set (tests, under mu), are called as a wait starts
	// taking its run's values, as a worker starts settling its run's end and once it has: they
	// order the two.
	taking, settling, settled func(run string)
}

// expect registers a wait for run's values.
func (r *results) expect(run string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slots == nil {
		r.slots = map[string]graph.State{}
	}
	if _, ok := r.slots[run]; !ok {
		r.slots[run] = nil
	}
}

// forget ends a wait registered for run that will not take the values (its run was not created).
func (r *results) forget(run string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.slots, run)
}

// end marks run as ending here: its worker is about to append the run's end. settle must follow.
func (r *results) end(run string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ending == nil {
		r.ending = map[string]chan struct{}{}
	}
	r.ending[run] = make(chan struct{})
}

// settle ends what end began: it gives run's final values (nil when it did not succeed, or
// its end was not appended) to a wait registered for them, and releases the waits that were
// waiting for them.
func (r *results) settle(run string, values graph.State) {
	r.hook(&r.settling, run)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.slots[run]; ok && values != nil {
		r.slots[run] = values
	}
	if done, ok := r.ending[run]; ok {
		close(done)
		delete(r.ending, run)
	}
	if f := r.settled; f != nil {
		defer f(run) // after the unlock
	}
}

// take ends the wait for run's values and returns them, nil when none were offered. Called once
// the run's end is seen, it first waits for a worker still settling that end (or for ctx).
func (r *results) take(ctx context.Context, run string) graph.State {
	r.hook(&r.taking, run)
	r.mu.Lock()
	done := r.ending[run]
	r.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.slots[run]
	delete(r.slots, run)
	return v
}

// hook calls the test hook *h, if set.
func (r *results) hook(h *func(string), run string) {
	r.mu.Lock()
	f := *h
	r.mu.Unlock()
	if f != nil {
		f(run)
	}
}
