package eventlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
)

// An Upcaster lifts the data of an event from one version of its type to the next: it is given
// the stored JSON of version n and returns the JSON of version n+1. It must be a pure function
// of its input (a rebuild upcasts the same events again and must fold them the same way).
type Upcaster func(data json.RawMessage) (json.RawMessage, error)

// ErrUnknownVersion is wrapped by the error of Upcast for an event newer than this build knows:
// written by a newer jetgraph on the same log. A reader must stop there, not guess.
var ErrUnknownVersion = errors.New("event version unknown to this build")

// Upcasters is a registry of the event types' versions: for each type, one Upcaster per version
// it lifts from (1 to 2, 2 to 3, ...). A type without any is at SchemaVersion. Readers that fold
// events call Upcast on each before decoding its data; writers stamp the type's Current version
// (New does). Register at start (in an init function, next to the type's data); Upcast,
// Current and Register are safe for concurrent use, and reads take no lock.
type Upcasters struct {
	mu    sync.Mutex // serialises Register
	steps atomic.Pointer[map[string][]Upcaster]
}

// Upcasts is the registry of this build's event types, which the projectors and New use.
var Upcasts = NewUpcasters()

// NewUpcasters returns an empty registry: every type at SchemaVersion.
func NewUpcasters() *Upcasters {
	u := &Upcasters{}
	u.steps.Store(&map[string][]Upcaster{})
	return u
}

// Register adds the upcaster of typ from version from to from+1, which becomes the version
// writers of typ write. Steps are registered in order, each from the type's current version:
// registering another (a gap, or the same step twice) is a programming error, and panics.
func (u *Upcasters) Register(typ string, from int, f Upcaster) {
	u.mu.Lock()
	defer u.mu.Unlock()
	old := *u.steps.Load()
	if cur := SchemaVersion + len(old[typ]); from != cur || f == nil {
		panic(fmt.Sprintf("eventlog: upcaster of %s from version %d registered while the type is at version %d", typ, from, cur))
	}
	steps := maps.Clone(old)
	steps[typ] = append(append([]Upcaster(nil), old[typ]...), f)
	u.steps.Store(&steps)
}

// Current is the version of typ this build writes and folds.
func (u *Upcasters) Current(typ string) int { return SchemaVersion + len((*u.steps.Load())[typ]) }

// Upcast returns e with its data in the current version of its type, lifted step by step by the
// registered upcasters; an event already there is returned as it is (a version of 0, from
// before versions were stamped, is the first). The log is never rewritten: this is done on
// every read. It fails, wrapping ErrUnknownVersion, for an event of a version newer than this
// build knows, and when an upcaster fails.
func (u *Upcasters) Upcast(e Event) (Event, error) {
	steps := (*u.steps.Load())[e.Type]
	cur := SchemaVersion + len(steps)
	v := max(e.Version, SchemaVersion)
	if v > cur {
		return e, fmt.Errorf("eventlog: %s event %s (seq %d) is version %d; this build reads %s up to version %d: %w",
			e.Type, e.ID, e.Seq, e.Version, e.Type, cur, ErrUnknownVersion)
	}
	for ; v < cur; v++ {
		data, err := steps[v-SchemaVersion](e.Data)
		if err == nil && !json.Valid(data) {
			err = errors.New("the upcaster returned invalid JSON")
		}
		if err != nil {
			return e, fmt.Errorf("eventlog: upcast %s event %s (seq %d) from version %d: %w", e.Type, e.ID, e.Seq, v, err)
		}
		e.Data, e.Version = data, v+1
	}
	return e, nil
}
