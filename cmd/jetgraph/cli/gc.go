package cli

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// serveGCPercent is the garbage collector's target of a serving process, unless GOGC says
// otherwise. The server allocates fast (every event is encoded, stored and folded) over a live
// heap of tens of megabytes: at Go's default of 100 the collector took about a tenth of its CPU
// under load. Three times the live heap buys most of that back.
const serveGCPercent = 300

// serveMemoryLimit is the least soft memory limit of a serving process, unless GOMEMLIMIT says
// otherwise. At serveGCPercent alone a burst of large requests (68 MiB bodies, 16 MiB inputs
// copied while they are decoded, encoded and stored) let the heap grow to four times its peak,
// and what the peak left stayed with the process for minutes. Under the limit the collector
// runs before the heap reaches it and the runtime gives what it frees back to the system.
const serveMemoryLimit = 512 << 20

// liveHeapHeadroom is how many times the live heap the memory limit follows (memoryLimitFor).
// The live heap grows with what the process holds for good, the embedded NATS server's index
// of the subjects it stores above all (about 1 KB per thread): under a fixed limit the
// collector would run ever more often as it nears the limit, and past it without end. Twice the
// live heap leaves the collector at least Go's default headroom, however large the heap grows.
const liveHeapHeadroom = 2

// memoryLimitInterval is how often the memory limit follows the live heap.
const memoryLimitInterval = 10 * time.Second

// memoryLimitWindow is how many samples of the live heap, memoryLimitInterval apart, the limit
// follows the least of: a burst of large requests, which holds its bodies live for seconds, does
// not raise it; a live heap that grows for good raises it two minutes later.
const memoryLimitWindow = 12

// memoryLimitFor is the soft memory limit for a live heap of live bytes: serveMemoryLimit, or
// liveHeapHeadroom times the live heap once that is more.
func memoryLimitFor(live uint64) int64 {
	return max(serveMemoryLimit, int64(min(live, 1<<61))*liveHeapHeadroom)
}

// liveWindow holds the last samples of the live heap.
type liveWindow struct {
	samples []uint64
}

// add records a sample and returns the least of the last memoryLimitWindow.
func (w *liveWindow) add(live uint64) uint64 {
	if len(w.samples) == memoryLimitWindow {
		w.samples = w.samples[1:]
	}
	w.samples = append(w.samples, live)
	least := live
	for _, s := range w.samples {
		least = min(least, s)
	}
	return least
}

// liveHeap reads the heap that the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// tuneGC sets the collector's target for serving, unless GOGC is set, and the memory limit,
// which then follows the least live heap of the last two minutes (memoryLimitFor, liveWindow)
// until ctx ends, unless GOMEMLIMIT is set.
func tuneGC(ctx context.Context) {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(serveGCPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	var window liveWindow
	limit := memoryLimitFor(window.add(liveHeap()))
	debug.SetMemoryLimit(limit)
	go func() {
		tick := time.NewTicker(memoryLimitInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if l := memoryLimitFor(window.add(liveHeap())); l != limit {
					limit = l
					debug.SetMemoryLimit(limit)
				}
			}
		}
	}()
}
