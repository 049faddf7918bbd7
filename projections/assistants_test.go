package projections_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
)

// asstFixture is a real log with the assistants projection running on it.
type asstFixture struct {
	t    *testing.T
	log  *eventlog.Log
	db   *projections.DB
	view *projections.Assistants
	proj *projections.Projector
	stop func()
	last uint64
}

func asstOpen(t *testing.T) *asstFixture {
	t.Helper()
	l := eventlogtest.Open(t)
	db, err := projections.OpenDB(filepath.Join(t.TempDir(), "p.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	f := &asstFixture{t: t, log: l, db: db, view: projections.NewAssistants(db)}
	f.run()
	return f
}

// run starts a projector over the fixture's file; stop ends it and waits for it.
func (f *asstFixture) run() {
	f.proj = projections.NewProjector(f.db, f.log, eventlog.RuntimeStream, f.view)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = f.proj.Run(ctx) }()
	f.stop = func() { cancel(); <-done }
	f.t.Cleanup(f.stop)
}

// append stores one event of assistant id in tenant and waits until it is folded.
func (f *asstFixture) append(tenant, id, typ string, data any) {
	f.t.Helper()
	agg := eventlog.Aggregate{Kind: "assistant", Tenant: tenant, ID: id}
	e, err := eventlog.New(agg, typ, data)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	seq, err := f.log.Append(ctx, e, eventlog.Any)
	if err != nil {
		f.t.Fatal(err)
	}
	f.last = seq
	if err := f.proj.WaitFor(ctx, seq); err != nil {
		f.t.Fatal(err)
	}
}

func asstSpec(graph, name string, metadata map[string]any) engine.AssistantSpec {
	return engine.AssistantSpec{GraphID: graph, Name: name, Metadata: metadata}
}

func asstCreated(spec engine.AssistantSpec) engine.AssistantCreatedData {
	return engine.AssistantCreatedData{AssistantSpec: spec}
}

func TestAssistantsFold(t *testing.T) {
	f := asstOpen(t)
	const a1, a2, a3 = "a1", "a2", "a3"
	desc := "second"
	f.append("default", a1, engine.AssistantCreated, asstCreated(asstSpec("echo", "", map[string]any{"v": 1.0})))
	f.append("default", a1, engine.AssistantUpdated, engine.AssistantUpdatedData{Version: 2,
		AssistantSpec: engine.AssistantSpec{GraphID: "echo", Name: "two", Description: &desc,
			Config: map[string]any{"tags": []any{"x"}}, Metadata: map[string]any{"v": 2.0}}})
	f.append("default", a1, engine.AssistantUpdated, engine.AssistantUpdatedData{Version: 3,
		AssistantSpec: asstSpec("agent", "three", map[string]any{"v": 3.0})})
	f.append("default", a1, engine.AssistantLatestSet, engine.AssistantLatestSetData{Version: 2})
	f.append("default", a2, engine.AssistantCreated, asstCreated(asstSpec("echo", "doomed", nil)))
	f.append("default", a2, engine.AssistantUpdated, engine.AssistantUpdatedData{Version: 2, AssistantSpec: asstSpec("echo", "doomed", nil)})
	f.append("default", a2, engine.AssistantDeleted, engine.AssistantDeletedData{})
	f.append("other", a3, engine.AssistantCreated, asstCreated(asstSpec("echo", "elsewhere", nil)))

	got, ok, err := f.view.Get("default", a1)
	if err != nil || !ok {
		t.Fatalf("get a1: ok=%v err=%v", ok, err)
	}
	if got.Version != 2 || got.Name != "two" || got.Description == nil || *got.Description != desc ||
		!reflect.DeepEqual(got.Metadata, map[string]any{"v": 2.0}) || !reflect.DeepEqual(got.Context, map[string]any{}) {
		t.Errorf("a1 after latest_set 2 = %+v", got)
	}
	if !got.UpdatedAt.After(got.CreatedAt.Time) {
		t.Errorf("updated_at %v should be after created_at %v", got.UpdatedAt, got.CreatedAt)
	}
	vs, total, err := f.view.Versions("default", a1, nil, 10, 0)
	if err != nil || total != 3 {
		t.Fatalf("versions: total=%d err=%v", total, err)
	}
	if vs[0].Version != 3 || vs[1].Version != 2 || vs[2].Version != 1 {
		t.Errorf("versions not newest first: %d %d %d", vs[0].Version, vs[1].Version, vs[2].Version)
	}
	if vs[2].Name != "echo" || vs[2].Description != nil || !reflect.DeepEqual(vs[2].Config, map[string]any{}) {
		t.Errorf("version 1 defaults: %+v", vs[2])
	}
	if vs[2].CreatedAt != got.CreatedAt {
		t.Errorf("version 1 created_at %v, assistant created_at %v", vs[2].CreatedAt, got.CreatedAt)
	}
	if vs, total, _ := f.view.Versions("default", a1, map[string]any{"v": 3}, 10, 0); total != 1 || vs[0].Version != 3 {
		t.Errorf("versions with metadata v=3: total %d %+v", total, vs)
	}
	if vs, total, _ := f.view.Versions("default", a1, nil, 1, 1); total != 3 || len(vs) != 1 || vs[0].Version != 2 {
		t.Errorf("versions page 2 of 1: total %d %+v", total, vs)
	}
	if n, err := f.view.MaxVersion("default", a1); n != 3 || err != nil {
		t.Errorf("max version a1 = %d, %v; want 3", n, err)
	}
	if v, ok, _ := f.view.Version("default", a1, 3); !ok || v.GraphID != "agent" {
		t.Errorf("version 3 = %+v, %v", v, ok)
	}
	if _, ok, _ := f.view.Version("default", a1, 4); ok {
		t.Error("version 4 exists")
	}
	if _, ok, _ := f.view.Get("default", a2); ok {
		t.Error("deleted a2 still there")
	}
	if n, _ := f.view.MaxVersion("default", a2); n != 0 {
		t.Errorf("deleted a2 keeps versions up to %d", n)
	}
	if _, total, _ := f.view.Search("default", engine.AssistantQuery{}); total != 1 {
		t.Errorf("default tenant holds %d assistants, want 1", total)
	}
	if as, _, _ := f.view.Search("other", engine.AssistantQuery{}); len(as) != 1 || as[0].AssistantID != a3 {
		t.Errorf("other tenant: %+v", as)
	}
}

func TestAssistantsSearch(t *testing.T) {
	f := asstOpen(t)
	for _, a := range []struct{ id, graph, name, team string }{
		{"b", "echo", "My Echo", "x"},
		{"a", "agent", "Zed agent", "y"},
		{"c", "echo", "echo", "x"},
		{"d", "agent", "other ECHO bot", "x"},
	} {
		f.append("default", a.id, engine.AssistantCreated, asstCreated(asstSpec(a.graph, a.name, map[string]any{"team": a.team})))
	}
	// b becomes the most recently updated.
	f.append("default", "b", engine.AssistantUpdated, engine.AssistantUpdatedData{Version: 2,
		AssistantSpec: asstSpec("echo", "My Echo", map[string]any{"team": "x"})})

	tests := []struct {
		name  string
		q     engine.AssistantQuery
		ids   []string
		total int
	}{
		{"default order is created_at desc", engine.AssistantQuery{}, []string{"d", "c", "a", "b"}, 4},
		{"graph_id", engine.AssistantQuery{GraphID: "echo"}, []string{"c", "b"}, 2},
		{"name is a case-insensitive substring", engine.AssistantQuery{Name: "eCHo"}, []string{"d", "c", "b"}, 3},
		{"metadata", engine.AssistantQuery{Metadata: map[string]any{"team": "y"}}, []string{"a"}, 1},
		{"all filters", engine.AssistantQuery{GraphID: "agent", Name: "echo", Metadata: map[string]any{"team": "x"}}, []string{"d"}, 1},
		{"sort by name asc", engine.AssistantQuery{SortBy: "name", SortOrder: "asc"}, []string{"b", "a", "c", "d"}, 4},
		{"sort by assistant_id desc", engine.AssistantQuery{SortBy: "assistant_id"}, []string{"d", "c", "b", "a"}, 4},
		{"sort by graph_id asc, ties by id", engine.AssistantQuery{SortBy: "graph_id", SortOrder: "asc"}, []string{"a", "d", "b", "c"}, 4},
		{"sort by updated_at desc", engine.AssistantQuery{SortBy: "updated_at"}, []string{"b", "d", "c", "a"}, 4},
		{"page", engine.AssistantQuery{SortBy: "assistant_id", SortOrder: "asc", Limit: 2, Offset: 1}, []string{"b", "c"}, 4},
		{"offset past the end", engine.AssistantQuery{Offset: 10}, []string{}, 4},
		{"no match", engine.AssistantQuery{GraphID: "nope"}, []string{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as, total, err := f.view.Search("default", tt.q)
			if err != nil {
				t.Fatal(err)
			}
			ids := []string{}
			for _, a := range as {
				ids = append(ids, a.AssistantID)
			}
			if !reflect.DeepEqual(ids, tt.ids) || total != tt.total {
				t.Errorf("got %v (total %d), want %v (total %d)", ids, total, tt.ids, tt.total)
			}
		})
	}
}

// asstDump returns every record of the assistants projection.
func asstDump(t *testing.T, db *projections.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := db.View(func(tx *bbolt.Tx) error {
		for _, name := range projections.NewAssistants(db).Buckets() {
			b := tx.Bucket([]byte(name))
			if b == nil {
				continue // dropped by Reset
			}
			if err := b.ForEach(func(k, v []byte) error {
				out[name+"|"+string(k)] = string(v)
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
	return out
}

func TestAssistantsRebuildEqual(t *testing.T) {
	f := asstOpen(t)
	f.append("default", "x", engine.AssistantCreated, asstCreated(asstSpec("echo", "x", map[string]any{"k": []any{1.0, "a"}})))
	f.append("default", "x", engine.AssistantUpdated, engine.AssistantUpdatedData{Version: 2, AssistantSpec: asstSpec("agent", "", nil)})
	f.append("default", "x", engine.AssistantLatestSet, engine.AssistantLatestSetData{Version: 1})
	f.append("default", "y", engine.AssistantCreated, asstCreated(asstSpec("echo", "y", nil)))
	f.append("default", "z", engine.AssistantCreated, asstCreated(asstSpec("echo", "z", nil)))
	f.append("default", "z", engine.AssistantDeleted, engine.AssistantDeletedData{})
	f.append("t2", "y", engine.AssistantCreated, asstCreated(asstSpec("echo", "y2", nil)))
	live := asstDump(t, f.db)
	// x: current + 2 versions; y and t2/y: current + 1 each; z is gone.
	if len(live) != 7 {
		t.Fatalf("live projection holds %d records: %v", len(live), live)
	}

	f.stop()
	f.proj = projections.NewProjector(f.db, f.log, eventlog.RuntimeStream, f.view)
	if err := f.proj.Reset(); err != nil {
		t.Fatal(err)
	}
	if got := asstDump(t, f.db); len(got) != 0 {
		t.Fatalf("after Reset the projection still holds %d records", len(got))
	}
	f.run()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.proj.WaitFor(ctx, f.last); err != nil {
		t.Fatal(err)
	}
	rebuilt := asstDump(t, f.db)
	if !reflect.DeepEqual(live, rebuilt) {
		a, _ := json.MarshalIndent(live, "", " ")
		b, _ := json.MarshalIndent(rebuilt, "", " ")
		t.Errorf("rebuild differs:\nlive: %s\nrebuilt: %s", a, b)
	}
}
