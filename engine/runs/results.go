package runs

import (
	"sync"

	"github.com/jetgraph/jetgraph/engine/graph"
)

// results hands the final values of the runs executed in this process to the requests of this
// process that wait for them (/runs/wait), sparing those a read of the thread's state: the
// values a run ended with are what its wait answers, as a reference server answers with the
// run's last values event. A request registers before it waits and takes what was offered
// once the run ended; a run nobody waits for here leaves nothing behind, and a request whose
// run executed elsewhere (or whose values came too late) finds nothing and reads the state.
type results struct {
	mu    sync.Mutex
	slots map[string]graph.State // run id -> its final values; nil until offered
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

// offer gives run's final values to a wait registered for them; without one it does nothing.
func (r *results) offer(run string, values graph.State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.slots[run]; ok && values != nil {
		r.slots[run] = values
	}
}

// take ends the wait for run's values and returns them, nil when none were offered.
func (r *results) take(run string) graph.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.slots[run]
	delete(r.slots, run)
	return v
}
