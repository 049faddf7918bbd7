package eventlog_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

func thread(id string) eventlog.Aggregate {
	return eventlog.Aggregate{Kind: "thread", Tenant: eventlog.DefaultTenant, ID: id}
}

func mustEvent(t testing.TB, agg eventlog.Aggregate, typ string, data any) eventlog.Event {
	t.Helper()
	e, err := eventlog.New(agg, typ, data)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestAppendOptimisticConcurrency(t *testing.T) {
	ctx := context.Background()
	l := eventlogtest.Open(t)
	a, b := thread("a"), thread("b")

	tests := []struct {
		name    string
		agg     eventlog.Aggregate
		expect  func(last map[string]uint64) eventlog.Expect
		wantErr error
	}{
		{"create new aggregate", a, func(map[string]uint64) eventlog.Expect { return eventlog.At(0) }, nil},
		{"create again conflicts", a, func(map[string]uint64) eventlog.Expect { return eventlog.At(0) }, eventlog.ErrConflict},
		{"append at last seq", a, func(m map[string]uint64) eventlog.Expect { return eventlog.At(m["a"]) }, nil},
		{"append at stale seq", a, func(m map[string]uint64) eventlog.Expect { return eventlog.At(m["a"] - 1) }, eventlog.ErrConflict},
		{"other aggregate is independent", b, func(map[string]uint64) eventlog.Expect { return eventlog.At(0) }, nil},
		{"unconditional append", a, func(map[string]uint64) eventlog.Expect { return eventlog.Any }, nil},
	}
	last := map[string]uint64{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seq, err := l.Append(ctx, mustEvent(t, tc.agg, "touched", map[string]int{"n": 1}), tc.expect(last))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err == nil {
				if seq == 0 {
					t.Fatal("no sequence returned")
				}
				last[tc.agg.ID] = seq
			}
		})
	}
	events, err := l.Load(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 3 {
		t.Fatalf("aggregate a has %d events, want 3 (conflicting appends must store nothing)", len(events))
	}
}

func TestAppendDeduplicatesByEventID(t *testing.T) {
	ctx := context.Background()
	l := eventlogtest.Open(t)
	e := mustEvent(t, thread("a"), "created", nil)
	s1, err := l.Append(ctx, e, eventlog.Any)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := l.Append(ctx, e, eventlog.Any)
	if err != nil {
		t.Fatal(err)
	}
	if s1 != s2 {
		t.Fatalf("retried append stored again: seq %d then %d", s1, s2)
	}
	events, _ := l.Load(ctx, thread("a"))
	if len(events) != 1 {
		t.Fatalf("%d events stored, want 1", len(events))
	}
}

func TestAppendBatchIsAtomic(t *testing.T) {
	ctx := context.Background()
	l := eventlogtest.Open(t)
	a, b := thread("a"), thread("b")

	seq, err := l.AppendBatch(ctx, []eventlog.Pending{
		{Event: mustEvent(t, a, "created", nil), Expect: eventlog.At(0)},
		{Event: mustEvent(t, a, "patched", nil), Expect: eventlog.Any},
		{Event: mustEvent(t, b, "created", nil), Expect: eventlog.At(0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if seq != 3 {
		t.Fatalf("last seq = %d, want 3", seq)
	}

	// The second half of this batch conflicts (b exists), so the first half must not be stored.
	_, err = l.AppendBatch(ctx, []eventlog.Pending{
		{Event: mustEvent(t, a, "patched", nil), Expect: eventlog.At(2)},
		{Event: mustEvent(t, b, "created", nil), Expect: eventlog.At(0)},
	})
	if !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("err = %v, want conflict", err)
	}
	if last, _ := l.LastSeq(ctx, eventlog.RuntimeStream); last != 3 {
		t.Fatalf("stream last seq = %d after a failed batch, want 3", last)
	}
	// Expectations inside a batch are checked against the log before the batch.
	if _, err := l.AppendBatch(ctx, []eventlog.Pending{
		{Event: mustEvent(t, a, "patched", nil), Expect: eventlog.At(2)},
		{Event: mustEvent(t, b, "patched", nil), Expect: eventlog.At(3)},
		{Event: mustEvent(t, a, "patched", nil), Expect: eventlog.Any},
	}); err != nil {
		t.Fatal(err)
	}
}

func TestSubscribeFromSequence(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l := eventlogtest.Open(t)
	for i := range 5 {
		if _, err := l.Append(ctx, mustEvent(t, thread(fmt.Sprint(i)), "created", nil), eventlog.Any); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := l.Subscribe(ctx, eventlog.RuntimeStream, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	for want := uint64(3); want <= 5; want++ {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e.Seq != want {
			t.Fatalf("seq = %d, want %d", e.Seq, want)
		}
	}
	// Events appended after subscribing arrive too.
	if _, err := l.Append(ctx, mustEvent(t, thread("late"), "created", nil), eventlog.Any); err != nil {
		t.Fatal(err)
	}
	e, err := sub.Next(ctx)
	if err != nil || e.Aggregate.ID != "late" {
		t.Fatalf("late event = %+v, %v", e, err)
	}
}

func TestEventsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l := eventlogtest.OpenDir(t, dir)
	if _, err := l.Append(ctx, mustEvent(t, thread("a"), "created", map[string]string{"k": "v"}), eventlog.At(0)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = eventlogtest.OpenDir(t, dir)
	events, err := l.Load(ctx, thread("a"))
	if err != nil || len(events) != 1 || string(events[0].Data) != `{"k":"v"}` {
		t.Fatalf("after restart: %+v, %v", events, err)
	}
}

func TestInvalidSubjectToken(t *testing.T) {
	l := eventlogtest.Open(t)
	_, err := l.Append(context.Background(), mustEvent(t, thread("a.b"), "created", nil), eventlog.Any)
	if err == nil {
		t.Fatal("an id with a dot must be refused")
	}
}

func TestAppendBatchOfOneAggregateIsPacked(t *testing.T) {
	ctx := context.Background()
	l := eventlogtest.Open(t)
	a := thread("a")
	batch := func(expect eventlog.Expect) []eventlog.Pending {
		return []eventlog.Pending{
			{Event: mustEvent(t, a, "run_started", nil), Expect: expect},
			{Event: mustEvent(t, a, "checkpoint", map[string]int{"step": 0}), Expect: eventlog.Any},
			{Event: mustEvent(t, a, "run_finished", nil), Expect: eventlog.Any},
		}
	}
	seq, err := l.AppendBatch(ctx, batch(eventlog.At(0)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendBatch(ctx, batch(eventlog.At(0))); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("stale packed batch: err = %v, want conflict", err)
	}
	if _, err := l.AppendBatch(ctx, batch(eventlog.At(seq))); err != nil {
		t.Fatal(err)
	}
	events, err := l.Load(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, fmt.Sprintf("%d:%s", e.Seq, e.Type))
	}
	want := "[1:run_started 1:checkpoint 1:run_finished 2:run_started 2:checkpoint 2:run_finished]"
	if fmt.Sprint(got) != want {
		t.Fatalf("events = %v, want %s", got, want)
	}
}

// TestTailFromSequence: a reader that has seen up to sequence n gets what follows n alone, and
// a sequence past the end is an empty page, not an error.
func TestTailFromSequence(t *testing.T) {
	ctx := context.Background()
	l := eventlogtest.Open(t)
	a, b := thread("a"), thread("b")
	var seqs []uint64
	for i := range 4 {
		for _, agg := range []eventlog.Aggregate{a, b} {
			seq, err := l.Append(ctx, mustEvent(t, agg, "touched", map[string]int{"n": i}), eventlog.Any)
			if err != nil {
				t.Fatal(err)
			}
			if agg == a {
				seqs = append(seqs, seq)
			}
		}
	}
	tests := []struct {
		name string
		from uint64
		want []uint64
	}{
		{"from the start", 1, seqs},
		{"after the second", seqs[1] + 1, seqs[2:]},
		{"at a sequence of another aggregate", seqs[2] + 1, seqs[3:]},
		{"past the end", seqs[3] + 10, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []uint64
			err := l.TailFrom(ctx, a, tc.from, false, func(e eventlog.Event) error {
				got = append(got, e.Seq)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("sequences = %v, want %v", got, tc.want)
			}
		})
	}
}

func init() { eventlog.PackAcross("trace") }

// TestAppendBatchPackedAcrossAggregates: the unconditional events of several traces of one
// tenant go in one message, under the first's subject (such a kind is never loaded by
// aggregate, and Load returns no other aggregate's events); a condition, or a second tenant,
// makes the batch an atomic one of a message per event.
func TestAppendBatchPackedAcrossAggregates(t *testing.T) {
	ctx := context.Background()
	l := eventlogtest.Open(t)
	tr := func(tenant, id string) eventlog.Aggregate {
		return eventlog.Aggregate{Kind: "trace", Tenant: tenant, ID: id}
	}
	t1, t2, other := tr(eventlog.DefaultTenant, "t1"), tr(eventlog.DefaultTenant, "t2"), tr("acme", "t3")
	stream, err := eventlogtest.JetStream(l).Stream(ctx, eventlog.TraceStream)
	if err != nil {
		t.Fatal(err)
	}
	// messages appends batch and returns the number of messages it took and their events' ids.
	messages := func(batch []eventlog.Pending) (int, []string) {
		t.Helper()
		before, err := stream.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.AppendBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
		after, err := stream.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for seq := before.State.LastSeq + 1; seq <= after.State.LastSeq; seq++ {
			m, err := stream.GetMsg(ctx, seq)
			if err != nil {
				t.Fatal(err)
			}
			events, err := l.DecodeBody(ctx, m.Data)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range events {
				ids = append(ids, e.ID)
			}
		}
		return int(after.State.LastSeq - before.State.LastSeq), ids
	}
	batch := []eventlog.Pending{
		{Event: mustEvent(t, t1, "run_posted", nil), Expect: eventlog.Any},
		{Event: mustEvent(t, t2, "run_posted", nil), Expect: eventlog.Any},
		{Event: mustEvent(t, t1, "run_patched", nil), Expect: eventlog.Any},
	}
	n, ids := messages(batch)
	if n != 1 || fmt.Sprint(ids) != fmt.Sprint([]string{batch[0].Event.ID, batch[1].Event.ID, batch[2].Event.ID}) {
		t.Fatalf("an unconditional batch of two traces took %d messages holding %v, want one holding the three in order", n, ids)
	}
	events, err := l.Load(ctx, t1)
	if err != nil || len(events) != 2 || events[0].Aggregate != t1 || events[1].Aggregate != t1 {
		t.Fatalf("Load(t1) = %v, %v: want its two events alone", events, err)
	}
	// In this order: the conditional batch expects t1 as Load found it, before the second
	// batch appends to it.
	for _, tc := range []struct {
		name  string
		batch []eventlog.Pending
	}{
		{"conditional", []eventlog.Pending{
			{Event: mustEvent(t, t1, "run_posted", nil), Expect: eventlog.At(events[1].Seq)},
			{Event: mustEvent(t, t2, "run_posted", nil), Expect: eventlog.Any},
		}},
		{"two tenants", []eventlog.Pending{
			{Event: mustEvent(t, t1, "run_posted", nil), Expect: eventlog.Any},
			{Event: mustEvent(t, other, "run_posted", nil), Expect: eventlog.Any},
		}},
	} {
		if n, _ := messages(tc.batch); n != 2 {
			t.Errorf("%s batch took %d messages, want one per event", tc.name, n)
		}
	}
}

// TestKnownFollowsAppends: Known is the stream's last sequence on an exclusive log: what it held
// when opened, then each append acknowledged.
func TestKnownFollowsAppends(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	l, err := eventlog.Open(ctx, eventlog.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !l.Exclusive() {
		t.Fatal("an embedded log that does not listen is not exclusive")
	}
	var last uint64
	for range 3 {
		if last, err = l.Append(ctx, mustEvent(t, thread("a"), "created", nil), eventlog.Any); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.Known(eventlog.RuntimeStream); got != last {
		t.Fatalf("Known = %d after appends up to %d", got, last)
	}
	l.Close()
	if l, err = eventlog.Open(ctx, eventlog.Config{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := l.Known(eventlog.RuntimeStream); got != last {
		t.Fatalf("Known = %d when reopened, want the stream's last, %d", got, last)
	}
	shared := eventlogtest.OpenURLs(t, eventlogtest.Server(t), 1)
	if shared.Exclusive() {
		t.Fatal("a log on a server others may connect to is exclusive")
	}
}
