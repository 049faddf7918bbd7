package eventlog_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// TestSubscriptionReplacesALostConsumer: when the server loses a subscription's consumer, the
// subscription says so in the log and goes on from where it was with a new one, neither
// skipping nor repeating an event.
func TestSubscriptionReplacesALostConsumer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out eventlogtest.Buffer
	l := eventlogtest.OpenConfig(t, eventlog.Config{Dir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&out, nil))})
	agg := thread("0b6a4a5e-3a8c-4f0e-9b7e-2f4d9c1e8a01")
	add := func(n int) { eventlogtest.Append(t, l, agg, "noted", map[string]int{"n": n}) }
	add(1)
	sub, err := l.Subscribe(ctx, eventlog.RuntimeStream, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	first, err := sub.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// The server loses every consumer of the stream: the subscription's is among them.
	js := eventlogtest.JetStream(l)
	stream, err := js.Stream(ctx, eventlog.RuntimeStream)
	if err != nil {
		t.Fatal(err)
	}
	names := stream.ConsumerNames(ctx)
	deleted := 0
	for name := range names.Name() {
		if err := js.DeleteConsumer(ctx, eventlog.RuntimeStream, name); err != nil {
			t.Fatal(err)
		}
		deleted++
	}
	if err := names.Err(); err != nil || deleted == 0 {
		t.Fatalf("the stream's consumers: %d deleted, %v", deleted, err)
	}
	add(2)
	add(3)
	for _, want := range []uint64{first.Seq + 1, first.Seq + 2} {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("after its consumer was deleted: %v", err)
		}
		if e.Seq != want {
			t.Fatalf("after its consumer was deleted, the subscription read sequence %d, want %d", e.Seq, want)
		}
	}
	if log := out.String(); !strings.Contains(log, "eventlog: replacing a consumer") || !strings.Contains(log, "stream="+eventlog.RuntimeStream) {
		t.Fatalf("no replacement of the lost consumer in the log:\n%s", log)
	}
}
