// Package eventlogtest opens a real embedded JetStream log for tests, in a temporary folder that
// the test removes when it ends.
package eventlogtest

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/internal/raw"
)

// Open starts an embedded log in t.TempDir() and closes it when the test ends.
func Open(t testing.TB) *eventlog.Log {
	t.Helper()
	return OpenDir(t, t.TempDir())
}

// OpenDir starts an embedded log whose store is under dir, so a test can close and reopen it.
func OpenDir(t testing.TB, dir string) *eventlog.Log {
	t.Helper()
	l, err := eventlog.Open(context.Background(), eventlog.Config{
		Dir:    dir,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatalf("open event log: %v", err)
	}
	t.Cleanup(l.Close)
	return l
}

// Append appends an event of type typ with data to agg, unconditionally, and returns its
// sequence: the events a test sets up.
func Append(t testing.TB, l *eventlog.Log, agg eventlog.Aggregate, typ string, data any) uint64 {
	t.Helper()
	e, err := eventlog.New(agg, typ, data)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := l.Append(context.Background(), e, eventlog.Any)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// JetStream is the JetStream context of l, on l's own connection, for tests that inspect or
// break what the log keeps in JetStream (a stream's consumers, a lease, a stored body, the
// leader a connection is on). Code above eventlog reaches JetStream only through eventlog's
// capabilities.
func JetStream(l *eventlog.Log) jetstream.JetStream { return raw.JetStream(l) }

// Buffer is a strings.Builder safe for concurrent writes and reads: a test's log output, read
// while the code under test writes to it.
type Buffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
