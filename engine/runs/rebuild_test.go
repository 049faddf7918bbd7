package runs_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
	"go.etcd.io/bbolt"
)

// TestRunsRebuildEqualsLive: the runs projection that a process folded while it ran real runs
// (succeeded, failed, interrupted by a cancel, rolled back, deleted, queued behind each other)
// is byte for byte the one a fresh process rebuilds from the log alone, in every bucket.
func TestRunsRebuildEqualsLive(t *testing.T) {
	l := eventlogtest.Open(t)
	live := platformtest.Start(t, quickTakeover(), l)
	ctx := waitCtx(t)
	th, err := live.Threads.Create(ctx, threads.Create{})
	if err != nil {
		t.Fatal(err)
	}
	create := func(assistant string, input map[string]any, strategy string) engine.RunRecord {
		t.Helper()
		rec, err := live.Runs.Create(ctx, runs.Create{ThreadID: th.ThreadID, AssistantID: assistant, Input: input, MultitaskStrategy: strategy})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	wait := func(rec engine.RunRecord, want string) {
		t.Helper()
		got, err := live.Runs.Wait(ctx, th.ThreadID, rec.RunID)
		if err != nil || got.Status != want {
			t.Fatalf("run %s: %s %v, want %s", rec.RunID, got.Status, err, want)
		}
	}
	wait(create("echo", map[string]any{"messages": "one"}, ""), engine.RunSuccess)
	wait(create("error", map[string]any{"messages": "boo"}, ""), engine.RunFailed)
	for _, action := range []string{"interrupt", "rollback"} {
		long := create("delay", map[string]any{"messages": "long", "delay": 60_000}, "")
		waitStatus(t, live, th.ThreadID, long.RunID, engine.RunRunning)
		if err := live.Runs.Cancel(ctx, th.ThreadID, long.RunID, action, true); err != nil {
			t.Fatal(err)
		}
	}
	first := create("delay", map[string]any{"messages": "first", "delay": 200}, "")
	queued := create("echo", map[string]any{"messages": "queued"}, engine.MultitaskEnqueue)
	wait(first, engine.RunSuccess)
	wait(queued, engine.RunSuccess)
	gone := create("echo", map[string]any{"messages": "gone"}, "")
	wait(gone, engine.RunSuccess)
	if err := live.Runs.Delete(ctx, th.ThreadID, gone.RunID); err != nil {
		t.Fatal(err)
	}
	if err := live.Runtime.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}

	rebuilt := platformtest.Start(t, quickTakeover(), l) // a fresh data folder: folds the whole log
	if err := rebuilt.Runtime.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	want, got := dumpBuckets(t, live.DB, live.RunsView), dumpBuckets(t, rebuilt.DB, rebuilt.RunsView)
	if len(want) == 0 {
		t.Fatal("the live runs projection is empty")
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("rebuilt runs projection differs from the live one:\n--- live\n%s\n--- rebuilt\n%s", want, got)
	}
}

// dumpBuckets writes every key and value of p's buckets, in key order.
func dumpBuckets(t *testing.T, db *projections.DB, p projections.Projection) []byte {
	t.Helper()
	var b bytes.Buffer
	err := db.View(func(tx *bbolt.Tx) error {
		for _, name := range p.Buckets() {
			fmt.Fprintf(&b, "[%s]\n", name)
			if err := tx.Bucket([]byte(name)).ForEach(func(k, v []byte) error {
				fmt.Fprintf(&b, "%q = %q\n", k, v)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
