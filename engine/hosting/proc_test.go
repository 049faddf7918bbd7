package hosting

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

// TestProcSkipsAnExitedHost: a process that exited and that the supervisor has not taken down
// yet is not handed to a request, which would fail without reaching a host (and a run would
// count it as a host it killed, giving up after fewer hosts than hostAttempts); the request gets
// the process that replaces it.
func TestProcSkipsAnExitedHost(t *testing.T) {
	ready := make(chan struct{})
	close(ready)
	dead := &proc{dead: true, exited: make(chan struct{}), replaced: make(chan struct{})}
	close(dead.exited)
	h := &Host{cfg: Config{Language: "python", StartTimeout: time.Minute}, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		cur: dead, ready: ready}
	next := &proc{replaced: make(chan struct{})}
	go func() {
		// The supervisor takes the dead process down, then starts the next one.
		h.mu.Lock()
		h.cur, h.ready = nil, make(chan struct{})
		started := h.ready
		h.mu.Unlock()
		close(dead.replaced)
		h.mu.Lock()
		h.cur = next
		close(started)
		h.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := h.proc(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p != next {
		t.Fatal("proc offered the process that had exited")
	}
}
