package projections_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/goldentest"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
	"github.com/jetgraph/jetgraph/projections/projectionstest"
)

// counter counts the events it folds, so double or missed application shows.
type counter struct{}

func (counter) Name() string      { return "counter" }
func (counter) Buckets() []string { return []string{"counter"} }
func (counter) Apply(tx *bbolt.Tx, e eventlog.Event) error {
	b := tx.Bucket([]byte("counter"))
	var n uint64
	if v := b.Get([]byte("n")); v != nil {
		n = binary.BigEndian.Uint64(v)
	}
	return b.Put([]byte("n"), binary.BigEndian.AppendUint64(nil, n+1))
}

func count(t *testing.T, db *projections.DB) uint64 {
	t.Helper()
	var n uint64
	_ = db.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket([]byte("counter")).Get([]byte("n")); v != nil {
			n = binary.BigEndian.Uint64(v)
		}
		return nil
	})
	return n
}

// run starts p and returns a function that stops it and waits for it to return.
func run(t *testing.T, p *projections.Projector) func() {
	t.Helper()
	return projectionstest.Run(t, p)
}

func openDB(t *testing.T, path string) *projections.DB {
	t.Helper()
	return projectionstest.OpenDB(t, path)
}

func appendThreads(t *testing.T, l *eventlog.Log, n int, prefix string) uint64 {
	t.Helper()
	var seq uint64
	for i := range n {
		e, err := eventlog.New(eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: fmt.Sprintf("%s%d", prefix, i)},
			engine.ThreadCreated, engine.ThreadCreatedData{Metadata: map[string]any{"i": i}})
		if err != nil {
			t.Fatal(err)
		}
		if seq, err = l.Append(context.Background(), e, eventlog.At(0)); err != nil {
			t.Fatal(err)
		}
	}
	return seq
}

// appendEvent appends one event of agg, as any writer, and returns its sequence.
func appendEvent(t *testing.T, l *eventlog.Log, agg eventlog.Aggregate, typ string, data any) uint64 {
	t.Helper()
	return eventlogtest.Append(t, l, agg, typ, data)
}

func waitFor(t *testing.T, p *projections.Projector, seq uint64) {
	t.Helper()
	projectionstest.WaitFor(t, p, seq)
}

func TestProjectorResumesFromItsCursor(t *testing.T) {
	l := eventlogtest.Open(t)
	path := filepath.Join(t.TempDir(), "p.db")
	db := openDB(t, path)
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, counter{}, projections.NewThreads(db))
	stop := run(t, p)
	waitFor(t, p, appendThreads(t, l, 50, "a"))
	stop()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Appended while no projector runs, as after a crash.
	last := appendThreads(t, l, 30, "b")

	db = openDB(t, path)
	p = projections.NewProjector(db, l, eventlog.RuntimeStream, counter{}, projections.NewThreads(db))
	run(t, p)
	waitFor(t, p, last)
	if n := count(t, db); n != 80 {
		t.Fatalf("counter folded %d events, want exactly 80", n)
	}
	if _, ok, _ := projections.NewThreads(db).Get("default", "b29"); !ok {
		t.Fatal("thread appended while stopped is missing")
	}
}

func TestCorruptFileIsRebuilt(t *testing.T) {
	l := eventlogtest.Open(t)
	last := appendThreads(t, l, 10, "t")
	path := filepath.Join(t.TempDir(), "p.db")
	if err := os.WriteFile(path, bytes.Repeat([]byte("not a bolt file "), 512), 0o600); err != nil {
		t.Fatal(err)
	}
	db := openDB(t, path)
	threads := projections.NewThreads(db)
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, threads)
	run(t, p)
	waitFor(t, p, last)
	if _, total, _ := threads.Search("default", engine.ThreadQuery{}); total != 10 {
		t.Fatalf("rebuilt %d threads, want 10", total)
	}
	aside, _ := filepath.Glob(path + ".corrupt-*")
	if len(aside) != 1 {
		t.Fatalf("corrupt file not kept aside: %v", aside)
	}
}

// TestRefusedEventHaltsTheProjection: a fold that refuses an acknowledged event stops the
// projection right before it (the events before it folded, none after it skipped to), turns the
// health red and fails the writers waiting for it; a restart tries the event again.
func TestRefusedEventHaltsTheProjection(t *testing.T) {
	l := eventlogtest.Open(t)
	ctx := context.Background()
	before := appendThreads(t, l, 2, "before")
	bad := eventlog.Event{ID: eventlog.NewID(time.Now()), Type: engine.ThreadCreated, Version: 1, Time: time.Now(),
		Aggregate: eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: "bad"}, Data: json.RawMessage(`{"metadata": 7}`)}
	badSeq, err := l.Append(ctx, bad, eventlog.Any)
	if err != nil {
		t.Fatal(err)
	}
	last := appendThreads(t, l, 3, "after")
	path := filepath.Join(t.TempDir(), "p.db")
	db := openDB(t, path)
	threads := projections.NewThreads(db)
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, counter{}, threads)
	stop := run(t, p)
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err = p.WaitFor(wait, last)
	if err == nil || wait.Err() != nil || p.Halted() == nil {
		t.Fatalf("waiting past the refused event: %v (halted: %v)", err, p.Halted())
	}
	if p.Healthy() == nil || !strings.Contains(p.Healthy().Error(), fmt.Sprintf("event %d", badSeq)) {
		t.Fatalf("health %v, want the refused event named", p.Healthy())
	}
	if p.Applied() != before {
		t.Fatalf("applied up to %d, want %d (right before the refused event)", p.Applied(), before)
	}
	// Neither projection folded the bad event or anything after it.
	if n := count(t, db); n != 2 {
		t.Fatalf("counter = %d, want 2", n)
	}
	if _, total, _ := threads.Search("default", engine.ThreadQuery{}); total != 2 {
		t.Fatalf("%d threads, want 2", total)
	}
	// A restart starts from the cursor and halts at the same event.
	stop()
	db.Close()
	db = openDB(t, path)
	p = projections.NewProjector(db, l, eventlog.RuntimeStream, counter{}, projections.NewThreads(db))
	run(t, p)
	if err := p.WaitFor(wait, last); err == nil || p.Applied() != before {
		t.Fatalf("after a restart: %v, applied %d", err, p.Applied())
	}
}

// script is a fixed sequence of thread events with fixed ids and times, so that the projection
// it produces can be pinned in a golden file.
func script() []eventlog.Pending {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC) // (nanoseconds: records keep microseconds)
	agg := func(id string) eventlog.Aggregate {
		return eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: id}
	}
	ev := func(i int, id, typ string, data any) eventlog.Pending {
		raw, _ := json.Marshal(data)
		return eventlog.Pending{Event: eventlog.Event{
			ID: fmt.Sprintf("01JG%022d", i), Type: typ, Aggregate: agg(id), Version: 1,
			Time: t0.Add(time.Duration(i) * time.Second), Data: raw,
		}, Expect: eventlog.Any}
	}
	return []eventlog.Pending{
		ev(1, "t1", engine.ThreadCreated, engine.ThreadCreatedData{Metadata: map[string]any{"user": "a"}}),
		ev(2, "t2", engine.ThreadCreated, engine.ThreadCreatedData{TTL: &engine.TTLSpec{Strategy: "delete", Minutes: 5}}),
		ev(3, "t1", engine.ThreadPatched, engine.ThreadPatchedData{Metadata: map[string]any{"k": 2.0}}),
		ev(4, "t3", engine.ThreadCreated, engine.ThreadCreatedData{Metadata: map[string]any{"user": "b"}}),
		ev(5, "t2", engine.ThreadPatched, engine.ThreadPatchedData{TTL: &engine.TTLSpec{Strategy: "delete", Minutes: 10}}),
		ev(6, "t3", engine.ThreadDeleted, engine.ThreadDeletedData{}),
	}
}

// dump renders every bucket the projections own, in key order (projectionstest.Dump).
func dump(t *testing.T, db *projections.DB, ps ...projections.Projection) string {
	t.Helper()
	return projectionstest.Dump(t, db, nil, ps...)
}

// checkGolden compares got with testdata/name (goldentest rewrites it).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	goldentest.Check(t, filepath.Join("testdata", name), []byte(got))
}

func TestThreadsGoldenAndRebuildEqualsLive(t *testing.T) {
	l := eventlogtest.Open(t)
	ctx := context.Background()
	dir := t.TempDir()

	live := openDB(t, filepath.Join(dir, "live.db"))
	liveThreads := projections.NewThreads(live)
	p := projections.NewProjector(live, l, eventlog.RuntimeStream, liveThreads)
	run(t, p)
	var last uint64
	for _, pe := range script() {
		var err error
		if last, err = l.Append(ctx, pe.Event, pe.Expect); err != nil {
			t.Fatal(err)
		}
		waitFor(t, p, last) // applied one by one, as live traffic is
	}
	got := dump(t, live, liveThreads)

	checkGolden(t, "threads.golden", got)

	// A second file, reset and replayed in one go, must hold exactly the same.
	rebuilt := openDB(t, filepath.Join(dir, "rebuilt.db"))
	rebuiltThreads := projections.NewThreads(rebuilt)
	p2 := projections.NewProjector(rebuilt, l, eventlog.RuntimeStream, rebuiltThreads)
	if err := p2.Reset(); err != nil {
		t.Fatal(err)
	}
	run(t, p2)
	waitFor(t, p2, last)
	if r := dump(t, rebuilt, rebuiltThreads); r != got {
		t.Errorf("rebuild differs from live:\nrebuilt:\n%s\nlive:\n%s", r, got)
	}
}

func TestFileLeftOpenBeforeAMachineCrashIsRebuilt(t *testing.T) {
	l := eventlogtest.Open(t)
	last := appendThreads(t, l, 3, "t")
	path := filepath.Join(t.TempDir(), "p.db")
	// A file a process had open when the machine went down: its boot id is not this boot's.
	b, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bbolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists([]byte("_meta"))
		if err != nil {
			return err
		}
		return meta.Put([]byte("open_on_boot"), []byte("an-earlier-boot"))
	})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()

	db := openDB(t, path)
	threads := projections.NewThreads(db)
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, threads)
	stop := run(t, p)
	waitFor(t, p, last)
	if aside, _ := filepath.Glob(path + ".corrupt-*"); len(aside) != 1 {
		t.Fatalf("untrustworthy file not moved aside: %v", aside)
	}
	stop()
	// A clean close leaves nothing to distrust: reopening keeps the file.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	openDB(t, path)
	if aside, _ := filepath.Glob(path + ".corrupt-*"); len(aside) != 1 {
		t.Fatalf("cleanly closed file was moved aside: %v", aside)
	}
}

// TestLingerGathersEventsIntoFewTransactions: with Linger, events appended one at a time shortly
// after each other are applied in a few transactions, each folded once.
func TestLingerGathersEventsIntoFewTransactions(t *testing.T) {
	l := eventlogtest.Open(t)
	db := openDB(t, filepath.Join(t.TempDir(), "p.db"))
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, counter{})
	p.Linger = time.Second // long against 20 appends in a row, so the test is not about speed
	var (
		mu      sync.Mutex
		batches []int
	)
	p.OnApply = func(events int, _ time.Duration) { mu.Lock(); batches = append(batches, events); mu.Unlock() }
	run(t, p)
	waitFor(t, p, appendThreads(t, l, 20, "a"))
	if n := count(t, db); n != 20 {
		t.Fatalf("counter folded %d events, want exactly 20", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(batches) > 5 {
		t.Fatalf("20 events applied in %d transactions %v: the batches did not linger", len(batches), batches)
	}
}

// TestBusyLingerNeverDelaysALoneWriter: a writer that waits for each of its events to be folded
// before the next is never held by BusyLinger (an hour here: a batch that lingered would never
// be folded within the test's wait).
func TestBusyLingerNeverDelaysALoneWriter(t *testing.T) {
	l := eventlogtest.Open(t)
	db := openDB(t, filepath.Join(t.TempDir(), "p.db"))
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, counter{})
	p.BusyLinger = time.Hour
	run(t, p)
	for i := range 20 {
		waitFor(t, p, appendThreads(t, l, 1, fmt.Sprint("lone", i)))
	}
	if n := count(t, db); n != 20 {
		t.Fatalf("counter folded %d events, want 20", n)
	}
}
