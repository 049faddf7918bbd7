package streaming

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/eventlog"
)

// The follower's logic through the Bus it owns, without JetStream: the output stream is a list
// of messages in memory. bus_test.go runs the same paths on the real output stream.

// memBus is a Bus over messages in memory: the output stream from first on (the ones before
// expired), and bodies stored apart by name. It publishes nothing (Streamer.Begin is not under
// test here).
type memBus struct {
	msgs   []eventlog.Message // sequence i+1 at index i
	first  uint64
	maxAge time.Duration
	blobs  map[string][]byte
}

var errMemBus = errors.New("memBus: not kept in memory")

func (b *memBus) Publish(string, string, []byte) (eventlog.Published, error) {
	return eventlog.Published{}, errMemBus
}
func (b *memBus) MaxPayload() int            { return 1 << 20 }
func (b *memBus) Oversized(body []byte) bool { return len(body) > eventlog.InlineLimit }
func (b *memBus) PutBlob(context.Context, []byte) (eventlog.BlobRef, error) {
	return eventlog.BlobRef{}, errMemBus
}
func (b *memBus) GetBlob(_ context.Context, r eventlog.BlobRef) ([]byte, error) {
	if body, ok := b.blobs[r.Name]; ok {
		return body, nil
	}
	return nil, fmt.Errorf("%s: %w", r.Name, eventlog.ErrNoObject)
}
func (b *memBus) DecodeBody(context.Context, []byte) ([]eventlog.Event, error) {
	return nil, errMemBus
}

func (b *memBus) Bounds(_ context.Context, stream string) (eventlog.Bounds, error) {
	if stream != eventlog.OutputStream {
		return eventlog.Bounds{}, errMemBus
	}
	return eventlog.Bounds{First: b.first, Last: uint64(len(b.msgs)), MaxAge: b.maxAge}, nil
}

// kept are the messages on subject not expired, oldest first.
func (b *memBus) kept(subject string) []eventlog.Message {
	var out []eventlog.Message
	for _, m := range b.msgs[b.first-1:] {
		if matches(subject, m.Subject) {
			out = append(out, m)
		}
	}
	return out
}

func (b *memBus) Last(_ context.Context, subject string) (eventlog.Message, error) {
	if k := b.kept(subject); len(k) > 0 {
		return k[len(k)-1], nil
	}
	return eventlog.Message{}, eventlog.ErrNoMessage
}

func (b *memBus) First(_ context.Context, subject string) (eventlog.Message, error) {
	if k := b.kept(subject); len(k) > 0 {
		return k[0], nil
	}
	return eventlog.Message{}, eventlog.ErrNoMessage
}

func (b *memBus) Read(_ context.Context, stream, filter string, from uint64, deliver func(eventlog.Message), _ func(error)) (func(), error) {
	if stream != eventlog.OutputStream {
		return nil, errMemBus
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for _, m := range b.kept(filter) {
			if m.Seq >= from {
				deliver(m)
			}
		}
		<-stop // a live stream: nothing more comes
	}()
	var once sync.Once
	return func() { once.Do(func() { close(stop) }); <-done }, nil
}

// matches reports whether subject matches a NATS filter ("*" is one token, ">" the rest).
func matches(filter, subject string) bool {
	f, s := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, tok := range f {
		switch {
		case tok == ">":
			return len(s) > i
		case i >= len(s) || tok != "*" && tok != s[i]:
			return false
		}
	}
	return len(f) == len(s)
}

// add appends a message on subject holding recs (packed when several) and returns its sequence.
func (b *memBus) add(subject string, recs ...[]byte) uint64 {
	body := recs[0]
	if len(recs) > 1 {
		body = []byte(packVersion + "\n")
		for _, r := range recs {
			body = append(strconv.AppendInt(body, int64(len(r)), 10), '\n')
			body = append(body, r...)
		}
	}
	seq := uint64(len(b.msgs) + 1)
	b.msgs = append(b.msgs, eventlog.Message{Subject: subject, Seq: seq, Time: time.UnixMilli(1_700_000_000_000 + int64(seq)), Data: body})
	return seq
}

// record is an output record in the single-event form.
func record(event, data string) []byte {
	return []byte(wireVersion + "\n" + event + "\n\n\n\n" + data)
}

// TestFollowerOverMemoryBus follows a run whose output is a packed message, a record stored
// apart, one whose stored body is gone and another run's messages between them: in full, resumed
// after an event of a packed message, and resumed from an id older than the retention.
func TestFollowerOverMemoryBus(t *testing.T) {
	const thread, run = "th", "r1"
	subject, other := Subject(engine.DefaultTenant, thread, run), Subject(engine.DefaultTenant, thread, "r0")
	bus := &memBus{first: 1, maxAge: 2 * time.Minute, blobs: map[string][]byte{"big": record("custom", `"large"`)}}
	bus.add(other, record("metadata", `{"run_id":"r0"}`))
	bus.add(subject, record("metadata", `{"run_id":"r1"}`))                  // 2
	packed := bus.add(subject, record("custom", `1`), record("custom", `2`)) // 3
	bus.add(other, record("custom", `"not r1's"`))                           // 4
	ref := func(name string) []byte {
		return eventlog.AppendBlobRef([]byte(refVersion+"\n"), eventlog.BlobRef{Bucket: "B", Name: name, Size: 20})
	}
	stored := bus.add(subject, ref("big"))         // 5
	gone := bus.add(subject, ref("expired"))       // 6
	end := bus.add(subject, record("end", `null`)) // 7
	s := New(Config{Bus: bus, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	id := func(seq uint64, k int) string { return FrameID(bus.msgs[seq-1].Time, seq, k) }

	tests := []struct {
		name   string
		first  uint64 // the stream's first kept message
		after  string // Last-Event-ID, "" for none
		events string // event (or ": comment") and id of each frame
	}{
		{name: "whole", first: 1, events: "metadata " + id(2, 0) + ", custom " + id(packed, 0) + ", custom " + id(packed, 1) +
			", custom " + id(stored, 0) + ", error " + id(gone, 0) + ", end " + id(end, 0)},
		{name: "resumed in a packed message", first: 1, after: id(packed, 0),
			events: "custom " + id(packed, 1) + ", custom " + id(stored, 0) + ", error " + id(gone, 0) + ", end " + id(end, 0)},
		{name: "resumed past the retention", first: 4, after: id(2, 0),
			events: ": Last-Event-ID 2 is older than the stream's retention of 2m0s: restarting from the oldest kept event , " +
				"custom " + id(stored, 0) + ", error " + id(gone, 0) + ", end " + id(end, 0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bus.first = tc.first
			req := RunRequest{ThreadID: thread, RunID: run, Modes: []engine.StreamMode{engine.StreamCustom}}
			if tc.after != "" {
				pos, ok, err := ParseEventID(tc.after)
				if err != nil || !ok {
					t.Fatal(tc.after, err)
				}
				req.After, req.Resume = pos, true
			}
			got := follow(t, s, req)
			var frames []string
			for _, f := range got.frames {
				if f.Comment != "" {
					frames = append(frames, ": "+f.Comment+" ")
				} else {
					frames = append(frames, f.Event+" "+f.ID)
				}
			}
			if strings.Join(frames, ", ") != tc.events {
				t.Fatalf("frames:\n %s\nwant\n %s", strings.Join(frames, ", "), tc.events)
			}
			for _, f := range got.frames {
				switch f.ID {
				case id(stored, 0):
					if string(f.Data) != `"large"` {
						t.Errorf("the record stored apart reads %s", f.Data)
					}
				case id(gone, 0):
					if f.Event != "error" || !strings.Contains(string(f.Data), ErrorStreamEvent) {
						t.Errorf("the lost record's error event: %s", f.Data)
					}
				}
			}
		})
	}
}
