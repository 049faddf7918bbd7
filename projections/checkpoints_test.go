package projections_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
)

// cpID is the n-th checkpoint id of the script: time-ordered, as UUIDv7 ids are.
func cpID(n int) string { return fmt.Sprintf("1ef00000-0000-7000-8000-%012d", n) }

const fakeDigest = "sha256:00000000000000000000000000000000000000000000000000000000000000ff"

// checkpointScript is a fixed sequence of checkpoint events: a run interrupted and resumed, a
// subgraph, a value in the object store, a fork, and a thread deleted with its checkpoints.
func checkpointScript() []eventlog.Pending {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	n := 0
	ev := func(id, typ string, data any) eventlog.Pending {
		n++
		raw, _ := json.Marshal(data)
		return eventlog.Pending{Event: eventlog.Event{
			ID: fmt.Sprintf("01JH%022d", n), Type: typ, Version: 1, Time: t0.Add(time.Duration(n) * time.Second),
			Aggregate: eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: id}, Data: raw,
		}, Expect: eventlog.Any}
	}
	val := func(s string) json.RawMessage { return json.RawMessage(s) }
	ref := func(thread string, i int) *engine.CheckpointRef {
		return &engine.CheckpointRef{ThreadID: thread, ID: cpID(i)}
	}
	cp := func(i int, ns string, parent *engine.CheckpointRef, full bool, versions map[string]int64, blobs map[string]engine.BlobData) engine.CheckpointData {
		return engine.CheckpointData{NS: ns, Parent: parent, Full: full, Blobs: blobs,
			Metadata: val(fmt.Sprintf(`{"step":%d,"source":"loop"}`, i)),
			Checkpoint: engine.CheckpointHeader{V: 1, ID: cpID(i), TS: t0.Add(time.Duration(i) * time.Minute),
				ChannelVersions: versions, VersionsSeen: map[string]map[string]int64{"agent": {"branch:to:agent": 1}}}}
	}
	w := func(task, ch, v string) engine.PendingWriteData {
		return engine.PendingWriteData{TaskID: task, Channel: ch, Value: val(v)}
	}
	return []eventlog.Pending{
		ev("t1", engine.ThreadCreated, engine.ThreadCreatedData{}),
		ev("t1", engine.ThreadCheckpoint, cp(1, "", nil, true, map[string]int64{"__start__": 1}, map[string]engine.BlobData{
			"__start__": {Version: 1, Value: val(`{"messages":"hi"}`)}, "messages": {Value: val(`[]`)}})),
		ev("t1", engine.ThreadCheckpoint, cp(2, "", ref("t1", 1), false, map[string]int64{"__start__": 2, "messages": 1, "branch:to:agent": 1}, map[string]engine.BlobData{
			"__start__": {Version: 2}, "messages": {Version: 1, Value: val(`["hi"]`)}, "branch:to:agent": {Version: 1, Value: val(`null`)}})),
		ev("t1", engine.ThreadWrites, engine.WritesData{CheckpointID: cpID(2), Writes: []engine.PendingWriteData{
			w("task1", "messages", `["tool"]`), w("task1", "__done__", `{}`), w("task2", graph.Interrupt, `[{"value":"q","id":"i1"}]`)}}),
		ev("t1", engine.ThreadWrites, engine.WritesData{CheckpointID: cpID(2), Writes: []engine.PendingWriteData{
			w("task2", graph.Interrupt, `[{"value":"q2","id":"i1"}]`), w("task2", "__resume__", `["y"]`)}}),
		ev("t1", engine.ThreadCheckpoint, cp(3, "agent:task2", nil, true, map[string]int64{"city": 1}, map[string]engine.BlobData{
			"city": {Version: 1, Value: val(`"SF"`)}})),
		ev("t1", engine.ThreadCheckpoint, cp(4, "", ref("t1", 2), false, map[string]int64{"__start__": 2, "messages": 2, "branch:to:agent": 2}, map[string]engine.BlobData{
			"messages": {Version: 2, Ref: fakeDigest}, "branch:to:agent": {Version: 2}})),
		ev("t1", engine.ThreadWrites, engine.WritesData{CheckpointID: cpID(1), Writes: []engine.PendingWriteData{
			w("old", graph.Interrupt, `[{"value":"not the thread's","id":"i0"}]`)}}),
		ev("t1", engine.ThreadWrites, engine.WritesData{CheckpointID: cpID(99), Writes: []engine.PendingWriteData{w("x", "a", `1`)}}),
		ev("t1", engine.ThreadCheckpoint, cp(5, "", ref("t1", 1), true, map[string]int64{"__start__": 1, "messages": 1}, map[string]engine.BlobData{
			"messages": {Version: 1, Value: val(`["forked"]`)}, "extra": {Value: val(`{"k":[1,2]}`)}})),
		ev("t2", engine.ThreadCreated, engine.ThreadCreatedData{}),
		ev("t2", engine.ThreadCheckpoint, cp(6, "", nil, true, map[string]int64{"a": 1}, map[string]engine.BlobData{"a": {Version: 1, Value: val(`1`)}})),
		ev("t2", engine.ThreadCheckpoint, cp(7, "sub:1", nil, true, map[string]int64{"a": 1}, map[string]engine.BlobData{"a": {Version: 1, Value: val(`2`)}})),
		ev("t2", engine.ThreadDeleted, engine.ThreadDeletedData{}),
	}
}

func TestCheckpointsGoldenAndRebuildEqualsLive(t *testing.T) {
	l := eventlogtest.Open(t)
	ctx := context.Background()
	dir := t.TempDir()
	live := openDB(t, filepath.Join(dir, "live.db"))
	ps := []projections.Projection{projections.NewCheckpoints(live), projections.NewThreads(live)}
	p := projections.NewProjector(live, l, eventlog.RuntimeStream, ps...)
	run(t, p)
	var last uint64
	for i, pe := range checkpointScript() {
		var err error
		if last, err = l.Append(ctx, pe.Event, pe.Expect); err != nil {
			t.Fatal(err)
		}
		waitFor(t, p, last)
		th, _, _ := projections.NewThreads(live).Get("default", "t1")
		switch i {
		case 4: // interrupted on the latest root checkpoint
			if th.Status != engine.ThreadInterrupted || len(th.Interrupts) != 1 || fmt.Sprint(th.Values) != "map[messages:[hi]]" {
				t.Fatalf("after the interrupt: %+v", th)
			}
		case 6: // a newer checkpoint, whose messages are in the object store: their reference
			ref := projections.ValueRef(fakeDigest)
			if th.Status != engine.ThreadIdle || len(th.Interrupts) != 0 || !reflect.DeepEqual(th.Values, map[string]any{"messages": ref}) {
				t.Fatalf("after the next checkpoint: %+v", th)
			}
		}
	}
	if err := p.Halted(); err != nil {
		t.Fatal(err)
	}
	got := dump(t, live, ps...)
	checkGolden(t, "checkpoints.golden", got)

	rebuilt := openDB(t, filepath.Join(dir, "rebuilt.db"))
	rps := []projections.Projection{projections.NewCheckpoints(rebuilt), projections.NewThreads(rebuilt)}
	p2 := projections.NewProjector(rebuilt, l, eventlog.RuntimeStream, rps...)
	if err := p2.Reset(); err != nil {
		t.Fatal(err)
	}
	run(t, p2)
	waitFor(t, p2, last)
	if r := dump(t, rebuilt, rps...); r != got {
		t.Errorf("rebuild differs from live:\nrebuilt:\n%s\nlive:\n%s", r, got)
	}
}

func TestCheckpointsReads(t *testing.T) {
	l := eventlogtest.Open(t)
	db := openDB(t, filepath.Join(t.TempDir(), "p.db"))
	view := projections.NewCheckpoints(db)
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, view)
	run(t, p)
	var last uint64
	for _, pe := range checkpointScript() {
		var err error
		if last, err = l.Append(context.Background(), pe.Event, pe.Expect); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, p, last)

	latest, err := view.Latest("default", "t1", "")
	if err != nil || latest == nil || latest.Ref.ID != cpID(5) {
		t.Fatalf("latest: %+v %v", latest, err)
	}
	if got := fmt.Sprint(latest.Checkpoint.ChannelValues); got != `map[extra:[123 34 107 34 58 91 49 44 50 93 125] messages:[91 34 102 111 114 107 101 100 34 93]]` {
		t.Fatalf("a full checkpoint inherits nothing: %s", got)
	}
	c4, err := view.Get("default", graph.Ref{ThreadID: "t1", ID: cpID(4)})
	if err != nil || c4 == nil {
		t.Fatalf("c4: %v", err)
	}
	if c4.Blobs["messages"] != fakeDigest || len(c4.Checkpoint.ChannelValues) != 0 || c4.Parent.ID != cpID(2) {
		t.Fatalf("c4: blobs %v values %v", c4.Blobs, c4.Checkpoint.ChannelValues)
	}
	c2, _ := view.Get("default", graph.Ref{ThreadID: "t1", ID: cpID(2)})
	if len(c2.Writes) != 4 || string(c2.Writes[2].Value) != `[{"value":"q2","id":"i1"}]` || string(c2.Checkpoint.ChannelValues["branch:to:agent"]) != "null" {
		t.Fatalf("c2: writes %+v values %v", c2.Writes, c2.Checkpoint.ChannelValues)
	}
	list, err := view.List("default", graph.Ref{ThreadID: "t1"}, graph.ListOptions{Metadata: map[string]any{"source": "loop"}, Before: cpID(4)})
	if err != nil || len(list) != 2 || list[0].Ref.ID != cpID(2) || list[1].Ref.ID != cpID(1) {
		t.Fatalf("list: %d %v", len(list), err)
	}
	if sub, _ := view.Latest("default", "t1", "agent:task2"); sub == nil || string(sub.Checkpoint.ChannelValues["city"]) != `"SF"` {
		t.Fatalf("subgraph checkpoint: %+v", sub)
	}
	if gone, _ := view.Latest("default", "t2", ""); gone != nil {
		t.Fatal("checkpoints of a deleted thread are still there")
	}
}
