// Package eventlog is jetgraph's event log on NATS JetStream: it starts an embedded server or
// connects to a cluster, creates the streams, appends events with optimistic concurrency (one
// aggregate, one subject family) and atomic batches, and reads them back. It is the only package
// that uses JetStream: what else the services need of it comes as small capabilities (Leases,
// DispatchQueue, OutputBus, Objects), which each service holds through an interface of its own.
//
// Invariants:
//   - An event's subject is <kind>.<tenant>.<aggregate id>.<type>, or .../_ for the types that
//     share their aggregate's subject (ShareSubjects); every event of one aggregate matches
//     <kind>.<tenant>.<id>.*, which is what optimistic concurrency is checked against. An
//     event's type is read from the event, never from its subject.
//   - An event's ULID is its Nats-Msg-Id, so a retried append inside the duplicate window is
//     stored once.
//   - A batch is stored whole or not at all.
//   - A message body over InlineLimit is stored in its stream's object store before the message,
//     which carries a reference that every reader resolves (see blobs.go): any event size is
//     carried, and no reference is ever dangling.
//   - Leased work (Held, leased.go: a thread's runs, a deployment's pipeline steps, a batch of
//     traces to forward) is cancelled before its lease can expire without a successful renewal:
//     renewed every TTL/3, it stops TTL - TTL/4 after the last renewal that succeeded (counted
//     from when it was sent), even while the log is unreachable, so no two processes do the same
//     leased work at once.
package eventlog

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/jetgraph/jetgraph/engine/jsoncount"
)

// SchemaVersion is the first version of every event type: the `v` of its first data form. A
// type moves on from it with the upcasters registered for it (see Event, Upcasters).
const SchemaVersion = 1

// DefaultTenant is the tenant of a single-user installation.
const DefaultTenant = "default"

// Aggregate names the thing an event belongs to: its kind ("thread"), tenant and id.
type Aggregate struct {
	Kind   string `json:"kind"`
	Tenant string `json:"tenant"`
	ID     string `json:"id"`
}

// Filter is the subject that matches every event of the aggregate.
func (a Aggregate) Filter() string { return a.Kind + "." + a.Tenant + "." + a.ID + ".*" }

// Key is a stable string key for the aggregate, used by projections to track versions.
func (a Aggregate) Key() string { return a.Kind + "/" + a.Tenant + "/" + a.ID }

func (a Aggregate) String() string { return a.Key() }

// Event is the envelope stored for every change. Data is the event's own JSON payload, stored as
// given (New marshals it; a writer building Data itself must make it valid JSON: it is not
// parsed on append); Seq is filled in when an event is read back from the log.
//
// Version (`v`) is the version of Data's form for the event's Type, which changes over time
// like this:
//   - A change every reader folds as before (a new optional field) keeps the version.
//   - A change an older reader could not fold (a field renamed, moved, retyped or made
//     required) bumps it: the type's data struct takes its new form, and one Upcaster is
//     registered in Upcasts for the type and the version it lifts from (1 to 2), next to the
//     struct. Writers then stamp the new version (New does; a writer building an Event itself
//     sets Upcasts.Current(type)).
//   - Readers that fold events (the projectors, a thread's copy) upcast every event on read,
//     step by step up to the current version (v1 to v2 to v3), before decoding its data. An
//     event newer than the build, or one an upcaster refuses, halts the projection there: it
//     never skips an event.
//   - The log is never rewritten: the stored events keep the form and version they were
//     written with, `jetgraph events` and GET /events show them so, and a rebuild upcasts them
//     again. An upcaster is therefore kept for as long as the log holds events of its version.
type Event struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Aggregate Aggregate       `json:"aggregate"`
	Time      time.Time       `json:"time"`
	Version   int             `json:"v"`
	Data      json.RawMessage `json:"data"`
	Seq       uint64          `json:"seq,omitempty"`
}

// Subject is where the event is stored: <kind>.<tenant>.<id>.<type>, or <kind>.<tenant>.<id>._
// (SharedToken) for a type that shares its aggregate's subject (see ShareSubjects).
func (e Event) Subject() string {
	typ := e.Type
	if own, ok := sharedSubjects[e.Aggregate.Kind]; ok && !own[typ] {
		typ = SharedToken
	}
	return e.Aggregate.Kind + "." + e.Aggregate.Tenant + "." + e.Aggregate.ID + "." + typ
}

// SharedToken is the last token of the subject that the events of a kind named in ShareSubjects
// share, except the types it keeps apart: no event type is named so.
const SharedToken = "_"

// sharedSubjects holds, for each kind named in ShareSubjects, the types that keep a subject of
// their own.
var sharedSubjects = map[string]map[string]bool{}

// packedAcross holds the kinds named in PackAcross.
var packedAcross = map[string]bool{}

// PackAcross lets AppendBatch pack the unconditional events of several aggregates of kind and
// one tenant into one message, stored under the subject of the first. Call it from an init
// function only, for a kind whose events are read whole-stream or by tenant
// (<kind>.<tenant>.>), never by aggregate nor appended with a condition: traces, whose posts
// of many runs then cost one message rather than one each (issue 28). (Log.Load of such an
// aggregate finds only the events stored under its own subject, and returns no other's.)
func PackAcross(kind string) { packedAcross[kind] = true }

// packsAcross reports whether batch, of several aggregates, may be packed into one message.
func packsAcross(batch []Pending) bool {
	first := batch[0].Event.Aggregate
	if !packedAcross[first.Kind] {
		return false
	}
	for _, p := range batch {
		if p.Expect != Any || p.Event.Aggregate.Kind != first.Kind || p.Event.Aggregate.Tenant != first.Tenant {
			return false
		}
	}
	return true
}

// ShareSubjects makes the events of kind appended from now on share one subject per aggregate
// (<kind>.<tenant>.<id>._), except those of the types in own, which a consumer selects by
// subject and so keep <kind>.<tenant>.<id>.<type>. Call it from an init function only.
//
// Why: the server keeps an index entry for every subject of a stream, for as long as the stream
// holds a message of it, so an aggregate with one subject per type costs as many entries as it
// has types (a thread's creation, runs' creations, starts and ends, checkpoints: four) where one
// would do. Readers are unaffected: an aggregate's filter (<kind>.<tenant>.<id>.*) matches both
// forms, so optimistic concurrency and reading an aggregate back hold across logs written
// before, and an event's type is read from the event itself, never from its subject.
func ShareSubjects(kind string, own ...string) {
	m := map[string]bool{}
	for _, t := range own {
		m[t] = true
	}
	sharedSubjects[kind] = m
}

var (
	entropyMu sync.Mutex
	entropy   = ulid.Monotonic(rand.Reader, 0)
)

// NewID returns a new ULID, monotonic within this process.
func NewID(t time.Time) string {
	entropyMu.Lock()
	defer entropyMu.Unlock()
	return ulid.MustNew(ulid.Timestamp(t), entropy).String()
}

// New builds an event for agg with data marshalled to JSON, stamped now with a fresh ULID and
// the current version of its type.
func New(agg Aggregate, typ string, data any) (Event, error) {
	jsoncount.Encoded()
	raw, err := json.Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("eventlog: marshal %s data: %w", typ, err)
	}
	now := time.Now().UTC()
	return Event{ID: NewID(now), Type: typ, Aggregate: agg, Time: now, Version: Upcasts.Current(typ), Data: raw}, nil
}

// MaxTokenBytes bounds one subject token (an aggregate id, a tenant): far above a UUID or a
// store item's hash, far below what a subject may hold.
const MaxTokenBytes = 256

// ValidToken reports whether s can stand as one literal subject token: not empty, at most
// MaxTokenBytes, printable ASCII without the separator '.' or the wildcards '*' and '>'. An id
// from a request goes into a subject only once it passes, so that it never matches more than
// its own aggregate.
func ValidToken(s string) bool {
	if s == "" || len(s) > MaxTokenBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '.' || c == '*' || c == '>' {
			return false
		}
	}
	return true
}

// Validate returns an error unless every part of the aggregate's subject is a valid token.
func (a Aggregate) Validate() error {
	for _, t := range []string{a.Kind, a.Tenant, a.ID} {
		if !ValidToken(t) {
			return fmt.Errorf("eventlog: invalid subject token %q in aggregate %s", t, a.Key())
		}
	}
	return nil
}

func (e Event) validate() error {
	for _, t := range []string{e.Aggregate.Kind, e.Aggregate.Tenant, e.Aggregate.ID, e.Type} {
		if !ValidToken(t) {
			return fmt.Errorf("eventlog: invalid subject token %q in %s", t, e.Subject())
		}
	}
	if e.Type == SharedToken {
		return fmt.Errorf("eventlog: event type %q is the shared subject token", e.Type)
	}
	if e.ID == "" {
		return fmt.Errorf("eventlog: event %s has no id", e.Subject())
	}
	return nil
}

// Expect is the optimistic-concurrency condition of an append: the sequence of the aggregate's
// last event (0: the aggregate has no event yet), or no condition at all.
type Expect struct {
	set bool
	seq uint64
}

// Any appends whatever the aggregate's last event is.
var Any = Expect{}

// At appends only if the aggregate's last event is at seq (0: none yet).
func At(seq uint64) Expect { return Expect{set: true, seq: seq} }

// Pending is an event waiting to be appended with its condition.
type Pending struct {
	Event  Event
	Expect Expect
}
