package cli

import (
	"runtime"
	"testing"
)

// TestMemoryLimitFollowsTheLiveHeap: the soft limit is serveMemoryLimit for a small live heap
// and twice the live heap past half of it, so that a heap that grows for good never leaves the
// collector without headroom.
func TestMemoryLimitFollowsTheLiveHeap(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, serveMemoryLimit},
		{100 << 20, serveMemoryLimit},
		{256 << 20, serveMemoryLimit},
		{300 << 20, 600 << 20},
		{4 << 30, 8 << 30},
		{^uint64(0), 1 << 62},
	} {
		if got := memoryLimitFor(c.live); got != c.want {
			t.Errorf("memoryLimitFor(%d MiB) = %d MiB, want %d MiB", c.live>>20, got>>20, c.want>>20)
		}
	}
}

// TestLiveHeapIsRead: the runtime metric the limit follows is there and counts this heap.
func TestLiveHeapIsRead(t *testing.T) {
	keep := make([]byte, 8<<20)
	runtime.GC()
	if live := liveHeap(); live < 8<<20 {
		t.Errorf("live heap %d bytes after keeping 8 MiB", live)
	}
	runtime.KeepAlive(keep)
}

// TestLiveWindowIgnoresBursts: the limit follows the least live heap of the window, so a burst
// shorter than the window leaves it, a heap that stays up raises it once the window is past, and
// one that falls lowers it at once.
func TestLiveWindowIgnoresBursts(t *testing.T) {
	var w liveWindow
	phase := func(name string, live uint64, n int, want uint64) {
		t.Helper()
		var got uint64
		for range n {
			got = w.add(live)
		}
		if got != want {
			t.Errorf("%s: least live heap %d, want %d", name, got, want)
		}
	}
	phase("steady", 100, memoryLimitWindow, 100)
	phase("a burst", 900, 3, 100)
	phase("grown for good, within the window", 400, memoryLimitWindow-4, 100)
	phase("grown for good, past the window", 400, 1, 400)
	phase("fallen", 50, 1, 50)
}
