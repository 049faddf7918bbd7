// Package raw passes the JetStream context of an open log from eventlog to eventlogtest, and to
// nothing else (it is internal to eventlog): tests inspect and break what the log keeps in
// JetStream through it, while code above eventlog reaches JetStream only through eventlog's
// capabilities (leases, the dispatch queue, the output bus, object stores).
package raw

import "github.com/nats-io/nats.go/jetstream"

// JetStream returns the JetStream context of an *eventlog.Log; eventlog sets it.
var JetStream func(log any) jetstream.JetStream
