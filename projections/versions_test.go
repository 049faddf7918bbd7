package projections_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
)

// TestVersionFromMemoryIsTheFiles: the versions the last transactions wrote are answered
// without reading the file, and are what the file holds (a restarted projector reads them from
// it); an event whose transaction was rolled back leaves no version.
func TestVersionFromMemoryIsTheFiles(t *testing.T) {
	l := eventlogtest.Open(t)
	ctx := context.Background()
	thread := func(id string) eventlog.Aggregate {
		return eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: id}
	}
	want := map[string]uint64{"a": appendEvent(t, l, thread("a"), engine.ThreadCreated, engine.ThreadCreatedData{})}
	want["b"] = appendEvent(t, l, thread("b"), engine.ThreadCreated, engine.ThreadCreatedData{})
	want["a"] = appendEvent(t, l, thread("a"), engine.ThreadPatched, engine.ThreadPatchedData{Metadata: map[string]any{"x": 1}})
	bad := eventlog.Event{ID: eventlog.NewID(time.Now()), Type: engine.ThreadCreated, Version: 1, Time: time.Now(),
		Aggregate: thread("bad"), Data: json.RawMessage(`{"metadata": 7}`)}
	if _, err := l.Append(ctx, bad, eventlog.Any); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.db")
	db := openDB(t, path)
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, counter{}, projections.NewThreads(db))
	stop := run(t, p)
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := p.WaitFor(wait, want["a"]); err != nil {
		t.Fatal(err)
	}
	for p.Halted() == nil && wait.Err() == nil {
		time.Sleep(time.Millisecond) // until the bad event's transaction was tried and rolled back
	}
	check := func(p *projections.Projector, fromMemory bool) {
		t.Helper()
		for _, id := range []string{"a", "b", "bad", "none"} {
			views := projections.ReadTransactions()
			v, err := p.Version(thread(id))
			if err != nil || v != want[id] {
				t.Errorf("Version(%s) = %d, %v; want %d", id, v, err, want[id])
			}
			if read := projections.ReadTransactions() > views; want[id] != 0 && read == fromMemory {
				t.Errorf("Version(%s) read the file: %v; want %v", id, read, !fromMemory)
			}
		}
	}
	check(p, true)
	stop()
	db.Close()
	db = openDB(t, path)
	p = projections.NewProjector(db, l, eventlog.RuntimeStream, counter{}, projections.NewThreads(db))
	run(t, p)
	for p.Halted() == nil && wait.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	check(p, false)
}
