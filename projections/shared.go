package projections

import (
	"sync"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// decodedCheckpoints passes a checkpoint event's payload, decoded by the first fold of a batch
// that reads it (the threads projection, for the thread's values), to the next (the checkpoints
// projection), which would otherwise decode the same channel values again. Both only read it.
// The projector empties it at each batch, so it holds at most one batch's checkpoints; a fold
// that finds nothing decodes the payload itself.
type decodedCheckpoints struct {
	mu sync.Mutex
	m  map[string]*engine.CheckpointData // by event id
}

// checkpointData decodes e's payload, or takes it from the fold before.
func (d *decodedCheckpoints) checkpointData(e eventlog.Event) (engine.CheckpointData, error) {
	d.mu.Lock()
	if cd, ok := d.m[e.ID]; ok {
		delete(d.m, e.ID)
		d.mu.Unlock()
		return *cd, nil
	}
	d.mu.Unlock()
	var cd engine.CheckpointData
	if err := decodeJSON(e.Data, &cd); err != nil {
		return cd, err
	}
	d.mu.Lock()
	if d.m == nil {
		d.m = map[string]*engine.CheckpointData{}
	}
	d.m[e.ID] = &cd
	d.mu.Unlock()
	return cd, nil
}

// reset forgets what the last batch left.
func (d *decodedCheckpoints) reset() {
	d.mu.Lock()
	clear(d.m)
	d.mu.Unlock()
}
