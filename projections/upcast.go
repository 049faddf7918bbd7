package projections

import (
	"slices"

	"github.com/jetgraph/jetgraph/eventlog"
)

// upcast returns batch with every event in the current version of its type (see
// eventlog.Upcasters), and by index why an event could not be brought there (nil when every one
// was). The batch read from the log is left as it is: a copy is made once an event changes. A
// refused event halts the projection at it (see applyTx): it is never folded in a form the
// folds do not read, nor skipped.
func (p *Projector) upcast(batch []eventlog.Event) ([]eventlog.Event, []error) {
	u := p.Upcasters
	if u == nil {
		u = eventlog.Upcasts
	}
	var refused []error
	copied := false
	for i, e := range batch {
		up, err := u.Upcast(e)
		switch {
		case err != nil:
			if refused == nil {
				refused = make([]error, len(batch))
			}
			refused[i] = err
		case up.Version != e.Version:
			if !copied {
				batch, copied = slices.Clone(batch), true
			}
			batch[i] = up
		}
	}
	return batch, refused
}

// joinRefused is the refusals of two batches of n and m events, one after the other.
func joinRefused(a []error, n int, b []error, m int) []error {
	if a == nil && b == nil {
		return nil
	}
	out := make([]error, n+m)
	copy(out, a)
	copy(out[n:], b)
	return out
}
