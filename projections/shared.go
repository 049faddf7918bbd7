package projections

import (
	"sync"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// decodedPayloads passes the payloads of a batch's events that two folds read, decoded by the
// first (projections fold a batch one after the other), to the second, which would otherwise
// decode the same JSON again. Both only read what they get. The projector empties it at each
// batch, so it holds at most one batch's payloads; a fold that finds nothing decodes itself.
type decodedPayloads struct {
	// checkpoints: threads (the thread's values) then checkpoints.
	checkpoints decodedOnce[checkpointEvent]
	// created: threads (the run's graph, busy) then runs (the run's record).
	created decodedOnce[createdRun]
	// transitions: threads (a run's end) then runs (its state).
	transitions decodedOnce[runTransition]
}

// reset forgets what the last batch left.
func (d *decodedPayloads) reset() {
	d.checkpoints.reset()
	d.created.reset()
	d.transitions.reset()
}

// checkpointData decodes the payload of checkpoint event e, or takes it from the fold before.
func (d *decodedPayloads) checkpointData(e eventlog.Event, primed *primedPayloads) (checkpointEvent, error) {
	return d.checkpoints.get(e, func(data []byte) (checkpointEvent, error) {
		if cd, ok := primed.take(e.ID); ok && e.Version == eventlog.Upcasts.Current(engine.ThreadCheckpoint) {
			return cd, nil
		}
		var cd checkpointEvent
		err := decodeJSON(data, &cd)
		return cd, err
	})
}

// transition decodes the payload of run event e (started, finished, cancel requested), or takes
// it from the fold before.
func (d *decodedPayloads) transition(e eventlog.Event) (runTransition, error) {
	return d.transitions.get(e, func(data []byte) (runTransition, error) {
		var t runTransition
		err := decodeJSON(data, &t)
		return t, err
	})
}

// runCreated decodes the payload of run_created event e, or takes it from the fold before.
func (d *decodedPayloads) runCreated(e eventlog.Event) (createdRun, error) {
	return d.created.get(e, func(data []byte) (createdRun, error) {
		return decodeCreated(data, e.Aggregate.ID, engine.At(e.Time))
	})
}

// decodedOnce holds payloads of one type, decoded, by event id, until their second reader takes
// them.
type decodedOnce[T any] struct {
	mu sync.Mutex
	m  map[string]*T
}

// get returns e's payload, decoded with decode or taken from the fold before.
func (d *decodedOnce[T]) get(e eventlog.Event, decode func([]byte) (T, error)) (T, error) {
	d.mu.Lock()
	if v, ok := d.m[e.ID]; ok {
		delete(d.m, e.ID)
		d.mu.Unlock()
		return *v, nil
	}
	d.mu.Unlock()
	v, err := decode(e.Data)
	if err != nil {
		return v, err
	}
	d.mu.Lock()
	if d.m == nil {
		d.m = map[string]*T{}
	}
	d.m[e.ID] = &v
	d.mu.Unlock()
	return v, nil
}

func (d *decodedOnce[T]) reset() {
	d.mu.Lock()
	clear(d.m)
	d.mu.Unlock()
}
