package hosting

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
)

// The supervisor's tests run a real child process: testdata/fakehost.py speaks the protocol
// with Python's standard library only (the scenarios run the real host with langgraph).

func python(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	return p
}

func startFake(t *testing.T, args ...string) *Host {
	t.Helper()
	cmd := append([]string{python(t), "-u", "testdata/fakehost.py"}, args...)
	h := Start(Config{Language: "python", Command: cmd, Graphs: []string{"g"}, MinBackoff: 50 * time.Millisecond,
		MaxBackoff: 200 * time.Millisecond, StartTimeout: 20 * time.Second, CancelGrace: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(h.Close)
	return h
}

func ready(t *testing.T, h *Host) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
}

type events struct {
	mu  sync.Mutex
	all []graph.Event
}

func (e *events) sink(ev graph.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *events) modes() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.all {
		out = append(out, string(ev.Kind))
	}
	return out
}

func run(ctx context.Context, h *Host, saver graph.Saver, evs *events, input map[string]any) (graph.Result, error) {
	g, err := h.Factory("g")(graph.Config{Configurable: map[string]any{}})
	if err != nil {
		return graph.Result{}, err
	}
	return g.Run(ctx, graph.RunOptions{ThreadID: "t1", Input: input, Saver: saver, Sink: evs.sink})
}

// A run is forwarded to the host; the host's checkpointer calls land in the run's saver (read
// back through it), its events in the run's sink, with a checkpoints event for each put.
func TestHostRun(t *testing.T) {
	h := startFake(t)
	ready(t, h)
	if err := h.Health(); err != nil {
		t.Fatal(err)
	}
	saver := graph.NewMemorySaver()
	var evs events
	res, err := run(context.Background(), h, saver, &evs, map[string]any{"x": "one"})
	if err != nil {
		t.Fatal(err)
	}
	tup, err := saver.Get(context.Background(), graph.Ref{ThreadID: "t1"})
	if err != nil || tup == nil {
		t.Fatalf("stored checkpoint: %v %v", tup, err)
	}
	if tup.Ref.ID != "cp1" || string(tup.Checkpoint.ChannelValues["x"]) != `"one"` || len(tup.Writes) != 1 || tup.Writes[0].Channel != "x" {
		t.Errorf("stored %+v", tup)
	}
	read, _ := res.Values["read"].(map[string]any)
	if cp, _ := read["checkpoint"].(map[string]any); cp["id"] != "cp1" {
		t.Errorf("the host read back %v", res.Values)
	}
	if got := strings.Join(evs.modes(), ","); got != "checkpoints,custom" {
		t.Errorf("events %s", got)
	}
	if _, err := h.Factory("bad")(graph.Config{}); err == nil || err.Error() != "AttributeError: no graph" {
		t.Errorf("a graph the host could not load: %v", err)
	}
}

// A host that dies mid-run is started again and the run goes on in it; a run that kills its
// host every time fails as unavailable after hostAttempts hosts.
func TestHostRestartsAfterCrash(t *testing.T) {
	h := startFake(t)
	ready(t, h)
	marker := filepath.Join(t.TempDir(), "crashed")
	res, err := run(context.Background(), h, graph.NewMemorySaver(), &events{}, map[string]any{"crash_once": marker, "x": "again"})
	if err != nil {
		t.Fatalf("a run whose host died once: %v", err)
	}
	if h.Restarts() != 1 {
		t.Errorf("restarts %d, want 1", h.Restarts())
	}
	if read, _ := res.Values["read"].(map[string]any); read == nil {
		t.Errorf("the run after the restart answered %v", res.Values)
	}
	_, err = run(context.Background(), h, graph.NewMemorySaver(), &events{}, map[string]any{"crash": true})
	if !engine.Is(engine.Unavailable, err) {
		t.Fatalf("a run that kills its host: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for h.Restarts() < 1+hostAttempts && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := h.Restarts(); got != 1+hostAttempts {
		t.Errorf("restarts %d, want %d", got, 1+hostAttempts)
	}
	ready(t, h)
	if _, err := run(context.Background(), h, graph.NewMemorySaver(), &events{}, map[string]any{"x": 1}); err != nil {
		t.Fatal(err)
	}
}

// Cancelling a run's context cancels it in the host, promptly.
func TestHostCancel(t *testing.T) {
	h := startFake(t)
	ready(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := run(ctx, h, graph.NewMemorySaver(), &events{}, map[string]any{"sleep": true})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled run: %v", err)
	}
	if _, err := run(context.Background(), h, graph.NewMemorySaver(), &events{}, map[string]any{"x": 1}); err != nil {
		t.Fatal(err)
	}
}

// A host that cannot start says why in the health (its last output), is tried again with
// backoff, and its runs fail as unavailable instead of waiting forever.
func TestHostFailsToStart(t *testing.T) {
	cmd := []string{python(t), "-c", "import sys; print('cannot import langgraph', file=sys.stderr); sys.exit(3)"}
	h := Start(Config{Language: "python", Command: cmd, Graphs: []string{"g"}, MinBackoff: 20 * time.Millisecond,
		MaxBackoff: 50 * time.Millisecond, StartTimeout: time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer h.Close()
	deadline := time.Now().Add(20 * time.Second)
	for h.Restarts() < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	err := h.Health()
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "cannot import langgraph") ||
		!strings.Contains(err.Error(), "python host (graphs g)") {
		t.Errorf("health %v", err)
	}
	// Generous: the run must fail by itself, as unavailable, once a start would have ended
	// (StartTimeout), long before this ends it.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := run(ctx, h, graph.NewMemorySaver(), &events{}, nil); !engine.Is(engine.Unavailable, err) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a run without a host: %v (want unavailable by itself, not at its deadline)", err)
	}
}

// A host of another protocol version is refused.
func TestHostProtocolVersion(t *testing.T) {
	h := startFake(t, "9")
	deadline := time.Now().Add(20 * time.Second)
	for h.Restarts() < 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := h.Health(); err == nil || !strings.Contains(err.Error(), "the host speaks protocol 9, jetgraph speaks 1") {
		t.Errorf("health %v", err)
	}
}

// A pool sends a request to its least busy host: two runs in flight are on two hosts.
func TestPoolSpreadsRuns(t *testing.T) {
	a, b := startFake(t), startFake(t)
	ready(t, a)
	ready(t, b)
	pool := NewPool(a, b)
	g, err := pool.Factory("g")(graph.Config{Configurable: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for want := 1; want <= 2; want++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = g.Run(ctx, graph.RunOptions{ThreadID: "t", Input: map[string]any{"sleep": true}, Saver: graph.NewMemorySaver()})
		}()
		deadline := time.Now().Add(10 * time.Second)
		for busy(a)+busy(b) < want && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if busy(a) != 1 || busy(b) != 1 {
		t.Errorf("in flight: %d and %d, want 1 and 1", busy(a), busy(b))
	}
	cancel()
	wg.Wait()
}

func busy(h *Host) int {
	n, _ := h.inFlight()
	return n
}
