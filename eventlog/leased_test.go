package eventlog_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// leasedWork is one kind of leased work, on two processes' logs of one server: a holds it,
// b tries to take it over.
type leasedWork struct {
	name string
	// hold makes a hold the work under ctx.
	hold func(t *testing.T, ctx context.Context, a *eventlog.Log) *eventlog.Held
	// take tries once to take the work over on b, and reports whether it did.
	take func(t *testing.T, ctx context.Context, b *eventlog.Log) bool
}

// leaseTTL is the TTL (and AckWait) of the leased work of these tests: long enough that the
// renewals of a loaded machine come in time, short enough to watch it expire.
const leaseTTL = 2 * time.Second

func leasedKinds() []leasedWork {
	return []leasedWork{
		{
			name: "key",
			hold: func(t *testing.T, ctx context.Context, a *eventlog.Log) *eventlog.Held {
				leases, err := a.OpenLeases(ctx, "TEST_HELD", leaseTTL)
				if err != nil {
					t.Fatal(err)
				}
				h, err := leases.Hold(ctx, "default.t1", "a")
				if err != nil {
					t.Fatal(err)
				}
				return h
			},
			take: func(t *testing.T, ctx context.Context, b *eventlog.Log) bool {
				leases, err := b.OpenLeases(ctx, "TEST_HELD", leaseTTL)
				if err != nil {
					t.Fatal(err)
				}
				_, err = leases.Acquire(ctx, "default.t1", "b")
				if err != nil && !errors.Is(err, eventlog.ErrLeaseHeld) {
					t.Fatal(err)
				}
				return err == nil
			},
		},
		{
			name: "dispatch",
			hold: func(t *testing.T, ctx context.Context, a *eventlog.Log) *eventlog.Held {
				q := openHeldQueue(t, ctx, a)
				if _, err := a.Append(ctx, mustEvent(t, thread("a"), "run_created", nil), eventlog.Any); err != nil {
					t.Fatal(err)
				}
				msgs, err := q.Fetch(ctx, 1, 10*time.Second)
				if err != nil || len(msgs) != 1 {
					t.Fatalf("Fetch = %d messages, %v", len(msgs), err)
				}
				h, err := q.Hold(ctx, msgs...)
				if err != nil {
					t.Fatal(err)
				}
				return h
			},
			take: takeDispatch,
		},
		{
			// A pulled message's delivery time is not known: Hold confirms it in progress first.
			name: "pulled dispatch",
			hold: func(t *testing.T, ctx context.Context, a *eventlog.Log) *eventlog.Held {
				q := openHeldQueue(t, ctx, a)
				if _, err := a.Append(ctx, mustEvent(t, thread("a"), "run_created", nil), eventlog.Any); err != nil {
					t.Fatal(err)
				}
				pull, err := q.Pull(1)
				if err != nil {
					t.Fatal(err)
				}
				defer pull.Stop()
				msg, err := pull.Next()
				if err != nil {
					t.Fatal(err)
				}
				h, err := q.Hold(ctx, msg)
				if err != nil {
					t.Fatal(err)
				}
				return h
			},
			take: takeDispatch,
		},
	}
}

// takeDispatch tries once to read a message of the queue on b.
func takeDispatch(t *testing.T, ctx context.Context, b *eventlog.Log) bool {
	msgs, err := openHeldQueue(t, ctx, b).Fetch(ctx, 1, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	return len(msgs) > 0
}

func openHeldQueue(t *testing.T, ctx context.Context, l *eventlog.Log) *eventlog.DispatchQueue {
	t.Helper()
	q, err := l.OpenDispatch(ctx, eventlog.DispatchConfig{Name: "TEST_HELD", Filter: "thread.*.*.run_created", AckWait: leaseTTL})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestHeldIsKept checks that renewals keep leased work for several TTLs (nobody takes it over,
// its Context lives), and that a key lease released is free at once.
func TestHeldIsKept(t *testing.T) {
	for _, kind := range leasedKinds() {
		t.Run(kind.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			url := eventlogtest.Server(t)
			a, b := eventlogtest.OpenURLs(t, url, 1), eventlogtest.OpenURLs(t, url, 1)
			h := kind.hold(t, ctx, a)
			end := time.Now().Add(3 * leaseTTL)
			for time.Now().Before(end) {
				if kind.take(t, ctx, b) {
					t.Fatalf("taken over while held (%v)", context.Cause(h.Context()))
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err := h.Context().Err(); err != nil {
				t.Fatalf("held work cancelled: %v", context.Cause(h.Context()))
			}
			if err := h.Release(); err != nil {
				t.Fatal(err)
			}
			if !errors.Is(context.Cause(h.Context()), context.Canceled) && h.Context().Err() == nil {
				t.Fatal("the work's context lives on after Release")
			}
			if h.Lost() != nil {
				t.Fatalf("Lost after Release = %v, want nil", h.Lost())
			}
			if kind.name == "key" && !kind.take(t, ctx, b) {
				t.Fatal("a released lease is not free")
			}
		})
	}
}

// TestHeldLost checks that leased work whose key lease is taken over or expired is cancelled
// at the next renewal, with the reason.
func TestHeldLost(t *testing.T) {
	tests := []struct {
		name   string
		breaks func(ctx context.Context, kv jetstream.KeyValue) error
		want   error
	}{
		{name: "taken over", want: eventlog.ErrLeaseHeld, breaks: func(ctx context.Context, kv jetstream.KeyValue) error {
			_, err := kv.Put(ctx, "default.t1", []byte("intruder"))
			return err
		}},
		{name: "expired", want: eventlog.ErrLeaseGone, breaks: func(ctx context.Context, kv jetstream.KeyValue) error {
			return kv.Delete(ctx, "default.t1")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			l := eventlogtest.OpenURLs(t, eventlogtest.Server(t), 1) // a bucket's leases, which the test breaks
			h := leasedKinds()[0].hold(t, ctx, l)
			kv, err := eventlogtest.JetStream(l).KeyValue(ctx, "TEST_HELD")
			if err != nil {
				t.Fatal(err)
			}
			broken := time.Now()
			if err := tc.breaks(ctx, kv); err != nil {
				t.Fatal(err)
			}
			select {
			case <-h.Context().Done():
			case <-time.After(leaseTTL):
				t.Fatal("the work goes on after its lease was lost")
			}
			if took := time.Since(broken); took > eventlog.RenewEvery(leaseTTL)+500*time.Millisecond {
				t.Errorf("cancelled %v after the loss, want by the next renewal (%v)", took, eventlog.RenewEvery(leaseTTL))
			}
			if lost := h.Lost(); !errors.Is(lost, eventlog.ErrLeaseLost) || !errors.Is(lost, tc.want) {
				t.Fatalf("Lost = %v, want ErrLeaseLost and %v", lost, tc.want)
			}
			if err := h.Release(); err != nil {
				t.Fatal(err)
			}
			if e, err := kv.Get(ctx, "default.t1"); tc.name == "taken over" && (err != nil || string(e.Value()) != "intruder") {
				t.Fatalf("Release of a lost lease touched the new holder's: %v", err)
			}
		})
	}
}

// TestHeldUnreachable is the leased-work invariant: a holder cut off from the log (its
// connections drop, renewals fail) has its work cancelled within GiveUpAfter(TTL) of its last
// renewal, before the lease expires on the server and another process, still connected, can
// take the work over.
func TestHeldUnreachable(t *testing.T) {
	for _, kind := range leasedKinds() {
		t.Run(kind.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			url := eventlogtest.Server(t)
			proxy := eventlogtest.NewProxy(t, url)
			a, b := eventlogtest.OpenURLs(t, proxy.URL(), 1), eventlogtest.OpenURLs(t, url, 1)
			h := kind.hold(t, ctx, a)
			defer proxy.Heal() // before the logs close
			cancelled := make(chan time.Time, 1)
			go func() { <-h.Context().Done(); cancelled <- time.Now() }()
			// A renewal or two first: the cut comes in the middle of the holder's life.
			time.Sleep(eventlog.RenewEvery(leaseTTL) + 100*time.Millisecond)
			cut := time.Now()
			proxy.Cut()
			var taken time.Time
			for taken.IsZero() {
				if ctx.Err() != nil {
					t.Fatal("never taken over")
				}
				if kind.take(t, ctx, b) {
					taken = time.Now()
				}
				time.Sleep(20 * time.Millisecond)
			}
			var stopped time.Time
			select {
			case stopped = <-cancelled:
			default:
				t.Fatalf("taken over %v after the cut while the holder still works", taken.Sub(cut))
			}
			if !stopped.Before(taken) {
				t.Fatalf("holder stopped at +%v, taken over at +%v", stopped.Sub(cut), taken.Sub(cut))
			}
			if stopped.Sub(cut) > eventlog.GiveUpAfter(leaseTTL)+200*time.Millisecond {
				t.Errorf("holder stopped %v after the cut, want within GiveUpAfter(TTL) = %v", stopped.Sub(cut), eventlog.GiveUpAfter(leaseTTL))
			}
			if lost := h.Lost(); !errors.Is(lost, eventlog.ErrLeaseLost) {
				t.Fatalf("Lost = %v, want ErrLeaseLost", lost)
			}
			t.Logf("cut at 0, holder stopped at +%v, taken over at +%v", stopped.Sub(cut).Round(time.Millisecond), taken.Sub(cut).Round(time.Millisecond))
			_ = h.Release()
		})
	}
}
