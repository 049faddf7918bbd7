package checkpoints_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/checkpoints"
	"github.com/jetgraph/jetgraph/engine/graph"
)

func blobKeys(d *engine.CheckpointData) []string { return slices.Sorted(maps.Keys(d.Blobs)) }

// checkpointEvents returns the checkpoint payloads of a thread of the default tenant.
func (e *env) checkpointEvents(t *testing.T, thread string) []*engine.CheckpointData {
	var out []*engine.CheckpointData
	for _, v := range e.events(t, engine.DefaultTenant, thread) {
		if d, ok := v.(*engine.CheckpointData); ok {
			out = append(out, d)
		}
	}
	return out
}

func TestCheckpointEventsCarryOnlyChangedChannels(t *testing.T) {
	e := open(t)
	b := &book{t: t, s: e.saver, tuples: map[string]*graph.Tuple{}}
	ctx := context.Background()
	long := `["` + strings.Repeat("a long conversation ", 100) + `"]`
	c1 := b.put(ctx, "t", "", nil, newCP(map[string]string{"messages": long, "n": `1`, "init": `[]`}, map[string]int64{"messages": 1, "n": 1}), md("input", -1))
	c2 := b.put(ctx, "t", "", &c1, newCP(map[string]string{"messages": long, "n": `2`, "init": `[]`}, map[string]int64{"messages": 1, "n": 2}), md("loop", 0))
	c3 := b.put(ctx, "t", "", &c2, newCP(map[string]string{"messages": long, "init": `[]`}, map[string]int64{"messages": 1, "n": 3}), md("loop", 1))
	b.put(ctx, "t", "", &c1, newCP(map[string]string{"messages": long, "n": `5`, "init": `[]`}, map[string]int64{"messages": 1, "n": 2}), md("fork", 0))
	b.get(ctx, c3, c3.ID)

	evs := e.checkpointEvents(t, "t")
	want := []struct {
		keys string
		full bool
	}{
		{"[init messages n]", true}, // the first: everything
		{"[n]", false},              // the long list is not written again
		{"[n]", false},              // n has no value any more
		{"[init messages n]", true}, // a fork: its parent is not the newest
	}
	if len(evs) != len(want) {
		t.Fatalf("%d checkpoint events, want %d", len(evs), len(want))
	}
	for i, w := range want {
		if got := blobKeys(evs[i]); strings.Join(got, " ") != strings.Trim(w.keys, "[]") || evs[i].Full != w.full {
			t.Errorf("event %d: blobs %v full %v, want %s full %v", i, got, evs[i].Full, w.keys, w.full)
		}
	}
	if evs[2].Blobs["n"].Value != nil || evs[2].Blobs["n"].Version != 3 {
		t.Errorf("a removed value is a blob without value: %+v", evs[2].Blobs["n"])
	}
}

// checkDiffs checks that every diff event of events carries exactly the channels whose version
// changed since its parent, and counts the diff events and those that left the messages alone.
func checkDiffs(t *testing.T, events []*engine.CheckpointData) (diffs, withoutMessages int) {
	t.Helper()
	versions := map[string]map[string]int64{}
	for _, d := range events {
		versions[d.Checkpoint.ID] = d.Checkpoint.ChannelVersions
		if d.Full {
			continue
		}
		diffs++
		parent := versions[d.Parent.ID]
		var changed []string
		for ch, v := range d.Checkpoint.ChannelVersions {
			if parent[ch] != v {
				changed = append(changed, ch)
			}
		}
		slices.Sort(changed)
		if got := blobKeys(d); !slices.Equal(got, changed) {
			t.Errorf("checkpoint %s carries %v, changed %v", d.Checkpoint.ID, got, changed)
		}
		if _, ok := d.Blobs["messages"]; !ok {
			withoutMessages++ // a step that left the messages alone
		}
	}
	return diffs, withoutMessages
}

// TestGraphRunEventsAreDiffs checks, over a real run, that every diff event carries exactly the
// channels whose version changed since its parent.
func TestGraphRunEventsAreDiffs(t *testing.T) {
	e := open(t)
	r := &recorder{t: t, ctx: context.Background(), saver: e.saver}
	agentScript(r, false)
	diffs, withoutMessages := checkDiffs(t, e.checkpointEvents(t, "t1"))
	if diffs == 0 || withoutMessages == 0 {
		t.Fatalf("%d diff events, %d without the messages: want some of each", diffs, withoutMessages)
	}
}

func TestLargeValuesGoThroughTheObjectStore(t *testing.T) {
	e := open(t)
	ctx := context.Background()
	b := &book{t: t, s: e.saver, tuples: map[string]*graph.Tuple{}}
	doc := `"` + strings.Repeat("x", checkpoints.MaxInline) + `"`
	c1 := b.put(ctx, "t", "", nil, newCP(map[string]string{"doc": doc, "a": `1`}, map[string]int64{"doc": 1, "a": 1}), md("input", -1))
	c2 := b.put(ctx, "t", "", &c1, newCP(map[string]string{"doc": doc, "a": `2`}, map[string]int64{"doc": 1, "a": 2}), md("loop", 0))
	big := json.RawMessage(`{"big":` + doc + `}`)
	b.writes(ctx, c2, graph.PendingWrite{TaskID: "t1", Channel: "doc", Value: big}, graph.PendingWrite{TaskID: "t1", Channel: "a", Value: raw(`3`)})
	third := `"` + strings.Repeat("y", 300<<10) + `"`
	c3 := b.put(ctx, "t", "", &c2, newCP(map[string]string{"doc": third, "a": third, "b": third[:len(third)-2] + `z"`}, map[string]int64{"doc": 2, "a": 3, "b": 1}), md("loop", 1))

	evs := e.events(t, engine.DefaultTenant, "t")
	d1, d2, w, d3 := evs[0].(*engine.CheckpointData), evs[1].(*engine.CheckpointData), evs[2].(*engine.WritesData), evs[3].(*engine.CheckpointData)
	digest := engine.BlobDigest([]byte(doc))
	if d1.Blobs["doc"].Ref != digest || d1.Blobs["doc"].Value != nil || string(d1.Blobs["a"].Value) != "1" {
		t.Fatalf("first checkpoint: %+v", d1.Blobs)
	}
	if got := blobKeys(d2); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("an unchanged large value was written again: %v", got)
	}
	if w.Writes[0].Ref != engine.BlobDigest(big) || w.Writes[0].Value != nil || w.Writes[1].Ref != "" {
		t.Fatalf("writes: %+v", w.Writes)
	}
	refs := 0
	for _, bl := range d3.Blobs {
		if bl.Ref != "" {
			refs++
		}
	}
	if refs != 2 {
		t.Fatalf("three values of 300 KiB: %d went to the object store, want 2 (at most 512 KiB inline)", refs)
	}
	obs, err := e.log.OpenObjects(ctx, checkpoints.BlobBucket, 0)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := obs.Info(ctx, digest); err != nil || info.Size != uint64(len(doc)) {
		t.Fatalf("object %s: %+v %v", digest, info, err)
	}
	// Read back through this saver (its cache) and a new one (the object store).
	for _, s := range []graph.Saver{e.saver, checkpoints.New(e.log, e.proj, e.view)} {
		b.s = s
		b.get(ctx, c1, c1.ID)
		b.get(ctx, c2, c2.ID)
		b.get(ctx, c3, c3.ID)
		b.list(ctx, graph.Ref{ThreadID: "t"}, graph.ListOptions{}, c3.ID, c2.ID, c1.ID)
	}
}

func TestOffloadIsDeterministic(t *testing.T) {
	v := json.RawMessage(`"` + strings.Repeat("v", 200<<10) + `"`)
	d := engine.CheckpointData{Blobs: map[string]engine.BlobData{"a": {Value: v}, "b": {Value: v}, "c": {Value: v}, "d": {Value: raw(`1`)}}}
	objs := checkpoints.OffloadCheckpoint(&d)
	if len(objs) != 1 || d.Blobs["a"].Ref == "" || d.Blobs["b"].Ref != "" || d.Blobs["c"].Ref != "" || string(d.Blobs["d"].Value) != "1" {
		t.Fatalf("objects %d, blobs a=%q b=%q c=%q", len(objs), d.Blobs["a"].Ref, d.Blobs["b"].Ref, d.Blobs["c"].Ref)
	}
	if string(objs[0].Data) != string(v) || objs[0].Digest != engine.BlobDigest(v) {
		t.Fatal("object is not the value under its digest")
	}
}
