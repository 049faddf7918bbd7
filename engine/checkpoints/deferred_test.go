package checkpoints_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/checkpoints"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
)

// TestDeferredConformance: a Deferred saver reads its own writes, so it behaves as every saver.
func TestDeferredConformance(t *testing.T) {
	t.Run("exit", func(t *testing.T) { saverConformance(t, open(t).saver.Defer(0), true) })
	t.Run("async", func(t *testing.T) { saverConformance(t, open(t).saver.Defer(time.Millisecond), true) })
}

// TestDeferredGraphRunsAsOnMemorySaver runs the graph scripts on a Deferred saver: every result,
// state and history is MemorySaver's, and the events, once on the log, are diffs as the
// synchronous saver's are.
func TestDeferredGraphRunsAsOnMemorySaver(t *testing.T) {
	ctx := context.Background()
	mem := &recorder{t: t, ctx: ctx, saver: graph.NewMemorySaver()}
	agentScript(mem, false)
	e := open(t)
	d := e.saver.Defer(0)
	onLog := &recorder{t: t, ctx: ctx, saver: d}
	agentScript(onLog, false)
	if len(mem.out) != len(onLog.out) {
		t.Fatalf("%d observations on MemorySaver, %d on the deferred saver", len(mem.out), len(onLog.out))
	}
	for i := range mem.out {
		if a, b := normalize(mem.out[i]), normalize(onLog.out[i]); a != b {
			t.Fatalf("observation %d differs:\nMemorySaver:    %s\ndeferred saver: %s", i, clip(a), clip(b))
		}
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	diffs, _ := checkDiffs(t, e.checkpointEvents(t, "t1"))
	if diffs == 0 {
		t.Fatal("no diff events: the deferred saver wrote every checkpoint in full")
	}
}

// TestDeferredTake: an "exit" saver appends nothing until Take, which hands its events over when
// they fit beside the caller's budget and appends them itself when they do not.
func TestDeferredTake(t *testing.T) {
	ctx := context.Background()
	e := open(t)
	putThree := func(d *checkpoints.Deferred, thread string) {
		var parent *graph.Ref
		for i := range 3 {
			cp := newCP(map[string]string{"n": `"` + string(rune('a'+i)) + `"`}, map[string]int64{"n": int64(i + 1)})
			ref := graph.Ref{ThreadID: thread, ID: cp.ID}
			if err := d.Put(ctx, ref, cp, md("loop", i), parent); err != nil {
				t.Fatal(err)
			}
			parent = &ref
		}
	}
	for _, tc := range []struct {
		name     string
		budget   int
		handed   int // events Take returns
		appended int // checkpoint events on the log after Take
	}{
		{"fits", 1 << 10, 3, 0},
		{"too large for one message", 1 << 20, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			thread := "take-" + strings.ReplaceAll(tc.name, " ", "-")
			d := e.saver.Defer(0)
			putThree(d, thread)
			if n := len(e.checkpointEvents(t, thread)); n != 0 {
				t.Fatalf("%d checkpoint events on the log before Take, want 0", n)
			}
			kept, err := d.Take(ctx, tc.budget)
			if err != nil {
				t.Fatal(err)
			}
			if len(kept) != tc.handed {
				t.Fatalf("Take handed %d events, want %d", len(kept), tc.handed)
			}
			if n := len(e.checkpointEvents(t, thread)); n != tc.appended {
				t.Fatalf("%d checkpoint events on the log after Take, want %d", n, tc.appended)
			}
			if len(kept) > 0 {
				batch := make([]eventlog.Pending, len(kept))
				for i, k := range kept {
					batch[i] = eventlog.Pending{Event: k, Expect: eventlog.Any}
				}
				seq, err := e.log.AppendBatch(ctx, batch)
				if err != nil {
					t.Fatal(err)
				}
				if err := e.proj.WaitFor(ctx, seq); err != nil {
					t.Fatal(err)
				}
			}
			got, err := e.saver.Get(ctx, graph.Ref{ThreadID: thread})
			if err != nil || got == nil || string(got.Checkpoint.ChannelValues["n"]) != `"c"` {
				t.Fatalf("newest checkpoint after Take = %+v, %v; want n = \"c\"", got, err)
			}
			if err := d.Put(ctx, graph.Ref{ThreadID: thread, ID: "x"}, newCP(nil, nil), md("loop", 9), nil); err == nil {
				t.Fatal("a put after Take was accepted")
			}
		})
	}
}

// TestDeferredAsyncFlushes: an "async" saver appends what it keeps in the background, without a
// read or Take.
func TestDeferredAsyncFlushes(t *testing.T) {
	ctx := context.Background()
	e := open(t)
	d := e.saver.Defer(5 * time.Millisecond)
	cp := newCP(map[string]string{"n": `1`}, map[string]int64{"n": 1})
	if err := d.Put(ctx, graph.Ref{ThreadID: "async", ID: cp.ID}, cp, md("input", -1), nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(e.checkpointEvents(t, "async")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the kept checkpoint never reached the log")
		}
		time.Sleep(5 * time.Millisecond)
	}
	kept, err := d.Take(ctx, 0)
	if err != nil || len(kept) != 0 {
		t.Fatalf("Take after the background flush = %d events, %v; want none", len(kept), err)
	}
	if n := len(e.checkpointEvents(t, "async")); n != 1 {
		t.Fatalf("%d checkpoint events, want 1", n)
	}
}

// TestDeferredDiscard: what a run left to another worker kept never reaches the log.
func TestDeferredDiscard(t *testing.T) {
	ctx := context.Background()
	e := open(t)
	// The flush delay is long enough never to pass during the test: with a short one, a loaded
	// machine fired the timer before Discard and the flush appended legitimately (the flake).
	d := e.saver.Defer(time.Hour)
	cp := newCP(map[string]string{"n": `1`}, map[string]int64{"n": 1})
	if err := d.PutWrites(ctx, graph.Ref{ThreadID: "gone", ID: cp.ID}, []graph.PendingWrite{{TaskID: "t", Channel: "n", Value: raw(`2`)}}); err != nil {
		t.Fatal(err)
	}
	if !d.Armed() {
		t.Fatal("no background flush scheduled after a put")
	}
	d.Discard()
	if d.Armed() {
		t.Error("Discard left the background flush scheduled")
	}
	// A timer that fired while Discard ran calls Flush afterwards: it must append nothing.
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if evs := e.events(t, engine.DefaultTenant, "gone"); len(evs) != 0 {
		t.Fatalf("%d events after Discard, want 0", len(evs))
	}
}

// TestDeferredBefore: whatever makes the saver append what it keeps (a flush, a read, Take's
// own append of what would not fit) calls Before first, and nothing is appended when it fails;
// Take handing its events over does not call it.
func TestDeferredBefore(t *testing.T) {
	ctx := context.Background()
	e := open(t)
	for _, tc := range []struct {
		name  string
		write func(d *checkpoints.Deferred, thread string) error
		calls int
	}{
		{"flush", func(d *checkpoints.Deferred, _ string) error { return d.Flush(ctx) }, 1},
		{"read", func(d *checkpoints.Deferred, thread string) error {
			_, err := d.Get(ctx, graph.Ref{ThreadID: thread})
			return err
		}, 1},
		{"take, too large", func(d *checkpoints.Deferred, _ string) error { _, err := d.Take(ctx, 1<<20); return err }, 1},
		{"take, handed over", func(d *checkpoints.Deferred, _ string) error { _, err := d.Take(ctx, 0); return err }, 0},
	} {
		for _, fail := range []bool{false, true} {
			if fail && tc.calls == 0 {
				continue
			}
			thread := "before-" + strings.ReplaceAll(tc.name, " ", "-")
			if fail {
				thread += "-failing"
			}
			t.Run(thread, func(t *testing.T) {
				d := e.saver.Defer(0)
				calls := 0
				d.Before(func(context.Context) error {
					calls++
					if n := len(e.checkpointEvents(t, thread)); n != 0 {
						t.Errorf("%d checkpoint events on the log before Before", n)
					}
					if fail {
						return errBefore
					}
					return nil
				})
				cp := newCP(map[string]string{"n": `1`}, map[string]int64{"n": 1})
				if err := d.Put(ctx, graph.Ref{ThreadID: thread, ID: cp.ID}, cp, md("input", -1), nil); err != nil {
					t.Fatal(err)
				}
				err := tc.write(d, thread)
				if calls != tc.calls {
					t.Fatalf("Before called %d times, want %d", calls, tc.calls)
				}
				want := tc.calls
				if fail {
					if err == nil {
						t.Fatal("a failing Before did not fail the append")
					}
					want = 0
				} else if err != nil {
					t.Fatal(err)
				}
				if n := len(e.checkpointEvents(t, thread)); n != want {
					t.Fatalf("%d checkpoint events on the log, want %d", n, want)
				}
			})
		}
	}
}

var errBefore = errors.New("before refused")
