package assistants_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/assistants"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/threads"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

var graphIDs = []string{"echo", "agent", "simple_runtime"}

// served is the registry the test processes serve: graphIDs of the example graphs.
func served() *graphs.Registry {
	r, err := graphs.Examples().Select(graphIDs)
	if err != nil {
		panic(err)
	}
	return r
}

// start opens and starts a platform on log l with its projection file in data.
func start(t *testing.T, l *eventlog.Log, data string) *platform.Platform {
	t.Helper()
	p, err := tryStart(t, l, data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tryStart is start for goroutines other than the test's.
func tryStart(t *testing.T, l *eventlog.Log, data string) (*platform.Platform, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := platform.Open(ctx, platform.Config{Data: data, Graphs: served(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, l)
	if err != nil {
		return nil, err
	}
	t.Cleanup(p.Close)
	return p, p.Start(ctx)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestSystemID(t *testing.T) {
	for graph, want := range map[string]string{
		"agent": "fe096781-5601-53d2-b2f6-0d3403f7e9ca", // as on the reference servers
	} {
		if got := assistants.SystemID(graph); got != want {
			t.Errorf("SystemID(%q) = %s, want %s", graph, got, want)
		}
	}
}

// eventsOf returns the types of the events of assistant id.
func eventsOf(t *testing.T, l *eventlog.Log, id string) []string {
	t.Helper()
	es, err := l.Load(ctxT(t), eventlog.Aggregate{Kind: "assistant", Tenant: engine.DefaultTenant, ID: id})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range es {
		types = append(types, e.Type)
	}
	return types
}

func TestEnsureSystemIdempotent(t *testing.T) {
	l := eventlogtest.Open(t)
	data := t.TempDir()
	// Two processes start at once on the same log, each with its own projection file.
	var wg sync.WaitGroup
	ps := make([]*platform.Platform, 2)
	for i := range ps {
		dir := data
		if i == 1 {
			dir = t.TempDir()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if ps[i], err = tryStart(t, l, dir); err != nil {
				t.Errorf("process %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for _, g := range graphIDs {
		id := assistants.SystemID(g)
		if got := eventsOf(t, l, id); !reflect.DeepEqual(got, []string{engine.AssistantCreated}) {
			t.Errorf("graph %s: events %v, want one created", g, got)
		}
		for i, p := range ps {
			a, err := p.Assistants.Get(ctxT(t), g)
			if err != nil {
				t.Fatalf("process %d: get %s: %v", i, g, err)
			}
			if a.AssistantID != id || a.GraphID != g || a.Name != g || a.Version != 1 ||
				!reflect.DeepEqual(a.Metadata, map[string]any{"created_by": "system"}) {
				t.Errorf("process %d: system assistant of %s = %+v", i, g, a)
			}
		}
	}
	// System assistants carry their graph's defaults.
	if a, _ := ps[0].Assistants.Get(ctxT(t), "agent"); !reflect.DeepEqual(a.Config["configurable"], map[string]any{"model_name": "openai"}) {
		t.Errorf("agent config = %v", a.Config)
	}
	if a, _ := ps[0].Assistants.Get(ctxT(t), "simple_runtime"); !reflect.DeepEqual(a.Context, map[string]any{"model": "unknown"}) {
		t.Errorf("simple_runtime context = %v", a.Context)
	}
	before, _ := ps[0].Assistants.Get(ctxT(t), "agent")

	// A restart on the same folder creates nothing new and reads the same record.
	ps[0].Close()
	p := start(t, l, data)
	for _, g := range graphIDs {
		if got := eventsOf(t, l, assistants.SystemID(g)); len(got) != 1 {
			t.Errorf("after restart graph %s has events %v", g, got)
		}
	}
	if after, err := p.Assistants.Get(ctxT(t), "agent"); err != nil || !reflect.DeepEqual(before, after) {
		t.Errorf("after restart: %+v, %v; before %+v", after, err, before)
	}

	// A deleted system assistant comes back at the next start.
	if err := p.Assistants.Delete(ctxT(t), "echo", false); err != nil {
		t.Fatal(err)
	}
	p.Close()
	p = start(t, l, data)
	if a, err := p.Assistants.Get(ctxT(t), "echo"); err != nil || a.Version != 1 {
		t.Errorf("echo after delete and restart: %+v, %v", a, err)
	}
}

func TestCreatePatchVersions(t *testing.T) {
	p := start(t, eventlogtest.Open(t), t.TempDir())
	s, ctx := p.Assistants, ctxT(t)
	desc := "first"
	a, err := s.Create(ctx, assistants.Create{GraphID: "echo", Name: "Mine", Description: &desc,
		Config: map[string]any{"tags": []any{"a"}}, Context: map[string]any{"c": 1.0}, Metadata: map[string]any{"team": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Version != 1 || a.Name != "Mine" || *a.Description != desc || a.GraphID != "echo" {
		t.Fatalf("created %+v", a)
	}
	id := a.AssistantID

	// Config and context are replaced, metadata merged, the rest kept.
	v2, err := s.Patch(ctx, id, assistants.Patch{Config: map[string]any{"recursion_limit": 5.0},
		Context: map[string]any{}, Metadata: map[string]any{"v": 2.0}})
	if err != nil {
		t.Fatal(err)
	}
	want := engine.Assistant{AssistantID: id, GraphID: "echo", Config: map[string]any{"recursion_limit": 5.0},
		Context: map[string]any{}, Metadata: map[string]any{"team": "x", "v": 2.0}, Version: 2, Name: "Mine",
		Description: &desc, CreatedAt: a.CreatedAt, UpdatedAt: v2.UpdatedAt}
	if !reflect.DeepEqual(v2, want) {
		t.Errorf("patched\n got %+v\nwant %+v", v2, want)
	}
	name := "Renamed"
	if _, err := s.Patch(ctx, id, assistants.Patch{GraphID: "agent", Name: &name}); err != nil {
		t.Fatal(err)
	}

	// Back to version 1; the next patch is version 4, made from version 1.
	v1, err := s.SetLatest(ctx, id, 1)
	if err != nil {
		t.Fatal(err)
	}
	if v1.Version != 1 || !reflect.DeepEqual(v1.Metadata, a.Metadata) || v1.Name != "Mine" || !v1.UpdatedAt.After(v2.UpdatedAt.Time) {
		t.Errorf("latest 1 = %+v", v1)
	}
	v4, err := s.Patch(ctx, id, assistants.Patch{Metadata: map[string]any{"n": 4.0}})
	if err != nil {
		t.Fatal(err)
	}
	if v4.Version != 4 || !reflect.DeepEqual(v4.Metadata, map[string]any{"team": "x", "n": 4.0}) || v4.GraphID != "echo" {
		t.Errorf("version 4 = %+v", v4)
	}
	vs, total, err := s.Versions(ctx, id, nil, 10, 0)
	if err != nil || total != 4 {
		t.Fatalf("versions: %d, %v", total, err)
	}
	for i, v := range vs {
		if v.Version != 4-i {
			t.Errorf("versions[%d] is version %d", i, v.Version)
		}
	}
	if vs[1].Name != "Renamed" || vs[1].GraphID != "agent" {
		t.Errorf("version 3 = %+v", vs[1])
	}

	for _, tt := range []struct {
		name string
		err  error
		kind engine.Kind
		text string
	}{
		{"duplicate", second(s.Create(ctx, assistants.Create{AssistantID: id, GraphID: "echo"})), engine.Exists, "Assistant already exists"},
		{"unknown graph", second(s.Create(ctx, assistants.Create{GraphID: "nope"})), engine.Invalid, ""},
		{"patch unknown graph", second(s.Patch(ctx, id, assistants.Patch{GraphID: "nope"})), engine.Invalid, ""},
		{"missing version", second(s.SetLatest(ctx, id, 9)), engine.NotFound, "Assistant version not found"},
		{"missing assistant", second(s.Get(ctx, "00000000-0000-0000-0000-000000000000")), engine.NotFound, "Assistant not found"},
		{"not an id", second(s.Resolve(ctx, "nope")), engine.NotFound, "Assistant not found"},
		{"patch missing", second(s.Patch(ctx, "00000000-0000-0000-0000-000000000000", assistants.Patch{})), engine.NotFound, "Assistant not found"},
		{"delete missing", s.Delete(ctx, "00000000-0000-0000-0000-000000000000", true), engine.NotFound, "Assistant not found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var e *engine.Error
			if !engine.Is(tt.kind, tt.err) || !asError(tt.err, &e) || (tt.text != "" && e.Detail != tt.text) {
				t.Errorf("err = %v, want kind %v %q", tt.err, tt.kind, tt.text)
			}
			if tt.kind == engine.Invalid && (len(e.Fields) != 1 || !reflect.DeepEqual(e.Fields[0].Loc, []any{"body", "graph_id"})) {
				t.Errorf("fields = %+v", e.Fields)
			}
		})
	}
	same, err := s.Create(ctx, assistants.Create{AssistantID: id, GraphID: "agent", IfExists: "do_nothing"})
	if err != nil || !reflect.DeepEqual(same, v4) {
		t.Errorf("do_nothing = %+v, %v; want the existing %+v", same, err, v4)
	}
	if got := assistants.NoAssistantDetail("x"); got != `No assistant found for "x". Make sure the assistant ID is for a valid assistant or a valid graph ID.` {
		t.Errorf("NoAssistantDetail = %s", got)
	}
}

func second[T any](_ T, err error) error { return err }

func asError(err error, e **engine.Error) bool {
	if x, ok := err.(*engine.Error); ok {
		*e = x
		return true
	}
	return false
}

func TestDeleteThreads(t *testing.T) {
	l := eventlogtest.Open(t)
	p := start(t, l, t.TempDir())
	ctx := ctxT(t)
	mk := func() string {
		a, err := p.Assistants.Create(ctx, assistants.Create{GraphID: "echo"})
		if err != nil {
			t.Fatal(err)
		}
		return a.AssistantID
	}
	doomed, kept := mk(), mk()
	thread := func(assistant string) string {
		th, err := p.Threads.Create(ctx, threads.Create{Metadata: map[string]any{"assistant_id": assistant}})
		if err != nil {
			t.Fatal(err)
		}
		return th.ThreadID
	}
	t1, t2, t3 := thread(doomed), thread(doomed), thread(kept)
	if _, err := p.Threads.Patch(ctx, t2, map[string]any{"x": 1}, nil); err != nil {
		t.Fatal(err)
	}

	// Without delete_threads the threads stay.
	if err := p.Assistants.Delete(ctx, kept, false); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Threads.Get(ctx, t3); err != nil {
		t.Errorf("thread of an assistant deleted without delete_threads: %v", err)
	}

	if err := p.Assistants.Delete(ctx, doomed, true); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{t1, t2} {
		if _, err := p.Threads.Get(ctx, id); !engine.Is(engine.NotFound, err) {
			t.Errorf("thread %s survived its assistant: %v", id, err)
		}
	}
	if _, err := p.Assistants.Get(ctx, doomed); !engine.Is(engine.NotFound, err) {
		t.Errorf("deleted assistant: %v", err)
	}
	if _, total, _ := p.Assistants.Versions(ctx, doomed, nil, 10, 0); total != 0 {
		t.Errorf("deleted assistant keeps %d versions", total)
	}

	// One batch: the assistant's event and the threads' follow each other in the log.
	es, err := l.Load(ctx, assistants.Aggregate(ctx, doomed))
	if err != nil {
		t.Fatal(err)
	}
	del := es[len(es)-1]
	var d engine.AssistantDeletedData
	if err := json.Unmarshal(del.Data, &d); err != nil || del.Type != engine.AssistantDeleted || len(d.Threads) != 2 {
		t.Fatalf("last event %s %s", del.Type, del.Data)
	}
	seqs := map[uint64]bool{}
	for _, id := range []string{t1, t2} {
		tes, err := l.Load(ctx, threads.Aggregate(ctx, id))
		if err != nil {
			t.Fatal(err)
		}
		last := tes[len(tes)-1]
		if last.Type != engine.ThreadDeleted {
			t.Errorf("thread %s last event %s", id, last.Type)
		}
		seqs[last.Seq] = true
	}
	if !seqs[del.Seq+1] || !seqs[del.Seq+2] {
		t.Errorf("thread deletions %v do not follow the assistant's deletion at %d", seqs, del.Seq)
	}
}
