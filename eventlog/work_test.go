package eventlog_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// TestLeases checks the leases' rules, in a bucket on real JetStream (a log other processes can
// reach) and in the process (an embedded log nobody else can): one holder at a time, renewals
// only by the holder at its revision (adopting a renewal whose answer was lost), release only
// at the holder's revision, and expiry.
func TestLeases(t *testing.T) {
	for _, mode := range leaseModes() {
		t.Run(mode.name, func(t *testing.T) { testLeases(t, mode.open(t)) })
	}
}

// leaseMode is a log whose leases are kept one way.
type leaseMode struct {
	name string
	open func(t *testing.T) *eventlog.Log
}

func leaseModes() []leaseMode {
	return []leaseMode{
		{"bucket", func(t *testing.T) *eventlog.Log { return eventlogtest.OpenURLs(t, eventlogtest.Server(t), 1) }},
		{"in process", func(t *testing.T) *eventlog.Log { return eventlogtest.Open(t) }},
	}
}

func testLeases(t *testing.T, l *eventlog.Log) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	leases, err := l.OpenLeases(ctx, "TEST_LEASES", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := leases.Acquire(ctx, "default.t1", "w1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Acquire(ctx, "default.t1", "w2"); !errors.Is(err, eventlog.ErrLeaseHeld) {
		t.Fatalf("second acquire: %v, want ErrLeaseHeld", err)
	}
	renewed, err := leases.Renew(ctx, "default.t1", "w1", rev)
	if err != nil || renewed <= rev {
		t.Fatalf("renew: revision %d after %d, %v", renewed, rev, err)
	}
	// The answer of that renewal lost: the holder renews at the revision it knows.
	adopted, err := leases.Renew(ctx, "default.t1", "w1", rev)
	if err != nil || adopted != renewed {
		t.Fatalf("renew at a stale revision of its own: revision %d (want %d), %v", adopted, renewed, err)
	}
	if err := leases.Release(ctx, "default.t1", rev); err == nil {
		t.Fatal("released at a stale revision")
	}
	if err := leases.Release(ctx, "default.t1", adopted); err != nil {
		t.Fatal(err)
	}
	taken, err := leases.Acquire(ctx, "default.t1", "w2")
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	if _, err := leases.Renew(ctx, "default.t1", "w1", adopted); !errors.Is(err, eventlog.ErrLeaseHeld) {
		t.Fatalf("renew of a lease taken over: %v, want ErrLeaseHeld", err)
	}
	// Not renewed, the lease expires.
	eventually(t, "lease expiry", func() error {
		_, err := leases.Renew(ctx, "default.t1", "w2", taken)
		if errors.Is(err, eventlog.ErrLeaseGone) {
			return nil
		}
		if err == nil {
			return errors.New("renewed a lease left to expire")
		}
		return err
	})
}

// TestDispatchQueue checks the dispatch queue on real JetStream: the events of its filter only,
// in order, with their sequences; a message neither acknowledged nor in progress comes back
// after AckWait, one refused comes back at once, and an acknowledged one never.
func TestDispatchQueue(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l := eventlogtest.Open(t)
	q, err := l.OpenDispatch(ctx, eventlog.DispatchConfig{Name: "TEST_DISPATCH", Filter: "thread.*.*.run_created", AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for _, e := range []eventlog.Event{
		mustEvent(t, thread("a"), "run_created", nil),
		mustEvent(t, thread("a"), "run_started", nil),
		mustEvent(t, thread("b"), "run_created", nil),
		mustEvent(t, thread("c"), "run_created", nil),
	} {
		seq, err := l.Append(ctx, e, eventlog.Any)
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == "run_created" {
			seqs = append(seqs, seq)
		}
	}
	pull, err := q.Pull(10)
	if err != nil {
		t.Fatal(err)
	}
	defer pull.Stop()
	next := func(want uint64) *eventlog.Dispatch {
		t.Helper()
		d, err := pull.Next()
		if err != nil {
			t.Fatal(err)
		}
		seq, err := d.Seq()
		if err != nil || seq != want {
			t.Fatalf("delivered seq %d (%v), want %d", seq, err, want)
		}
		return d
	}
	if d := next(seqs[0]); d.Subject() != "thread.default.a.run_created" {
		t.Fatalf("subject %s", d.Subject())
	} else if err := d.Ack(); err != nil {
		t.Fatal(err)
	}
	b := next(seqs[1])
	if err := b.InProgress(); err != nil {
		t.Fatal(err)
	}
	if err := next(seqs[2]).Nak(0); err != nil {
		t.Fatal(err)
	}
	if err := next(seqs[2]).Term(); err != nil {
		t.Fatal(err)
	}
	// b was left unsettled: it comes back to another worker.
	if err := next(seqs[1]).Ack(); err != nil {
		t.Fatal(err)
	}
	pull.Stop()
	if _, err := pull.Next(); err == nil {
		t.Fatal("Next after Stop delivered")
	}
}

// TestDispatchFetch checks Fetch on real JetStream: the messages there now, in order, at most
// max, with their bodies; nothing (no error) when none comes within the wait; the first message
// that comes during the wait at once; a message handed back (Nak) comes again.
func TestDispatchFetch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l := eventlogtest.Open(t)
	q, err := l.OpenDispatch(ctx, eventlog.DispatchConfig{Name: "TEST_FETCH", Filter: "thread.*.*.run_created", AckWait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	appendRun := func(id string) {
		t.Helper()
		if _, err := l.Append(ctx, mustEvent(t, thread(id), "run_created", nil), eventlog.Any); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(ds []*eventlog.Dispatch) []string {
		t.Helper()
		var out []string
		for _, d := range ds {
			events, err := l.DecodeBody(ctx, d.Data())
			if err != nil || len(events) != 1 {
				t.Fatalf("body: %v %v", events, err)
			}
			out = append(out, events[0].Aggregate.ID)
		}
		return out
	}
	for _, id := range []string{"a", "b", "c"} {
		appendRun(id)
	}
	// What is there comes back at once, at most max a fetch, in order: a, b, then c. A fetch may
	// bring fewer than are there (the server answers a no-wait pull with what it has at hand), so
	// the fetches go on until the three are in.
	var fetched []string
	for len(fetched) < 3 {
		wait := 20 * time.Second // never served: messages are there
		start := time.Now()
		got, err := q.Fetch(ctx, 2, wait)
		if err != nil || len(got) == 0 || len(got) > 2 {
			t.Fatalf("Fetch(2) = %v %v after %v, with %v fetched before", ids(got), err, time.Since(start), fetched)
		}
		if time.Since(start) >= wait {
			t.Errorf("Fetch waited its whole %v with messages there", wait)
		}
		fetched = append(fetched, ids(got)...)
		for _, d := range got {
			if err := d.Ack(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if strings.Join(fetched, ",") != "a,b,c" {
		t.Fatalf("fetched %v, want a,b,c in order", fetched)
	}
	if got, err := q.Fetch(ctx, 2, 200*time.Millisecond); err != nil || len(got) != 0 {
		t.Fatalf("Fetch of an empty queue = %v %v, want nothing after the wait", ids(got), err)
	}
	go func() { time.Sleep(100 * time.Millisecond); appendRun("d") }()
	start := time.Now()
	got, err := q.Fetch(ctx, 10, 30*time.Second)
	if err != nil || strings.Join(ids(got), ",") != "d" || time.Since(start) >= 30*time.Second {
		t.Fatalf("Fetch during the wait = %v %v after %v", ids(got), err, time.Since(start))
	}
	if err := got[0].Nak(0); err != nil {
		t.Fatal(err)
	}
	if got, err := q.Fetch(ctx, 10, 5*time.Second); err != nil || strings.Join(ids(got), ",") != "d" {
		t.Fatalf("Fetch after Nak = %v %v", ids(got), err)
	}
}

// TestHeldProgress checks that a message whose leased work outlasts its AckWait is not handed
// out again while the work's Held tells the consumer so, and is once the work is released.
func TestHeldProgress(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l := eventlogtest.Open(t)
	q, err := l.OpenDispatch(ctx, eventlog.DispatchConfig{Name: "TEST_KEEP", Filter: "thread.*.*.run_created", AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, mustEvent(t, thread("a"), "run_created", nil), eventlog.Any); err != nil {
		t.Fatal(err)
	}
	got, err := q.Fetch(ctx, 1, 20*time.Second)
	if err != nil || len(got) != 1 {
		t.Fatalf("Fetch = %d messages, %v", len(got), err)
	}
	leases, err := l.OpenLeases(ctx, "TEST_KEEP", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	held, err := leases.Hold(ctx, "default.a", "w1")
	if err != nil {
		t.Fatal(err)
	}
	held.Progress(300*time.Millisecond, got[0])
	// Work lasting three AckWaits: the message is not delivered again meanwhile.
	if again, err := q.Fetch(ctx, 1, 3*time.Second); err != nil || len(again) != 0 {
		t.Fatalf("while in progress: delivered again (%d messages, %v)", len(again), err)
	}
	if err := held.Release(); err != nil {
		t.Fatal(err)
	}
	// Nobody says so any more: after its AckWait the message is delivered again.
	if again, err := q.Fetch(ctx, 1, 20*time.Second); err != nil || len(again) != 1 {
		t.Fatalf("after stop: %d messages, %v; want the message again", len(again), err)
	}
}

// TestLeasesOfAnEmbeddedLog: the leases of an embedded log that listens only for the control
// plane are kept in its process (no bucket is made), and another server connecting to that
// listener is refused leases, with the reason, rather than holding them where the first cannot
// see them.
func TestLeasesOfAnEmbeddedLog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	owner := eventlogtest.OpenConfig(t, eventlog.Config{Dir: dir, Listen: "127.0.0.1:-1", Accounts: true, JetgraphListener: true})
	leases, err := owner.OpenLeases(ctx, "TEST_EMBEDDED", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Acquire(ctx, "default.t1", "w1"); err != nil {
		t.Fatal(err)
	}
	if _, err := eventlogtest.JetStream(owner).KeyValue(ctx, "TEST_EMBEDDED"); err == nil {
		t.Fatal("a lease bucket was made for an embedded log's in-process leases")
	}
	other := eventlogtest.OpenConfig(t, eventlog.Config{URLs: owner.ClientURL(), Creds: eventlog.CredsFile(dir)})
	_, err = other.OpenLeases(ctx, "TEST_EMBEDDED", time.Minute)
	if err == nil || !strings.Contains(err.Error(), "--nats-listen") {
		t.Fatalf("leases opened by another process on an embedded log: %v, want refused naming --nats-listen", err)
	}
}
