package projections

import (
	"errors"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// refuser refuses the event of sequence seq.
type refuser struct{ seq uint64 }

func (refuser) Name() string      { return "refuser" }
func (refuser) Buckets() []string { return nil }
func (r refuser) Apply(_ *bbolt.Tx, e eventlog.Event) error {
	if e.Seq == r.seq {
		return errors.New("refused")
	}
	return nil
}

// TestThreadsForgetWhatARolledBackTransactionChanged: the thread records the folds keep from one
// batch to the next (Threads.recent) never carry what a rolled-back transaction changed: a later
// fold reads the thread as the file has it.
func TestThreadsForgetWhatARolledBackTransactionChanged(t *testing.T) {
	l := eventlogtest.Open(t)
	db, err := OpenDB(filepath.Join(t.TempDir(), "p.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	threads := NewThreads(db)
	p := NewProjector(db, l, eventlog.RuntimeStream, threads, refuser{seq: 2})
	if _, err := p.prepare(t.Context()); err != nil {
		t.Fatal(err)
	}
	agg := eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: "t1"}
	ev := func(seq uint64, typ string, data any) preparedBatch {
		e, err := eventlog.New(agg, typ, data)
		if err != nil {
			t.Fatal(err)
		}
		e.Seq = seq
		return p.prepareBatch([]eventlog.Event{e})
	}
	if err := p.apply(ev(1, engine.ThreadCreated, engine.ThreadCreatedData{Metadata: map[string]any{"a": "1"}})); err != nil {
		t.Fatal(err)
	}
	var pe *poison
	if err := p.apply(ev(2, engine.ThreadPatched, engine.ThreadPatchedData{Metadata: map[string]any{"rolled": "back"}})); !errors.As(err, &pe) {
		t.Fatalf("the refused batch: %v", err)
	}
	if err := p.apply(ev(3, engine.ThreadPatched, engine.ThreadPatchedData{Metadata: map[string]any{"b": "2"}})); err != nil {
		t.Fatal(err)
	}
	th, ok, err := threads.Get("default", "t1")
	if err != nil || !ok {
		t.Fatalf("thread: %v %v", ok, err)
	}
	if _, bad := th.Metadata["rolled"]; bad || th.Metadata["a"] != "1" || th.Metadata["b"] != "2" {
		t.Fatalf("metadata %v, want a and b only", th.Metadata)
	}
}
