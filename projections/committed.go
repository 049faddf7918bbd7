package projections

import (
	"sync"
)

// maxCommitted is how many keys each of a committedCache's two generations holds: about the
// threads a busy server has runs on at once.
const maxCommitted = 4096

// committedCache holds, for readers, what the last committed transactions of a projector wrote
// under some keys, as the file has it: a fold stages what it writes (stage, drop, dropAll), and
// the projector's commit publishes it (commit), while its generation is odd still, so that a
// reader that checks the generation (command.Runner) sees the cache and the file agree. A key it
// does not hold is read from the file. Two generations, the older dropped when the newer fills,
// keep it bounded and keep the keys in use.
//
// stage, drop, dropAll and commit are called by the projector's folds only, one at a time; get
// and forget by anyone.
type committedCache[K comparable, V any] struct {
	staged  map[K]*V // nil: gone from the file
	cleared bool     // the transaction emptied the buckets

	mu  sync.RWMutex
	gen [2]map[K]V
}

// stage records that the transaction being applied writes v under k.
func (c *committedCache[K, V]) stage(k K, v V) {
	if c.staged == nil {
		c.staged = map[K]*V{}
	}
	c.staged[k] = &v
}

// drop records that the transaction being applied deletes k (or changes it in a way the cache
// does not follow: a reader then reads the file).
func (c *committedCache[K, V]) drop(k K) {
	if c.staged == nil {
		c.staged = map[K]*V{}
	}
	c.staged[k] = nil
}

// dropAll records that the transaction being applied empties the buckets.
func (c *committedCache[K, V]) dropAll() {
	clear(c.staged)
	c.cleared = true
}

// commit publishes what the transaction staged if it was committed, and forgets it either way.
func (c *committedCache[K, V]) commit(ok bool) {
	if ok && (c.cleared || len(c.staged) > 0) {
		c.mu.Lock()
		if c.cleared {
			c.gen = [2]map[K]V{}
		}
		if c.gen[0] == nil || len(c.gen[0])+len(c.staged) > maxCommitted {
			c.gen[1], c.gen[0] = c.gen[0], make(map[K]V, min(len(c.staged)*2, maxCommitted))
		}
		for k, v := range c.staged {
			delete(c.gen[1], k)
			if v == nil {
				delete(c.gen[0], k)
			} else {
				c.gen[0][k] = *v
			}
		}
		c.mu.Unlock()
	}
	clear(c.staged)
	c.cleared = false
}

// get returns what a recent committed transaction wrote under k, if the cache holds it.
func (c *committedCache[K, V]) get(k K) (V, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.gen[0][k]
	if !ok {
		v, ok = c.gen[1][k]
	}
	return v, ok
}

// forget empties the cache: the buckets are dropped, to be rebuilt.
func (c *committedCache[K, V]) forget() {
	c.mu.Lock()
	c.gen = [2]map[K]V{}
	c.mu.Unlock()
}
