package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/platform/platformtest"
	"github.com/jetgraph/jetgraph/engine/store"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/httpapi"
)

// TestRefusedEventHaltsLoudly appends, past the command that would refuse it, a store item whose
// key bbolt cannot hold: the projection stops at it instead of skipping it, /ok answers 500,
// jetgraph_projection_halted is 1, and a later write fails instead of being acknowledged
// unreadable.
func TestRefusedEventHaltsLoudly(t *testing.T) {
	metrics := httpapi.NewMetrics()
	p := platformtest.StartWith(t, platform.Config{}, nil, func(p *platform.Platform) {
		registerPlatformMetrics(metrics.Registry, p)
	})
	srv := httpapi.New(httpapi.Deps{Threads: p.Threads, Store: p.Store, Health: p.Health, Metrics: metrics})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	get := func(path string) (int, string) {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	if code, _ := get("/ok"); code != 200 {
		t.Fatalf("/ok before: %d", code)
	}

	ctx := context.Background()
	ns, key := []string{"docs"}, strings.Repeat("k", 40<<10)
	e, err := eventlog.New(store.Aggregate(ctx, ns, key), engine.StorePut, engine.StorePutData{Namespace: ns, Key: key, Value: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Log.Append(ctx, e, eventlog.Any); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for p.Runtime.Halted() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the projection did not halt at the refused event")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, body := get("/ok"); code != 500 || !strings.Contains(body, "halted") {
		t.Fatalf("/ok after: %d %s", code, body)
	}
	if _, body := get("/metrics"); !strings.Contains(body, `jetgraph_projection_halted{stream="`+eventlog.RuntimeStream+`"} 1`) {
		t.Fatalf("no halted gauge:\n%s", body)
	}
	resp, err := http.Post(ts.URL+"/threads", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 500 {
		t.Fatalf("a write behind the halted projection answered %d", resp.StatusCode)
	}
}
