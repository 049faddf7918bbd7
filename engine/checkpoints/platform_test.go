package checkpoints_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/threads"
)

func openPlatform(t *testing.T) *platform.Platform {
	t.Helper()
	return platformtest.Start(t, platform.Config{Logger: quiet()}, nil)
}

func createThread(t *testing.T, p *platform.Platform, id string) {
	t.Helper()
	if _, err := p.Threads.Create(context.Background(), threads.Create{ThreadID: id}); err != nil {
		t.Fatal(err)
	}
}

// checkThread compares the thread record with the graph's state of its latest root checkpoint.
func checkThread(t *testing.T, p *platform.Platform, g *graph.Graph, id, status string) engine.Thread {
	t.Helper()
	ctx := context.Background()
	th, err := p.Threads.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	st, err := g.State(ctx, p.Checkpoints, graph.Ref{ThreadID: id}, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := canon(t, th.Values), canon(t, st.Values); got != want {
		t.Errorf("thread values\n got %s\nwant %s", got, want)
	}
	interrupts := map[string]any{}
	for _, task := range st.Tasks {
		if len(task.Interrupts) > 0 {
			interrupts[task.ID] = task.Interrupts
		}
	}
	if got, want := canon(t, th.Interrupts), canon(t, interrupts); got != want {
		t.Errorf("thread interrupts\n got %s\nwant %s", got, want)
	}
	// With no run on it, the status is the checkpoint's: interrupted while it has a task left
	// to run (next) or a pending interrupt.
	derived := engine.ThreadIdle
	if len(st.Next) > 0 || len(interrupts) > 0 {
		derived = engine.ThreadInterrupted
	}
	if th.Status != status || status != derived {
		t.Errorf("thread status %s, want %s (next %v)", th.Status, status, st.Next)
	}
	if !th.StateUpdatedAt.Equal(th.UpdatedAt.Time) || !th.StateUpdatedAt.After(th.CreatedAt.Time) {
		t.Errorf("times: created %v updated %v state updated %v", th.CreatedAt, th.UpdatedAt, th.StateUpdatedAt)
	}
	return th
}

func TestThreadRecordFollowsTheRootCheckpoint(t *testing.T) {
	p := openPlatform(t)
	ctx := context.Background()
	createThread(t, p, "th1")
	g := agentGraph(t, false)
	run := func(o graph.RunOptions) {
		t.Helper()
		o.ThreadID, o.Saver = "th1", p.Checkpoints
		if _, err := g.Run(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	run(graph.RunOptions{Input: map[string]any{"messages": "hi", "ask": true}})
	checkThread(t, p, g, "th1", engine.ThreadInterrupted)
	run(graph.RunOptions{Command: &graph.Command{Resume: "yes"}})
	checkThread(t, p, g, "th1", engine.ThreadIdle)
	// A static interrupt leaves no pending write, but a task to run: interrupted.
	run(graph.RunOptions{Input: map[string]any{"messages": "again"}, InterruptBefore: []string{"tool"}})
	checkThread(t, p, g, "th1", engine.ThreadInterrupted)
	if _, err := g.UpdateState(ctx, p.Checkpoints, graph.Ref{ThreadID: "th1"}, [][]graph.Update{{{Values: map[string]any{"notes": []any{"upd"}}, AsNode: "agent"}}}, nil); err != nil {
		t.Fatal(err)
	}
	// A state update that leaves a task to run (agent routes to tool) keeps it interrupted.
	checkThread(t, p, g, "th1", engine.ThreadInterrupted)
	// A fork from an old checkpoint: the values are the fork's, not a merge into the newest.
	hist, err := g.History(ctx, p.Checkpoints, graph.Ref{ThreadID: "th1"}, graph.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.UpdateState(ctx, p.Checkpoints, hist[len(hist)-2].Ref, [][]graph.Update{{{Values: map[string]any{"messages": "forked"}, AsNode: "agent"}}}, nil); err != nil {
		t.Fatal(err)
	}
	th := checkThread(t, p, g, "th1", engine.ThreadInterrupted)
	if !strings.Contains(canon(t, th.Values), "forked") || strings.Contains(canon(t, th.Values), "again") {
		t.Errorf("values after the fork: %s", canon(t, th.Values))
	}
	// An interrupt written on an older checkpoint is not the thread's.
	if err := p.Checkpoints.PutWrites(ctx, hist[0].Ref, []graph.PendingWrite{{TaskID: "x", Channel: graph.Interrupt, Value: raw(`[{"value":1,"id":"i"}]`)}}); err != nil {
		t.Fatal(err)
	}
	checkThread(t, p, g, "th1", engine.ThreadInterrupted)

	// Subgraph checkpoints do not touch the thread's values; the root task waiting for its
	// subgraph is an interrupt without values.
	createThread(t, p, "th2")
	w := weatherGraph()
	if _, err := w.Run(ctx, graph.RunOptions{ThreadID: "th2", Input: map[string]any{"messages": "hi"}, Saver: p.Checkpoints}); err != nil {
		t.Fatal(err)
	}
	checkThread(t, p, w, "th2", engine.ThreadInterrupted)
}

// threadKeys counts the keys of the checkpoint buckets that mention thread.
func threadKeys(t *testing.T, p *platform.Platform, thread string) int {
	n := 0
	err := p.DB.View(func(tx *bbolt.Tx) error {
		for _, b := range p.CheckpointsView.Buckets() {
			_ = tx.Bucket([]byte(b)).ForEach(func(k, _ []byte) error {
				if bytes.Contains(k, []byte("\x00"+thread+"\x00")) {
					n++
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestThreadDeleteRemovesCheckpoints(t *testing.T) {
	p := openPlatform(t)
	ctx := context.Background()
	g := weatherGraph()
	for _, id := range []string{"keep", "gone"} {
		createThread(t, p, id)
		if _, err := g.Run(ctx, graph.RunOptions{ThreadID: id, Input: map[string]any{"messages": "hi"}, Saver: p.Checkpoints}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := g.State(ctx, p.Checkpoints, graph.Ref{ThreadID: "gone"}, false)
	if err != nil {
		t.Fatal(err)
	}
	sub := *st.Tasks[0].State
	if err := p.Threads.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []graph.Ref{{ThreadID: "gone"}, sub, st.Ref} {
		if tu, err := p.Checkpoints.Get(ctx, ref); err != nil || tu != nil {
			t.Fatalf("Get(%+v) after delete: %v %v", ref, tu, err)
		}
	}
	if n := threadKeys(t, p, "gone"); n != 0 {
		t.Fatalf("%d keys of the deleted thread left", n)
	}
	if n := threadKeys(t, p, "keep"); n == 0 {
		t.Fatal("the other thread lost its checkpoints")
	}
	// A thread created again with the same id starts afresh, and a copy of it copies only that.
	createThread(t, p, "gone")
	if _, err := g.Run(ctx, graph.RunOptions{ThreadID: "gone", Input: map[string]any{"messages": "again"}, Saver: p.Checkpoints}); err != nil {
		t.Fatal(err)
	}
	createThread(t, p, "copy")
	if err := p.Checkpoints.Copy(ctx, "gone", "copy"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"gone", "copy"} {
		h, err := g.History(ctx, p.Checkpoints, graph.Ref{ThreadID: id}, graph.ListOptions{})
		if err != nil || len(h) != 2 { // input and one step, not the first thread's too
			t.Fatalf("history of %s: %d checkpoints, %v", id, len(h), err)
		}
	}
}

func TestCopy(t *testing.T) {
	p := openPlatform(t)
	ctx := engine.WithTenant(context.Background(), "acme")
	createThread(t, p, "src") // in the default tenant: the copy is made in acme's
	g, w := agentGraph(t, true), weatherGraph()
	run := func(g *graph.Graph, o graph.RunOptions) {
		t.Helper()
		o.ThreadID, o.Saver, o.Metadata = "src", p.Checkpoints, map[string]any{"thread_id": "src", "run": 1}
		if _, err := g.Run(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	run(g, graph.RunOptions{Input: map[string]any{"messages": "hi"}})
	run(g, graph.RunOptions{Input: map[string]any{"messages": "more", "ask": true}})
	run(w, graph.RunOptions{Input: map[string]any{"messages": "weather"}}) // subgraph namespaces
	if err := p.Checkpoints.Copy(ctx, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	same := func(label string, a, b any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if x, y := strings.ReplaceAll(mustJSON(t, a), `"src"`, `"dst"`), mustJSON(t, b); x != y {
			t.Fatalf("%s of the copy differs:\nsource: %s\ncopy:   %s", label, clip(x), clip(y))
		}
	}
	for _, ref := range []graph.Ref{{ThreadID: "src"}} {
		src, err := w.State(ctx, p.Checkpoints, ref, true)
		dst, err2 := w.State(ctx, p.Checkpoints, graph.Ref{ThreadID: "dst"}, true)
		same("state", src, dst, errorsJoin(err, err2))
		hs, err := g.History(ctx, p.Checkpoints, ref, graph.ListOptions{})
		hd, err2 := g.History(ctx, p.Checkpoints, graph.Ref{ThreadID: "dst"}, graph.ListOptions{})
		same("history", hs, hd, errorsJoin(err, err2))
		if len(hd) == 0 || hd[0].Metadata["thread_id"] != "dst" {
			t.Fatalf("copied metadata: %v", hd[0].Metadata)
		}
		sub := *src.Tasks[0].State
		ss, err := p.Checkpoints.List(ctx, sub, graph.ListOptions{})
		sd, err2 := p.Checkpoints.List(ctx, graph.Ref{ThreadID: "dst", NS: sub.NS}, graph.ListOptions{})
		same("subgraph checkpoints", ss, sd, errorsJoin(err, err2))
	}
	if err := p.Checkpoints.Copy(ctx, "src", "src"); err == nil {
		t.Fatal("copy onto itself accepted")
	}
	if tu, err := p.Checkpoints.Get(context.Background(), graph.Ref{ThreadID: "dst"}); tu != nil || err != nil {
		t.Fatalf("the copy leaked to another tenant: %v %v", tu, err)
	}
}

func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
