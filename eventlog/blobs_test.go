package eventlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
)

// bigData is a JSON string of about n bytes.
func bigData(n int, fill byte) json.RawMessage {
	return json.RawMessage(`"` + strings.Repeat(string(fill), n) + `"`)
}

// TestLargeMessagesByReference appends events whose messages pass NATS's 1 MiB max payload, in
// every way a message is built (one event, a packed batch of one aggregate, an atomic batch
// over aggregates): each is stored, its message holds a reference, and every reader (Load,
// Subscribe, DecodeBody) hands the events back whole, also after a restart.
func TestLargeMessagesByReference(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	l := eventlogtest.OpenDir(t, dir)
	ev := func(agg eventlog.Aggregate, typ string, data json.RawMessage) eventlog.Event {
		e := mustEvent(t, agg, typ, nil)
		e.Data = data
		return e
	}
	tests := []struct {
		name  string
		batch []eventlog.Pending
	}{
		{"one event of 5 MiB", []eventlog.Pending{{Event: ev(thread("one"), "run_created", bigData(5<<20, 'a'))}}},
		{"packed batch of 3 x 600 KiB", []eventlog.Pending{
			{Event: ev(thread("packed"), "run_started", bigData(600<<10, 'b'))},
			{Event: ev(thread("packed"), "checkpoint", bigData(600<<10, 'c'))},
			{Event: ev(thread("packed"), "run_finished", bigData(600<<10, 'd'))},
		}},
		{"atomic batch over aggregates", []eventlog.Pending{
			{Event: ev(thread("x"), "created", bigData(2<<20, 'e')), Expect: eventlog.At(0)},
			{Event: ev(thread("y"), "created", json.RawMessage(`{"small":true}`)), Expect: eventlog.At(0)},
		}},
		{"just over the inline limit", []eventlog.Pending{{Event: ev(thread("edge"), "created", bigData(eventlog.InlineLimit, 'f'))}}},
	}
	var all []eventlog.Event
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := l.AppendBatch(ctx, tc.batch); err != nil {
				t.Fatalf("append: %v", err)
			}
			for _, p := range tc.batch {
				all = append(all, p.Event)
				got, err := l.Load(ctx, p.Event.Aggregate)
				if err != nil {
					t.Fatal(err)
				}
				if !containsEvent(got, p.Event) {
					t.Fatalf("Load(%s) lacks event %s of %d bytes", p.Event.Aggregate, p.Event.Type, len(p.Event.Data))
				}
			}
		})
	}

	// The stored messages are small: the bodies are in the stream's object store.
	js := eventlogtest.JetStream(l)
	st, err := js.Stream(ctx, eventlog.RuntimeStream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, "thread.default.one.>")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Data) > 1024 {
		t.Fatalf("the message of a 5 MiB event holds %d bytes; want a reference", len(m.Data))
	}
	if _, err := eventlog.DecodeMessage(m.Data); err == nil {
		t.Fatal("DecodeMessage read a reference as events")
	}
	events, err := l.DecodeBody(ctx, m.Data)
	if err != nil || len(events) != 1 || len(events[0].Data) != 5<<20+2 {
		t.Fatalf("DecodeBody: %d events, %v", len(events), err)
	}

	// A subscription delivers every event whole, and so does a log opened again.
	readAll := func(l *eventlog.Log) {
		sub, err := l.Subscribe(ctx, eventlog.RuntimeStream, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Stop()
		for i, want := range all {
			got, err := sub.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != want.ID || !bytes.Equal(got.Data, want.Data) {
				t.Fatalf("event %d: got %s (%d bytes), want %s (%d bytes)", i, got.ID, len(got.Data), want.ID, len(want.Data))
			}
		}
	}
	readAll(l)
	l.Close()
	readAll(eventlogtest.OpenDir(t, dir))
}

func containsEvent(events []eventlog.Event, want eventlog.Event) bool {
	for _, e := range events {
		if e.ID == want.ID && e.Type == want.Type && bytes.Equal(e.Data, want.Data) {
			return true
		}
	}
	return false
}

// TestBlobBucketsFollowStreams checks that the object stores of large bodies keep them at least
// as long as their streams keep messages, with the streams' replicas.
func TestBlobBucketsFollowStreams(t *testing.T) {
	ctx := context.Background()
	l := eventlogtest.Open(t)
	for _, stream := range []string{eventlog.RuntimeStream, eventlog.TraceStream, eventlog.OutputStream} {
		t.Run(stream, func(t *testing.T) {
			ref, err := l.PutBlob(ctx, stream, []byte("x"))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := l.GetBlob(ctx, ref); err != nil || string(got) != "x" {
				t.Fatalf("GetBlob = %q, %v", got, err)
			}
			js := eventlogtest.JetStream(l)
			obs, err := js.ObjectStore(ctx, eventlog.BlobBucket(stream))
			if err != nil {
				t.Fatal(err)
			}
			bs, err := obs.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s, err := js.Stream(ctx, stream)
			if err != nil {
				t.Fatal(err)
			}
			age := s.CachedInfo().Config.MaxAge
			if age == 0 && bs.TTL() != 0 || age > 0 && bs.TTL() <= age {
				t.Fatalf("bucket keeps bodies %v, its stream keeps messages %v", bs.TTL(), age)
			}
			if bs.Replicas() != s.CachedInfo().Config.Replicas {
				t.Fatalf("bucket has %d replicas, its stream %d", bs.Replicas(), s.CachedInfo().Config.Replicas)
			}
		})
	}
	if _, err := l.GetBlob(ctx, eventlog.BlobRef{Bucket: "JG_NOPE_BLOBS", Name: "x", Size: 1}); err == nil {
		t.Fatal("a reference to an unknown bucket was read")
	}
}

// FuzzParseBlobRef checks that any bytes parse or fail cleanly, and that references round-trip.
func FuzzParseBlobRef(f *testing.F) {
	f.Add(eventlog.AppendBlobRef(nil, eventlog.BlobRef{Bucket: "JG_RUNTIME_BLOBS", Name: "01JT", Size: 5 << 20}))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := eventlog.ParseBlobRef(b)
		if err != nil {
			return
		}
		back, err := eventlog.ParseBlobRef(eventlog.AppendBlobRef(nil, r))
		if err != nil || back != r {
			t.Fatalf("round trip of %+v: %+v, %v", r, back, err)
		}
	})
}
