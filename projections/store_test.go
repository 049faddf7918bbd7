package projections_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/command"
	"github.com/jetgraph/jetgraph/engine/store"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type storeEnv struct {
	log  *eventlog.Log
	db   *projections.DB
	view *projections.Store
	proj *projections.Projector
	svc  *store.Service
	now  time.Time
	stop func()
}

// openStore runs a store projection on a fresh log; the service's clock reads env.now.
func openStore(t *testing.T) *storeEnv {
	t.Helper()
	l := eventlogtest.Open(t)
	db, err := projections.OpenDB(filepath.Join(t.TempDir(), "p.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	env := &storeEnv{log: l, db: db, view: projections.NewStore(db), now: t0}
	env.proj = projections.NewProjector(db, l, eventlog.RuntimeStream, env.view)
	env.start(t)
	env.svc = store.New(&command.Runner{Log: l, Projector: env.proj}, env.view, nil)
	env.svc.SetClock(func() time.Time { return env.now })
	return env
}

func (env *storeEnv) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = env.proj.Run(ctx) }()
	env.stop = func() { cancel(); <-done }
	t.Cleanup(env.stop)
	if err := env.proj.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
}

func (env *storeEnv) put(t *testing.T, ns []string, key string, value map[string]any, index any, ttl *float64) {
	t.Helper()
	if err := env.svc.Put(context.Background(), store.Put{Namespace: ns, Key: key, Value: value, Index: index, TTL: ttl}); err != nil {
		t.Fatal(err)
	}
	env.now = env.now.Add(time.Second) // later puts are more recently updated
}

func keys(recs []projections.StoreRecord) string {
	var ks []string
	for _, r := range recs {
		k := strings.Join(r.Item.Namespace, ".") + "/" + r.Item.Key
		if r.Item.Score != nil {
			k += fmt.Sprintf("=%g", *r.Item.Score)
		}
		ks = append(ks, k)
	}
	return strings.Join(ks, " ")
}

func TestStoreSearch(t *testing.T) {
	env := openStore(t)
	env.put(t, []string{"docs", "a"}, "1", map[string]any{"n": 1, "s": "apple", "tag": "x", "obj": map[string]any{"k": 1}}, nil, nil)
	env.put(t, []string{"docs", "a"}, "2", map[string]any{"n": 2.5, "s": "banana", "tag": "y"}, nil, nil)
	env.put(t, []string{"docs", "ab"}, "3", map[string]any{"n": 3, "s": "cherry cherry", "tag": "x"}, nil, nil)
	env.put(t, []string{"docs"}, "4", map[string]any{"n": "4", "s": "Cherry", "note": "cherry"}, []any{"note"}, nil)
	env.put(t, []string{"other"}, "5", map[string]any{"s": "cherry"}, false, nil)
	env.put(t, []string{"x\x00", "\x01\x02"}, "6", map[string]any{}, nil, nil)

	tests := []struct {
		name string
		q    engine.StoreQuery
		want string
	}{
		{"all, newest first", engine.StoreQuery{}, "x\x00.\x01\x02/6 other/5 docs/4 docs.ab/3 docs.a/2 docs.a/1"},
		{"prefix is label-wise", engine.StoreQuery{Prefix: []string{"docs", "a"}}, "docs.a/2 docs.a/1"},
		{"prefix includes children", engine.StoreQuery{Prefix: []string{"docs"}}, "docs/4 docs.ab/3 docs.a/2 docs.a/1"},
		{"control bytes in labels", engine.StoreQuery{Prefix: []string{"x\x00"}}, "x\x00.\x01\x02/6"},
		{"no such prefix", engine.StoreQuery{Prefix: []string{"doc"}}, ""},
		{"equality", engine.StoreQuery{Filter: map[string]any{"tag": "x"}}, "docs.ab/3 docs.a/1"},
		{"number by value", engine.StoreQuery{Filter: map[string]any{"n": 1.0}}, "docs.a/1"},
		{"object equality", engine.StoreQuery{Filter: map[string]any{"obj": map[string]any{"k": 1.0}}}, "docs.a/1"},
		{"type matters", engine.StoreQuery{Filter: map[string]any{"n": 4.0}}, ""},
		{"$eq", engine.StoreQuery{Filter: map[string]any{"s": map[string]any{"$eq": "banana"}}}, "docs.a/2"},
		{"$ne skips missing", engine.StoreQuery{Filter: map[string]any{"tag": map[string]any{"$ne": "x"}}}, "docs.a/2"},
		{"$gt", engine.StoreQuery{Filter: map[string]any{"n": map[string]any{"$gt": 1.0}}}, "docs.ab/3 docs.a/2"},
		{"$gte $lt", engine.StoreQuery{Filter: map[string]any{"n": map[string]any{"$gte": 1.0, "$lt": 3.0}}}, "docs.a/2 docs.a/1"},
		{"$lte", engine.StoreQuery{Filter: map[string]any{"n": map[string]any{"$lte": 2.5}}}, "docs.a/2 docs.a/1"},
		{"strings lexically", engine.StoreQuery{Filter: map[string]any{"s": map[string]any{"$gt": "b"}}}, "other/5 docs.ab/3 docs.a/2"},
		{"two fields", engine.StoreQuery{Filter: map[string]any{"tag": "x", "n": map[string]any{"$gt": 2.0}}}, "docs.ab/3"},
		{"limit", engine.StoreQuery{Prefix: []string{"docs"}, Limit: 2}, "docs/4 docs.ab/3"},
		{"offset", engine.StoreQuery{Prefix: []string{"docs"}, Limit: 2, Offset: 2}, "docs.a/2 docs.a/1"},
		{"offset past the end", engine.StoreQuery{Offset: 10}, ""},
		{"query ranks by occurrences", engine.StoreQuery{Query: "CHERRY"}, "docs.ab/3=2 docs/4=1"},
		{"query with filter", engine.StoreQuery{Query: "a", Filter: map[string]any{"tag": "y"}}, "docs.a/2=4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := env.view.Search(engine.DefaultTenant, tc.q, env.now)
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(recs); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if recs, _ := env.view.Search("other-tenant", engine.StoreQuery{}, env.now); len(recs) != 0 {
		t.Errorf("another tenant sees %s", keys(recs))
	}
}

func TestStoreListNamespaces(t *testing.T) {
	env := openStore(t)
	for _, ns := range [][]string{{"a", "b", "c"}, {"a", "b", "d"}, {"a", "x"}, {"b", "c"}, {"a", "b", "c"}} {
		env.put(t, ns, fmt.Sprint(env.now.Unix()), map[string]any{}, nil, nil)
	}
	ttl := 1.0
	env.put(t, []string{"gone"}, "k", map[string]any{}, nil, &ttl)
	env.now = env.now.Add(time.Hour)

	tests := []struct {
		name string
		q    engine.NamespaceQuery
		want string
	}{
		{"all, sorted, distinct, expired left out", engine.NamespaceQuery{}, "[a b c] [a b d] [a x] [b c]"},
		{"prefix", engine.NamespaceQuery{Prefix: []string{"a", "b"}}, "[a b c] [a b d]"},
		{"prefix wildcard", engine.NamespaceQuery{Prefix: []string{"*", "c"}}, "[b c]"},
		{"suffix", engine.NamespaceQuery{Suffix: []string{"c"}}, "[a b c] [b c]"},
		{"suffix wildcard", engine.NamespaceQuery{Suffix: []string{"b", "*"}}, "[a b c] [a b d] [b c]"},
		{"max depth", engine.NamespaceQuery{MaxDepth: 2}, "[a b] [a x] [b c]"},
		{"max depth 1", engine.NamespaceQuery{MaxDepth: 1}, "[a] [b]"},
		{"prefix and max depth", engine.NamespaceQuery{Prefix: []string{"a"}, MaxDepth: 1}, "[a]"},
		{"limit offset", engine.NamespaceQuery{Limit: 2, Offset: 1}, "[a b d] [a x]"},
		{"too long a pattern", engine.NamespaceQuery{Suffix: []string{"z", "a", "b", "c"}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := env.view.ListNamespaces(engine.DefaultTenant, tc.q, env.now)
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, ns := range got {
				parts = append(parts, fmt.Sprint(ns))
			}
			if s := strings.Join(parts, " "); s != tc.want {
				t.Errorf("got %q, want %q", s, tc.want)
			}
		})
	}
}

// dumpStore returns every key and value of the store buckets.
func dumpStore(t *testing.T, db *projections.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := db.View(func(tx *bbolt.Tx) error {
		for _, name := range (&projections.Store{}).Buckets() {
			b := tx.Bucket([]byte(name))
			if b == nil {
				continue
			}
			err := b.ForEach(func(k, v []byte) error {
				out[name+"|"+string(k)] = string(v)
				return nil
			})
			if err != nil {
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

func TestStoreRebuildEqualsLive(t *testing.T) {
	env := openStore(t)
	ctx := context.Background()
	ttl, long := 5.0, 60.0
	env.put(t, []string{"d"}, "5", map[string]any{"v": 0}, nil, &long)
	env.put(t, []string{"a"}, "1", map[string]any{"v": 1}, nil, &ttl)
	env.put(t, []string{"a"}, "1", map[string]any{"v": 2}, []any{"v"}, &ttl) // replaces, keeps created_at
	env.put(t, []string{"a", "b"}, "2", map[string]any{"v": 3}, false, nil)
	env.put(t, []string{"a", "b"}, "3", map[string]any{"v": 4}, nil, &ttl)
	env.put(t, []string{"c"}, "4", map[string]any{}, nil, nil)
	env.now = env.now.Add(time.Minute)
	if _, _, err := env.svc.Get(ctx, []string{"a", "b"}, "3", true); err != nil { // touched
		t.Fatal(err)
	}
	if err := env.svc.Delete(ctx, []string{"c"}, "4"); err != nil {
		t.Fatal(err)
	}
	env.put(t, []string{"a", "b"}, "3", map[string]any{"v": 5}, nil, nil) // TTL removed
	env.now = env.now.Add(10 * time.Minute)
	if n, err := env.svc.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep = %d, %v", n, err)
	}

	// Left: a.b/2, a.b/3 and d/5, which alone still has a time to live.
	live := dumpStore(t, env.db)
	if len(live) != 4 || !slices.ContainsFunc(mapsKeys(live), func(k string) bool { return bytes.HasSuffix([]byte(k), []byte("\x012")) }) {
		t.Fatalf("unexpected live projection: %q", live)
	}
	env.stop()
	if err := env.proj.Reset(); err != nil {
		t.Fatal(err)
	}
	if got := dumpStore(t, env.db); len(got) != 0 {
		t.Fatalf("reset left %d entries", len(got))
	}
	// A new projector, as a restarted process has: it starts from nothing applied.
	env.proj = projections.NewProjector(env.db, env.log, eventlog.RuntimeStream, env.view)
	env.start(t)
	rebuilt := dumpStore(t, env.db)
	if fmt.Sprint(rebuilt) != fmt.Sprint(live) {
		t.Errorf("rebuilt projection differs:\nlive    %q\nrebuilt %q", live, rebuilt)
	}
}

func mapsKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
