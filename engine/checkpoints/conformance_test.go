package checkpoints_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
)

// newCP is a checkpoint with the given values (channel: JSON) and versions, and a fresh
// time-ordered id.
func newCP(values map[string]string, versions map[string]int64) graph.Checkpoint {
	cv := map[string]json.RawMessage{}
	for k, v := range values {
		cv[k] = json.RawMessage(v)
	}
	return graph.Checkpoint{V: 1, ID: uuid.Must(uuid.NewV7()).String(), TS: time.Now().UTC(),
		ChannelValues: cv, ChannelVersions: versions,
		VersionsSeen: map[string]map[string]int64{"agent": {"branch:to:agent": 1}}}
}

// book keeps what a saver was given, to say what it must return.
type book struct {
	t      *testing.T
	s      graph.Saver
	tuples map[string]*graph.Tuple // by checkpoint id
}

// put stores a checkpoint with parent (nil for none) and returns its ref.
func (b *book) put(ctx context.Context, thread, ns string, parent *graph.Ref, cp graph.Checkpoint, md map[string]any) graph.Ref {
	b.t.Helper()
	ref := graph.Ref{ThreadID: thread, NS: ns, ID: cp.ID}
	if err := b.s.Put(ctx, ref, cp, md, parent); err != nil {
		b.t.Fatal(err)
	}
	b.tuples[cp.ID] = &graph.Tuple{Ref: ref, Checkpoint: cp, Metadata: md, Parent: parent}
	return ref
}

func (b *book) writes(ctx context.Context, ref graph.Ref, ws ...graph.PendingWrite) {
	b.t.Helper()
	if err := b.s.PutWrites(ctx, ref, ws); err != nil {
		b.t.Fatal(err)
	}
	if t := b.tuples[ref.ID]; t != nil {
		t.Writes = graph.MergeWrites(t.Writes, ws)
	}
}

// get checks that Get(ref) returns the tuple of want (a checkpoint id, "" for nil).
func (b *book) get(ctx context.Context, ref graph.Ref, want string) {
	b.t.Helper()
	got, err := b.s.Get(ctx, ref)
	if err != nil {
		b.t.Fatal(err)
	}
	var w *graph.Tuple
	if want != "" {
		w = b.tuples[want]
	}
	if g, e := mustJSON(b.t, got), mustJSON(b.t, w); g != e {
		b.t.Fatalf("Get(%+v):\n got %s\nwant %s", ref, g, e)
	}
}

// list checks that List returns the tuples of want, in that order.
func (b *book) list(ctx context.Context, ref graph.Ref, opts graph.ListOptions, want ...string) {
	b.t.Helper()
	got, err := b.s.List(ctx, ref, opts)
	if err != nil {
		b.t.Fatal(err)
	}
	w := []graph.Tuple{}
	for _, id := range want {
		w = append(w, *b.tuples[id])
	}
	if got == nil {
		got = []graph.Tuple{}
	}
	if g, e := mustJSON(b.t, got), mustJSON(b.t, w); g != e {
		b.t.Fatalf("List(%+v, %+v):\n got %s\nwant %s", ref, opts, g, e)
	}
}

func md(source string, step int) map[string]any {
	return map[string]any{"source": source, "step": step, "parents": map[string]any{}, "user": "u1"}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// saverConformance checks what every graph.Saver must do, as graph.MemorySaver does it. With
// tenants, the saver must also keep the tenants of the context apart.
func saverConformance(t *testing.T, s graph.Saver, tenants bool) {
	ctx := context.Background()
	cases := []struct {
		name string
		run  func(b *book)
	}{
		{"empty thread", func(b *book) {
			b.get(ctx, graph.Ref{ThreadID: "none"}, "")
			b.get(ctx, graph.Ref{ThreadID: "none", ID: uuid.NewString()}, "")
			b.list(ctx, graph.Ref{ThreadID: "none"}, graph.ListOptions{})
		}},
		{"put, get latest and by id, list with limit, before and metadata", func(b *book) {
			th := "t-list"
			c1 := b.put(ctx, th, "", nil, newCP(map[string]string{"__start__": `{"a":1}`}, map[string]int64{"__start__": 1}), md("input", -1))
			c2 := b.put(ctx, th, "", &c1, newCP(map[string]string{"a": `1`}, map[string]int64{"__start__": 2, "a": 1}), md("loop", 0))
			c3 := b.put(ctx, th, "", &c2, newCP(map[string]string{"a": `2`}, map[string]int64{"__start__": 2, "a": 2}), md("loop", 1))
			b.get(ctx, graph.Ref{ThreadID: th}, c3.ID)
			b.get(ctx, c1, c1.ID)
			b.get(ctx, c2, c2.ID)
			b.get(ctx, graph.Ref{ThreadID: th, ID: uuid.NewString()}, "")
			all := graph.Ref{ThreadID: th}
			b.list(ctx, all, graph.ListOptions{}, c3.ID, c2.ID, c1.ID)
			b.list(ctx, all, graph.ListOptions{Limit: 2}, c3.ID, c2.ID)
			b.list(ctx, all, graph.ListOptions{Before: c3.ID}, c2.ID, c1.ID)
			b.list(ctx, all, graph.ListOptions{Before: c2.ID, Limit: 1}, c1.ID)
			b.list(ctx, all, graph.ListOptions{Before: c1.ID})
			b.list(ctx, all, graph.ListOptions{Before: uuid.NewString()}) // an unknown id: nothing
			b.list(ctx, all, graph.ListOptions{Metadata: map[string]any{"source": "loop"}}, c3.ID, c2.ID)
			b.list(ctx, all, graph.ListOptions{Metadata: map[string]any{"step": 0.0, "user": "u1"}}, c2.ID)
			b.list(ctx, all, graph.ListOptions{Metadata: map[string]any{"source": "loop"}, Before: c3.ID}, c2.ID)
			b.list(ctx, all, graph.ListOptions{Metadata: map[string]any{"source": "loop"}, Limit: 1}, c3.ID)
			b.list(ctx, all, graph.ListOptions{Metadata: map[string]any{"missing": 1}})
		}},
		{"channel values: shared, changed, removed, null, unversioned, same version new value", func(b *book) {
			th := "t-values"
			c1 := b.put(ctx, th, "", nil, newCP(map[string]string{"msgs": `["x"]`, "a": `1`, "init": `[]`}, map[string]int64{"msgs": 1, "a": 1}), md("input", -1))
			c2 := b.put(ctx, th, "", &c1, newCP(map[string]string{"msgs": `["x","y"]`, "a": `1`, "init": `[]`}, map[string]int64{"msgs": 2, "a": 1}), md("loop", 0))
			c3 := b.put(ctx, th, "", &c2, newCP(map[string]string{"msgs": `["x","y"]`, "init": `[]`, "n": `null`}, map[string]int64{"msgs": 2, "a": 2, "n": 1}), md("loop", 1))
			c4 := b.put(ctx, th, "", &c3, newCP(map[string]string{"msgs": `["z"]`, "init": `["w"]`, "n": `null`}, map[string]int64{"msgs": 2, "a": 2, "n": 1}), md("loop", 2))
			c5 := b.put(ctx, th, "", &c4, newCP(map[string]string{"msgs": `["z"]`}, map[string]int64{"msgs": 2, "a": 2, "n": 1}), md("loop", 3))
			for _, c := range []graph.Ref{c1, c2, c3, c4, c5} {
				b.get(ctx, c, c.ID)
			}
			b.list(ctx, graph.Ref{ThreadID: th}, graph.ListOptions{}, c5.ID, c4.ID, c3.ID, c2.ID, c1.ID)
		}},
		{"forks share the parent, not their sibling", func(b *book) {
			th := "t-fork"
			c1 := b.put(ctx, th, "", nil, newCP(map[string]string{"m": `["a"]`, "k": `"keep"`}, map[string]int64{"m": 1, "k": 1}), md("input", -1))
			c2 := b.put(ctx, th, "", &c1, newCP(map[string]string{"m": `["a","b"]`, "k": `"keep"`}, map[string]int64{"m": 2, "k": 1}), md("loop", 0))
			f2 := b.put(ctx, th, "", &c1, newCP(map[string]string{"m": `["a","fork"]`, "k": `"keep"`}, map[string]int64{"m": 2, "k": 1}), md("fork", 0))
			f3 := b.put(ctx, th, "", &f2, newCP(map[string]string{"m": `["a","fork"]`, "k": `"changed"`}, map[string]int64{"m": 2, "k": 2}), md("loop", 1))
			c3 := b.put(ctx, th, "", &c2, newCP(map[string]string{"m": `["a","b"]`, "k": `"keep"`}, map[string]int64{"m": 2, "k": 1}), md("loop", 1))
			for _, c := range []graph.Ref{c1, c2, f2, f3, c3} {
				b.get(ctx, c, c.ID)
			}
			b.get(ctx, graph.Ref{ThreadID: th}, c3.ID)
		}},
		{"pending writes merge", func(b *book) {
			th := "t-writes"
			c1 := b.put(ctx, th, "", nil, newCP(map[string]string{"a": `1`}, map[string]int64{"a": 1}), md("input", -1))
			c2 := b.put(ctx, th, "", &c1, newCP(map[string]string{"a": `2`}, map[string]int64{"a": 2}), md("loop", 0))
			b.writes(ctx, c1, graph.PendingWrite{TaskID: "t0", Channel: "a", Value: raw(`7`)})
			b.writes(ctx, c2,
				graph.PendingWrite{TaskID: "t1", Channel: "a", Value: raw(`1`)},
				graph.PendingWrite{TaskID: "t1", Channel: "__done__", Value: raw(`{"a":1}`)},
				graph.PendingWrite{TaskID: "t2", Channel: graph.Interrupt, Value: raw(`[{"value":"q1","id":"i1"}]`)})
			b.writes(ctx, c2,
				graph.PendingWrite{TaskID: "t1", Channel: "a", Value: raw(`1`)},
				graph.PendingWrite{TaskID: "t2", Channel: graph.Interrupt, Value: raw(`[{"value":"q2","id":"i1"}]`)},
				graph.PendingWrite{TaskID: "t2", Channel: "__resume__", Value: raw(`["yes"]`)})
			b.writes(ctx, c2, graph.PendingWrite{TaskID: "t2", Channel: "__resume__", Value: raw(`["no"]`)})
			b.writes(ctx, c2) // nothing
			b.writes(ctx, graph.Ref{ThreadID: th, ID: uuid.NewString()}, graph.PendingWrite{TaskID: "t", Channel: "a", Value: raw(`1`)})
			b.get(ctx, c1, c1.ID)
			b.get(ctx, c2, c2.ID)
			b.list(ctx, graph.Ref{ThreadID: th}, graph.ListOptions{}, c2.ID, c1.ID)
		}},
		{"namespaces are apart", func(b *book) {
			th := "t-ns"
			r1 := b.put(ctx, th, "", nil, newCP(map[string]string{"a": `1`}, map[string]int64{"a": 1}), md("input", -1))
			s1 := b.put(ctx, th, "sub:1", nil, newCP(map[string]string{"a": `"sub"`}, map[string]int64{"a": 1}), md("input", -1))
			s2 := b.put(ctx, th, "sub:1", &s1, newCP(map[string]string{"a": `"sub2"`}, map[string]int64{"a": 2}), md("loop", 0))
			n1 := b.put(ctx, th, "sub:1|inner:2", nil, newCP(map[string]string{"b": `true`}, map[string]int64{"b": 1}), md("input", -1))
			b.writes(ctx, s2, graph.PendingWrite{TaskID: "t", Channel: graph.Interrupt, Value: raw(`[]`)})
			b.get(ctx, graph.Ref{ThreadID: th}, r1.ID)
			b.get(ctx, graph.Ref{ThreadID: th, NS: "sub:1"}, s2.ID)
			b.get(ctx, graph.Ref{ThreadID: th, NS: "sub:1|inner:2"}, n1.ID)
			b.get(ctx, graph.Ref{ThreadID: th, NS: "sub"}, "")
			b.get(ctx, graph.Ref{ThreadID: th, ID: s1.ID}, "")
			b.list(ctx, graph.Ref{ThreadID: th}, graph.ListOptions{}, r1.ID)
			b.list(ctx, graph.Ref{ThreadID: th, NS: "sub:1"}, graph.ListOptions{}, s2.ID, s1.ID)
			b.get(ctx, graph.Ref{ThreadID: th + "x"}, "")
		}},
	}
	if tenants {
		cases = append(cases, struct {
			name string
			run  func(b *book)
		}{"tenants are apart", func(b *book) {
			acme := engine.WithTenant(ctx, "acme")
			c1 := b.put(acme, "t-tenant", "", nil, newCP(map[string]string{"a": `1`}, map[string]int64{"a": 1}), md("input", -1))
			b.get(ctx, graph.Ref{ThreadID: "t-tenant"}, "")
			b.list(ctx, graph.Ref{ThreadID: "t-tenant"}, graph.ListOptions{})
			b.get(acme, graph.Ref{ThreadID: "t-tenant"}, c1.ID)
			b.list(acme, graph.Ref{ThreadID: "t-tenant"}, graph.ListOptions{}, c1.ID)
		}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(&book{t: t, s: s, tuples: map[string]*graph.Tuple{}})
		})
	}
}

func TestSaverConformance(t *testing.T) {
	t.Run("MemorySaver", func(t *testing.T) { saverConformance(t, graph.NewMemorySaver(), false) })
	t.Run("LogSaver", func(t *testing.T) { saverConformance(t, open(t).saver, true) })
}
