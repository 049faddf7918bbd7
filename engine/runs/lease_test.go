package runs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/eventlog"
)

// The worker's decisions about leases and dispatch messages, through the interfaces it owns,
// without JetStream: eventlog's tests cover eventlog.Leases and eventlog.DispatchQueue, and the
// end-to-end tests of this package (runs_test.go) both together.

// memLeases is a leaseStore in memory: holders by key, a revision per write, and what Renew
// answers when a test decides it (renew: nil for the real thing).
type memLeases struct {
	mu      sync.Mutex
	holder  map[string]string
	rev     map[string]uint64
	renew   func(attempt int) error
	renewed chan uint64 // the revision of each successful renewal
	tries   int
}

func newMemLeases() *memLeases {
	return &memLeases{holder: map[string]string{}, rev: map[string]uint64{}, renewed: make(chan uint64, 100)}
}

func (m *memLeases) Acquire(_ context.Context, key, holder string) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.holder[key]; ok {
		return 0, fmt.Errorf("lease of %s: %w", key, eventlog.ErrLeaseHeld)
	}
	m.holder[key] = holder
	m.rev[key]++
	return m.rev[key], nil
}

func (m *memLeases) Renew(_ context.Context, key, holder string, rev uint64) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tries++
	if m.renew != nil {
		if err := m.renew(m.tries); err != nil {
			return 0, err
		}
	}
	switch {
	case m.holder[key] == "":
		return 0, eventlog.ErrLeaseGone
	case m.holder[key] != holder || m.rev[key] != rev:
		return 0, eventlog.ErrLeaseHeld
	}
	m.rev[key]++
	m.renewed <- m.rev[key]
	return m.rev[key], nil
}

func (m *memLeases) Release(_ context.Context, key string, rev uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rev[key] == rev {
		delete(m.holder, key)
	}
	return nil
}

func (m *memLeases) attempts() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tries
}

// leaseService is a Service with only what its lease decisions use.
func leaseService(leases leaseStore) *Service {
	return &Service{cfg: Config{Worker: "w1", LeaseTTL: 30 * time.Millisecond, AckWait: time.Second},
		leases: leases, logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// TestLeaseKeepDecides checks when a worker gives its run up: at once when its lease was taken
// over or expired, only past the lease's life when renewals fail for another reason (the log is
// unreachable: the lease may still be held), and never while renewals succeed.
func TestLeaseKeepDecides(t *testing.T) {
	errUnreachable := errors.New("no responders")
	tests := []struct {
		name string
		// renew answers the n-th renewal (1-based); steal takes the lease from the worker
		// once it holds it, expire drops it.
		renew         func(n int) error
		steal, expire bool
		ttl           time.Duration
		// tries: renewals tried before the decision (at least, with atLeast).
		tries     int
		atLeast   bool
		cancelled bool
	}{
		{name: "taken over", steal: true, tries: 1, cancelled: true},
		{name: "expired", expire: true, tries: 1, cancelled: true},
		// Not at the first failure: the lease may still be the worker's.
		{name: "log unreachable", renew: func(int) error { return errUnreachable }, ttl: 300 * time.Millisecond,
			tries: 2, atLeast: true, cancelled: true},
		{name: "renewed", tries: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			leases := newMemLeases()
			s := leaseService(leases)
			if tc.ttl > 0 {
				s.cfg.LeaseTTL = tc.ttl
			}
			l, err := s.acquire(context.Background(), "default", "t1")
			if err != nil {
				t.Fatal(err)
			}
			leases.renew = tc.renew
			switch {
			case tc.steal:
				leases.holder[l.key] = "w2"
			case tc.expire:
				delete(leases.holder, l.key)
			}
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			runCtx, cancel := context.WithCancelCause(ctx)
			done := make(chan struct{})
			go func() { defer close(done); l.keep(runCtx, cancel) }()
			if !tc.cancelled {
				for range tc.tries {
					<-leases.renewed
				}
				stop()
			}
			<-done
			if got := errors.Is(context.Cause(runCtx), errLeaseLost); got != tc.cancelled {
				t.Fatalf("run cancelled for a lost lease: %v, want %v (cause %v)", got, tc.cancelled, context.Cause(runCtx))
			}
			n := leases.attempts()
			if n < tc.tries || n > tc.tries && !tc.atLeast && tc.cancelled {
				t.Fatalf("%d renewals tried before the decision, want %d", n, tc.tries)
			}
			if !tc.cancelled && l.rev.Load() != leases.rev[l.key] {
				t.Fatalf("the lease's revision is %d, the store's %d", l.rev.Load(), leases.rev[l.key])
			}
		})
	}
}

// memDelivery is a dispatch message in memory: it records how the worker settled it.
type memDelivery struct {
	subject string
	settled []string
}

func (d *memDelivery) Subject() string           { return d.subject }
func (d *memDelivery) Seq() (uint64, error)      { return 1, nil }
func (d *memDelivery) Ack() error                { return d.settle("ack") }
func (d *memDelivery) Nak(t time.Duration) error { return d.settle("nak " + t.String()) }
func (d *memDelivery) InProgress() error         { return nil }
func (d *memDelivery) Term() error               { return d.settle("term") }
func (d *memDelivery) settle(how string) error {
	d.settled = append(d.settled, how)
	return nil
}

// TestDispatchWithoutLease checks how a worker settles dispatch messages it cannot work on: one
// that names no thread is dropped, one whose thread another worker drains is asked for again
// soon (that worker may finish first), and neither is acknowledged.
func TestDispatchWithoutLease(t *testing.T) {
	leases := newMemLeases()
	if _, err := leases.Acquire(context.Background(), "default.t1", "w2"); err != nil {
		t.Fatal(err)
	}
	s := leaseService(leases)
	tests := []struct {
		subject string
		want    string
	}{
		{"thread.default.t1.run_created", "nak 250ms"},
		{"assistant.default.a1.created", "term"},
		{"thread.default.t1", "term"},
	}
	for _, tc := range tests {
		d := &memDelivery{subject: tc.subject}
		s.handle(context.Background(), d)
		if len(d.settled) != 1 || d.settled[0] != tc.want {
			t.Errorf("%s settled %v, want [%s]", tc.subject, d.settled, tc.want)
		}
	}
	if leases.holder["default.t1"] != "w2" {
		t.Errorf("the lease is %q's, want w2's still", leases.holder["default.t1"])
	}
}
