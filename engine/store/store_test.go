package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/command"
	"github.com/jetgraph/jetgraph/engine/store"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections"
)

// clock is a settable time for the service, so that no test sleeps.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// process is one jetgraph process's store side: its own projection file on a shared log.
type process struct {
	svc   *store.Service
	view  *projections.Store
	proj  *projections.Projector
	clock *clock
}

func open(t *testing.T, l *eventlog.Log) process {
	t.Helper()
	db, err := projections.OpenDB(filepath.Join(t.TempDir(), "p.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	view := projections.NewStore(db)
	p := projections.NewProjector(db, l, eventlog.RuntimeStream, view)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if err := p.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	c := &clock{now: t0}
	svc := store.New(&command.Runner{Log: l, Projector: p}, view, nil)
	svc.SetClock(c.Now)
	return process{svc: svc, view: view, proj: p, clock: c}
}

func ttl(m float64) *float64 { return &m }

func TestPutGetDelete(t *testing.T) {
	ctx := context.Background()
	p := open(t, eventlogtest.Open(t))
	ns := []string{"users", "u1"}
	if err := p.svc.Put(ctx, store.Put{Namespace: ns, Key: "prefs", Value: map[string]any{"theme": "dark"}}); err != nil {
		t.Fatal(err)
	}
	p.clock.Set(t0.Add(time.Minute))
	if err := p.svc.Put(ctx, store.Put{Namespace: ns, Key: "prefs", Value: map[string]any{"theme": "light"}}); err != nil {
		t.Fatal(err)
	}
	it, ok, err := p.svc.Get(ctx, ns, "prefs", true)
	if err != nil || !ok {
		t.Fatalf("get: %v %v", ok, err)
	}
	if it.Value["theme"] != "light" || !it.CreatedAt.Equal(t0) || !it.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("item = %+v", it)
	}
	// Another tenant does not see it.
	if _, ok, _ := p.svc.Get(engine.WithTenant(ctx, "other"), ns, "prefs", false); ok {
		t.Error("item visible to another tenant")
	}
	for range 2 { // deleting a missing item is not an error
		if err := p.svc.Delete(ctx, ns, "prefs"); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, _ := p.svc.Get(ctx, ns, "prefs", false); ok {
		t.Error("item still there after delete")
	}
}

func TestValidation(t *testing.T) {
	ctx := context.Background()
	p := open(t, eventlogtest.Open(t))
	tests := []struct {
		name   string
		put    store.Put
		detail string
	}{
		{"dot", store.Put{Namespace: []string{"a", "b.c"}, Key: "k"}, "Namespace labels cannot be empty or contain periods. Received: ('a', 'b.c')"},
		{"empty label", store.Put{Namespace: []string{""}, Key: "k"}, "Namespace labels cannot be empty or contain periods. Received: ('',)"},
		{"quote", store.Put{Namespace: []string{"it's", "."}, Key: "k"}, `Namespace labels cannot be empty or contain periods. Received: ("it's", '.')`},
		{"no namespace", store.Put{Key: "k"}, "Namespace must have at least one label"},
		{"no key", store.Put{Namespace: []string{"a"}}, "Key is required"},
		{"ttl", store.Put{Namespace: []string{"a"}, Key: "k", TTL: ttl(0)}, "TTL must be a positive number of minutes"},
		{"ttl overflowing", store.Put{Namespace: []string{"a"}, Key: "k", TTL: ttl(200_000_000)}, "TTL must be at most 52560000 minutes (100 years, MaxTTLMinutes)"},
		{"long key", store.Put{Namespace: []string{"a"}, Key: strings.Repeat("k", 40<<10)}, "A key is at most 1024 bytes (MaxStoreKeyBytes); this one has 40960"},
		{"long label", store.Put{Namespace: []string{strings.Repeat("l", 257)}, Key: "k"}, "A namespace label is at most 256 bytes (MaxNamespaceLabelBytes); one has 257"},
		{"deep", store.Put{Namespace: strings.Split("a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", ","), Key: "k"}, "A namespace has at most 16 labels (MaxNamespaceDepth); this one has 17"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := p.svc.Put(ctx, tc.put)
			var e *engine.Error
			ok := engine.Is(engine.Invalid, err) && asError(err, &e)
			if ok && e.Detail == "" && len(e.Fields) == 1 {
				e.Detail = e.Fields[0].Msg
			}
			if !ok || e.Detail != tc.detail {
				t.Errorf("err = %v, want Invalid %q", err, tc.detail)
			}
		})
	}
	// An item past NATS's 1 MiB max payload is stored (by reference) and reads back whole; one
	// over the state limit is refused, naming it.
	large := map[string]any{"s": strings.Repeat("x", 3<<20)}
	if err := p.svc.Put(ctx, store.Put{Namespace: []string{"a"}, Key: "large", Value: large}); err != nil {
		t.Fatalf("3 MiB put: %v", err)
	}
	if it, found, err := p.svc.Get(ctx, []string{"a"}, "large", false); err != nil || !found || it.Value["s"] != large["s"] {
		t.Errorf("3 MiB item read back: found %v, %v", found, err)
	}
	big := map[string]any{"s": strings.Repeat("x", store.MaxItemBytes)}
	if err := p.svc.Put(ctx, store.Put{Namespace: []string{"a"}, Key: "k", Value: big}); !engine.Is(engine.TooLarge, err) || !strings.Contains(err.Error(), engine.MaxStateText) {
		t.Errorf("oversized put: %v", err)
	}
}

func asError(err error, e **engine.Error) bool { return errors.As(err, e) }

func TestTTLExpiryAndSweep(t *testing.T) {
	ctx := context.Background()
	p := open(t, eventlogtest.Open(t))
	ns := []string{"cache"}
	if err := p.svc.Put(ctx, store.Put{Namespace: ns, Key: "short", Value: map[string]any{"v": 1}, TTL: ttl(1)}); err != nil {
		t.Fatal(err)
	}
	if err := p.svc.Put(ctx, store.Put{Namespace: ns, Key: "forever", Value: map[string]any{"v": 2}}); err != nil {
		t.Fatal(err)
	}
	visible := func() int {
		items, err := p.svc.Search(ctx, engine.StoreQuery{Prefix: ns, Limit: 10}, false)
		if err != nil {
			t.Fatal(err)
		}
		return len(items)
	}
	p.clock.Set(t0.Add(59 * time.Second))
	if _, ok, _ := p.svc.Get(ctx, ns, "short", false); !ok || visible() != 2 {
		t.Fatal("item gone before its TTL")
	}
	if n, err := p.svc.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("early sweep = %d, %v", n, err)
	}
	p.clock.Set(t0.Add(time.Minute))
	if _, ok, _ := p.svc.Get(ctx, ns, "short", true); ok {
		t.Error("expired item visible to get")
	}
	if visible() != 1 {
		t.Error("expired item visible to search")
	}
	if nss, _ := p.svc.ListNamespaces(ctx, engine.NamespaceQuery{Limit: 10}); len(nss) != 1 {
		t.Errorf("namespaces = %v", nss)
	}
	if n, err := p.svc.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("sweep = %d, %v", n, err)
	}
	if expired, _ := p.view.Expired(t0.Add(time.Hour), 10); len(expired) != 0 {
		t.Errorf("expiry index after sweep = %v", expired)
	}
	if n, err := p.svc.Sweep(ctx); err != nil || n != 0 {
		t.Fatalf("second sweep = %d, %v", n, err)
	}
}

func TestRefreshTTL(t *testing.T) {
	ctx := context.Background()
	p := open(t, eventlogtest.Open(t))
	ns := []string{"s"}
	for _, k := range []string{"a", "b"} {
		if err := p.svc.Put(ctx, store.Put{Namespace: ns, Key: k, Value: map[string]any{}, TTL: ttl(1)}); err != nil {
			t.Fatal(err)
		}
	}
	at := func(d time.Duration) { p.clock.Set(t0.Add(d)) }
	at(50 * time.Second)
	if _, ok, _ := p.svc.Get(ctx, ns, "a", true); !ok { // a now expires at 1m50s
		t.Fatal("a missing")
	}
	if _, ok, _ := p.svc.Get(ctx, ns, "b", false); !ok { // b still expires at 1m
		t.Fatal("b missing")
	}
	at(90 * time.Second)
	if _, ok, _ := p.svc.Get(ctx, ns, "b", true); ok {
		t.Error("b visible after its TTL: a read without refresh_ttl refreshed it")
	}
	items, err := p.svc.Search(ctx, engine.StoreQuery{Prefix: ns, Limit: 10}, true) // a now expires at 2m30s
	if err != nil || len(items) != 1 || items[0].Key != "a" {
		t.Fatalf("search = %v, %v", items, err)
	}
	at(140 * time.Second)
	if _, ok, _ := p.svc.Get(ctx, ns, "a", false); !ok {
		t.Error("a expired although a search refreshed it")
	}
	at(150 * time.Second)
	if _, ok, _ := p.svc.Get(ctx, ns, "a", false); ok {
		t.Error("a visible after its refreshed TTL")
	}
}

func TestSweepSeveralProcesses(t *testing.T) {
	ctx := context.Background()
	l := eventlogtest.Open(t)
	a, b := open(t, l), open(t, l)
	const n = 6
	for i := range n {
		key := string(rune('a' + i))
		if err := a.svc.Put(ctx, store.Put{Namespace: []string{"x"}, Key: key, Value: map[string]any{}, TTL: ttl(1)}); err != nil {
			t.Fatal(err)
		}
	}
	// b learns of every put before sweeping.
	if err := b.proj.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	a.clock.Set(t0.Add(2 * time.Minute))
	b.clock.Set(t0.Add(2 * time.Minute))
	var wg sync.WaitGroup
	counts := make([]int, 2)
	errs := make([]error, 2)
	for i, p := range []process{a, b} {
		wg.Go(func() { counts[i], errs[i] = p.svc.Sweep(ctx) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || counts[0]+counts[1] != n {
		t.Fatalf("sweeps deleted %v (errors %v), want %d in all", counts, errs, n)
	}
}
