package projections_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
)

// TestThreadsFromMemoryAreTheFiles: the threads projection that folded the script answers Info,
// Get and Head for the threads it just wrote from memory, with what a reader of the file gets
// (another Threads on the same file keeps nothing in memory), deletions and TTLs included; and a
// reader changing what it got changes nothing the next reader gets.
func TestThreadsFromMemoryAreTheFiles(t *testing.T) {
	l := eventlogtest.Open(t)
	ctx := context.Background()
	db := openDB(t, filepath.Join(t.TempDir(), "p.db"))
	live := projections.NewThreads(db)
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, live)
	run(t, p)
	for _, pe := range script() {
		seq, err := l.Append(ctx, pe.Event, pe.Expect)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, p, seq)
	}
	file := projections.NewThreads(db)
	for _, id := range []string{"t1", "t2", "t3", "none"} {
		views := projections.ReadTransactions()
		info, ok, err := live.Info("default", id)
		got, gotOK, gerr := live.Get("default", id)
		head, herr := live.Head("default", id)
		fromMemory := projections.ReadTransactions() == views
		if err != nil || gerr != nil || herr != nil {
			t.Fatal(err, gerr, herr)
		}
		wantInfo, wantOK, _ := file.Info("default", id)
		want, _, _ := file.Get("default", id)
		wantHead, _ := file.Head("default", id)
		if ok != wantOK || gotOK != wantOK || !reflect.DeepEqual(info, wantInfo) || !reflect.DeepEqual(got, want) || head != wantHead {
			t.Errorf("%s: live %v %+v / %+v head %q; file %v %+v / %+v head %q", id, ok, info, got, head, wantOK, wantInfo, want, wantHead)
		}
		if want := id == "t1" || id == "t2"; fromMemory != want {
			t.Errorf("%s: answered from memory %v, want %v", id, fromMemory, want)
		}
		if ok {
			info.Metadata["changed"] = true
			if again, _, _ := live.Info("default", id); again.Metadata["changed"] != nil {
				t.Errorf("%s: a reader's change shows to the next", id)
			}
		}
	}
}
