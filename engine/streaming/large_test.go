package streaming

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// TestLargeEventsArriveWhole streams events past NATS's 1 MiB max payload (the "metadata" of a
// run with a large input, "values" of a large state, a large "custom" event) among small ones:
// a follower gets every one whole and in order, and so does a client resuming after one.
func TestLargeEventsArriveWhole(t *testing.T) {
	_, s := openBus(t, 0, nil)
	ctx := context.Background()
	rec := testRun("values", "custom")
	input := strings.Repeat("i", 3<<20)
	rec.Kwargs.Input = map[string]any{"doc": input}
	state := strings.Repeat("v", 5<<20)
	sink := s.Begin(ctx, rec)
	sink(graph.Event{Kind: graph.KindCustom, Data: "small"})
	sink(graph.Event{Kind: graph.KindCustom, Data: strings.Repeat("c", 2<<20)})
	sink(graph.Event{Kind: graph.KindValues, Data: graph.State{"doc": state}})
	s.End(ctx, rec, engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunSuccess})

	modes := []engine.StreamMode{"values", "custom"}
	got := follow(t, s, RunRequest{ThreadID: rec.ThreadID, RunID: rec.RunID, Modes: modes})
	if strings.Join(got.events(), ",") != "metadata,custom,custom,values,end" {
		t.Fatalf("events = %v", got.events())
	}
	var values map[string]string
	if err := json.Unmarshal(got.frames[3].Data, &values); err != nil || values["doc"] != state {
		t.Fatalf("values event of %d bytes does not hold the state (%v)", len(got.frames[3].Data), err)
	}
	var custom string
	if err := json.Unmarshal(got.frames[2].Data, &custom); err != nil || len(custom) != 2<<20 {
		t.Fatalf("large custom event: %d bytes, %v", len(custom), err)
	}
	// The run's input reaches followers' run info (metadata carries it by reference too).
	after, _, err := ParseEventID(got.frames[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	later := follow(t, s, RunRequest{ThreadID: rec.ThreadID, RunID: rec.RunID, Modes: modes, After: after, Resume: true})
	if strings.Join(later.events(), ",") != "custom,values,end" || len(later.frames[1].Data) != len(got.frames[3].Data) {
		t.Fatalf("resumed: %v", later.events())
	}
}

// TestLostEventsAreTold checks that what cannot be streamed is replaced by an "error" event the
// client gets: an event that cannot be encoded, one whose stored body is gone, and messages the
// log refused.
func TestLostEventsAreTold(t *testing.T) {
	l, s := openBus(t, 0, nil)
	ctx := context.Background()
	rec := testRun("custom")
	sink := s.Begin(ctx, rec)
	sink(graph.Event{Kind: graph.KindCustom, Data: math.NaN()}) // JSON has no NaN
	sink(graph.Event{Kind: graph.KindCustom, Data: strings.Repeat("x", 2<<20)})
	s.Flush(ctx, rec)
	// The large event's body disappears (as if expired).
	obs, err := eventlogtest.JetStream(l).ObjectStore(ctx, eventlog.BlobBucket(eventlog.OutputStream))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := obs.List(ctx)
	if err != nil || len(objs) != 1 {
		t.Fatalf("%d stored bodies, %v", len(objs), err)
	}
	if err := obs.Delete(ctx, objs[0].Name); err != nil {
		t.Fatal(err)
	}
	// Messages the log refused are announced with the next one.
	s.mu.Lock()
	p := s.runs[rec.RunID]
	s.mu.Unlock()
	p.q.refused(3, errors.New("stream refused"))
	sink(graph.Event{Kind: graph.KindCustom, Data: "after"})
	s.End(ctx, rec, engine.RunFinishedData{RunID: rec.RunID, Status: engine.RunSuccess})

	got := follow(t, s, RunRequest{ThreadID: rec.ThreadID, RunID: rec.RunID, Modes: []engine.StreamMode{"custom"}})
	if strings.Join(got.events(), ",") != "metadata,error,error,error,custom,end" {
		t.Fatalf("events = %v", got.events())
	}
	for i, want := range []string{"could not be encoded", "could not be fetched", "3 events were refused by the log (stream refused)"} {
		var e struct{ Error, Message string }
		if err := json.Unmarshal(got.frames[1+i].Data, &e); err != nil || e.Error != ErrorStreamEvent || !strings.Contains(e.Message, want) {
			t.Errorf("error event %d = %s, want %s saying %q", i, got.frames[1+i].Data, ErrorStreamEvent, want)
		}
	}
}
