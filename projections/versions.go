package projections

import (
	"sync"

	"github.com/jetgraph/jetgraph/eventlog"
)

// maxCachedVersions is how many aggregates' versions each of versionCache's two generations
// holds: about the threads a busy server has runs on at once.
const maxCachedVersions = 4096

// versionCache holds the versions the projector's last committed transactions wrote, which are
// the file's (the projector is the only writer of its versions bucket): two generations, the
// older dropped when the newer fills, so it stays bounded and keeps the aggregates in use.
type versionCache struct {
	mu  sync.RWMutex
	gen [2]map[eventlog.Aggregate]uint64
}

// keep records the versions a committed transaction wrote.
func (c *versionCache) keep(written map[eventlog.Aggregate]uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen[0] == nil || len(c.gen[0])+len(written) > maxCachedVersions {
		c.gen[1], c.gen[0] = c.gen[0], make(map[eventlog.Aggregate]uint64, maxCachedVersions)
	}
	for agg, v := range written {
		c.gen[0][agg] = v
		delete(c.gen[1], agg)
	}
}

// get returns the version of agg, if a recent transaction wrote it.
func (c *versionCache) get(agg eventlog.Aggregate) (uint64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.gen[0][agg]
	if !ok {
		v, ok = c.gen[1][agg]
	}
	return v, ok
}

// forget empties the cache: the versions are being rebuilt.
func (c *versionCache) forget() {
	c.mu.Lock()
	c.gen = [2]map[eventlog.Aggregate]uint64{}
	c.mu.Unlock()
}
