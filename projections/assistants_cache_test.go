package projections_test

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// TestAssistantsGetCacheIsCoherent: the records Get keeps in memory never show what the file no
// longer holds. Each change, once folded (what a write waits for), is read back at once, by this
// reader and by readers filling the cache all along; tenants keep their own records; a caller
// changing its copy changes no one else's; a truncation and a reset of the projection are seen.
func TestAssistantsGetCacheIsCoherent(t *testing.T) {
	f := asstOpen(t)
	const id = "0b7a4c3e-0000-4000-8000-000000000001"
	f.append("acme", id, engine.AssistantCreated, asstCreated(asstSpec("echo", "v1", map[string]any{"owner": "ada"})))
	f.append("other", id, engine.AssistantCreated, asstCreated(asstSpec("agent", "theirs", map[string]any{"owner": "bob"})))

	get := func(tenant string) engine.Assistant {
		t.Helper()
		a, ok, err := f.view.Get(tenant, id)
		if err != nil || !ok {
			t.Fatalf("get %s: %v %v", tenant, ok, err)
		}
		return a
	}
	for i := range 3 { // read from the file, then from memory
		mine := get("acme")
		if mine.Metadata["owner"] != "ada" || len(mine.Config) != 0 {
			t.Fatalf("read %d: a caller's change reached the next reader: %+v", i, mine)
		}
		mine.Metadata["owner"] = "mallory" // the caller's copy
		mine.Config["x"] = true
	}
	if a := get("other"); a.GraphID != "agent" || a.Metadata["owner"] != "bob" {
		t.Fatalf("the other tenant's assistant: %+v", a)
	}

	// Readers fill the cache while the assistant changes; after each change is folded, every
	// read shows it (or a later one).
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					_, _, _ = f.view.Get("acme", id)
				}
			}
		}()
	}
	for v := 2; v <= 60; v++ {
		name := fmt.Sprint("v", v)
		f.append("acme", id, engine.AssistantUpdated, engine.AssistantUpdatedData{Version: v,
			AssistantSpec: asstSpec("echo", name, map[string]any{"owner": "ada", "v": float64(v)})})
		if a := get("acme"); a.Version != v || a.Name != name {
			close(stop)
			wg.Wait()
			t.Fatalf("after version %d was folded, Get gave version %d (%s)", v, a.Version, a.Name)
		}
	}
	close(stop)
	wg.Wait()
	f.append("acme", id, engine.AssistantLatestSet, engine.AssistantLatestSetData{Version: 1})
	if a := get("acme"); a.Version != 1 || !reflect.DeepEqual(a.Metadata, map[string]any{"owner": "ada"}) {
		t.Fatalf("after latest_set 1: %+v", a)
	}

	// A truncation keeping no assistant empties the bucket.
	system := eventlog.Aggregate{Kind: engine.SystemKind, Tenant: "default", ID: engine.SystemID}
	waitFor(t, f.proj, appendEvent(t, f.log, system, engine.Truncated, engine.TruncatedData{Assistants: true}))
	if _, ok, _ := f.view.Get("acme", id); ok {
		t.Fatal("a truncated assistant is still read")
	}
	f.append("acme", id, engine.AssistantCreated, asstCreated(asstSpec("echo", "again", nil)))
	if a := get("acme"); a.Name != "again" {
		t.Fatalf("recreated: %+v", a)
	}
	f.stop()
	if err := f.proj.Reset(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := f.view.Get("acme", id); ok {
		t.Fatal("an assistant is read from memory after the projection was reset")
	}
}
