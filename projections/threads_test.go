package projections_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
)

// TestThreadInfoIsGetWithoutValues: Info reads everything Get does but the values.
func TestThreadInfoIsGetWithoutValues(t *testing.T) {
	l := eventlogtest.Open(t)
	agg := eventlog.Aggregate{Kind: "thread", Tenant: "default", ID: "i"}
	var seq uint64
	for _, ev := range []struct {
		typ  string
		data any
	}{
		{engine.ThreadCreated, engine.ThreadCreatedData{Metadata: map[string]any{"user": "a"}}},
		{engine.ThreadCheckpoint, engine.CheckpointData{
			Checkpoint: engine.CheckpointHeader{V: 1, ID: "c1", TS: time.Now().UTC(), ChannelVersions: map[string]int64{"messages": 1}},
			Metadata:   json.RawMessage(`{}`),
			Blobs:      map[string]engine.BlobData{"messages": {Version: 1, Value: json.RawMessage(`["hi","there"]`)}},
		}},
	} {
		seq = appendEvent(t, l, agg, ev.typ, ev.data)
	}
	db := openDB(t, filepath.Join(t.TempDir(), "p.db"))
	threads := projections.NewThreads(db)
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, threads)
	run(t, p)
	waitFor(t, p, seq)

	full, ok, err := threads.Get("default", "i")
	if err != nil || !ok || full.Values == nil {
		t.Fatalf("Get = %+v, %v, %v; want the thread with values", full, ok, err)
	}
	info, ok, err := threads.Info("default", "i")
	if err != nil || !ok {
		t.Fatalf("Info: %v, %v", ok, err)
	}
	if info.Values != nil {
		t.Fatalf("Info values = %v, want none", info.Values)
	}
	full.Values = nil
	a, _ := json.Marshal(full)
	b, _ := json.Marshal(info)
	if string(a) != string(b) {
		t.Fatalf("Info differs from Get beyond the values:\nGet:  %s\nInfo: %s", a, b)
	}
	if _, ok, err := threads.Info("default", "nope"); ok || err != nil {
		t.Fatalf("Info of a missing thread: %v, %v", ok, err)
	}
}
