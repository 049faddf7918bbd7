package runs

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// How a worker settles the dispatch messages it cannot work on, through the interface it owns
// for them; the leases are real (eventlog's, on an embedded log). runs_test.go covers the
// leased work end to end (TestRunStopsWithItsLease).

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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	leases, err := eventlogtest.Open(t).OpenLeases(ctx, LeaseBucket, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Acquire(ctx, "default.t1", "w2"); err != nil {
		t.Fatal(err)
	}
	s := &Service{cfg: Config{Worker: "w1", LeaseTTL: time.Minute, AckWait: time.Second},
		leases: leases, logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
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
		s.handle(ctx, d)
		if len(d.settled) != 1 || d.settled[0] != tc.want {
			t.Errorf("%s settled %v, want [%s]", tc.subject, d.settled, tc.want)
		}
	}
	if _, err := leases.Acquire(ctx, "default.t1", "w3"); err == nil {
		t.Error("the lease was given up, want w2's still")
	}
}
