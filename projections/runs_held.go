package projections

import (
	"math"
	"time"
	"unicode/utf8"

	"github.com/jetgraph/jetgraph/engine"
)

// maxHeldBytes bounds the records Hold keeps at once (by their estimated size): a long queue of
// runs with big inputs is read from the file instead of held in memory.
const maxHeldBytes = 16 << 20

// heldRun is a record Hold keeps, with its estimated size.
type heldRun struct {
	rec  engine.RunRecord
	size int
}

// Hold keeps rec, a run this process has just created and whose creation the projection has
// folded, for the worker that picks it up (Next) to take instead of decoding it from the file: a
// run's record as created never changes, only its state, which Next reads. Hold keeps a copy
// (the creator goes on using rec), and only of a record that a JSON round trip, which the file's
// copy went through, leaves as it is (JSON types, valid UTF-8), so that Next returns what the file
// holds either way. The copy is dropped when a worker takes it, when the run ends or goes, and
// when the projection is rebuilt; a run that is not active (it ended already) is not kept.
func (r *Runs) Hold(tenant string, rec engine.RunRecord) { r.hold(tenant, rec, false) }

// HoldCreating is Hold for a run about to be appended, whose id is new: its copy waits for the
// run's creation to be folded (a worker of this process may take the run as soon as it is,
// before the creator hears of it). Call Release if the creation fails.
func (r *Runs) HoldCreating(tenant string, rec engine.RunRecord) { r.hold(tenant, rec, true) }

// Release forgets what HoldCreating kept of a run whose creation failed.
func (r *Runs) Release(tenant, thread, run string) {
	k := watchKey(tenant, thread, run)
	r.liveMu.Lock()
	defer r.liveMu.Unlock()
	if h, ok := r.creating[k]; ok {
		delete(r.creating, k)
		r.heldBytes -= h.size
	}
}

func (r *Runs) hold(tenant string, rec engine.RunRecord, creating bool) {
	cp, size, ok := heldCopy(rec)
	if !ok {
		return
	}
	k := watchKey(tenant, rec.ThreadID, rec.RunID)
	r.liveMu.Lock()
	defer r.liveMu.Unlock()
	if r.heldBytes+size > maxHeldBytes {
		return
	}
	into := r.held
	if creating {
		into = r.creating
	} else if st, ok := r.live[k]; !ok || !st.Active() {
		return
	}
	if old, ok := into[k]; ok {
		r.heldBytes -= old.size
	}
	into[k] = heldRun{rec: cp, size: size}
	r.heldBytes += size
}

// promote moves the copy HoldCreating kept of run key k, whose creation a committed
// transaction folded, to held. Called with liveMu held.
func (r *Runs) promote(k string) {
	if h, ok := r.creating[k]; ok {
		delete(r.creating, k)
		r.held[k] = h
	}
}

// take removes and returns the record Hold kept of run key k (a watchKey). Called with liveMu held.
func (r *Runs) take(k string) (engine.RunRecord, bool) {
	h, ok := r.held[k]
	if ok {
		delete(r.held, k)
		r.heldBytes -= h.size
	}
	return h.rec, ok
}

// heldCopy is rec as the runs bucket gives it back once decoded (times to the microsecond, in
// UTC; no error cause), sharing no map or list with rec, and its estimated size; false when a
// JSON round trip would change a value of it.
func heldCopy(rec engine.RunRecord) (engine.RunRecord, int, bool) {
	c := jsonCopier{ok: true}
	k := rec.Kwargs
	for _, s := range []string{rec.RunID, rec.ThreadID, rec.AssistantID, rec.Status, rec.MultitaskStrategy,
		rec.Cancel, rec.Webhook, rec.Checkpoint, string(k.CheckpointID), string(k.Durability), string(k.Webhook)} {
		c.str(s)
	}
	out := rec
	out.CreatedAt, out.UpdatedAt, out.RunAt = fileTime(rec.CreatedAt), fileTime(rec.UpdatedAt), fileTime(rec.RunAt)
	out.StartedAt, out.EndedAt = fileTime(rec.StartedAt), fileTime(rec.EndedAt)
	if rec.Error != nil {
		c.str(rec.Error.Class)
		c.str(rec.Error.Message)
		out.Error = &engine.RunError{Class: rec.Error.Class, Message: rec.Error.Message}
	}
	out.Metadata = c.object(rec.Metadata)
	out.Kwargs.Command = c.object(k.Command)
	out.Kwargs.Config = c.object(k.Config)
	out.Kwargs.Context = c.object(k.Context)
	out.Kwargs.Input = c.value(k.Input)
	out.Kwargs.FeedbackKeys = copyStrings(&c, k.FeedbackKeys)
	out.Kwargs.InterruptAfter = copyStrings(&c, k.InterruptAfter)
	out.Kwargs.InterruptBefore = copyStrings(&c, k.InterruptBefore)
	out.Kwargs.StreamMode = copyStrings(&c, k.StreamMode)
	return out, c.size, c.ok
}

// fileTime is t as the file keeps it (engine.TimeLayout: microseconds, UTC).
func fileTime(t engine.Time) engine.Time {
	if t.IsZero() {
		return engine.Time{}
	}
	return engine.At(t.Truncate(time.Microsecond))
}

// jsonCopier copies JSON values (as encoding/json decodes them into an any) deeply, adding up
// their size; ok turns false at a value a JSON round trip would not give back as it is.
type jsonCopier struct {
	size int
	ok   bool
}

func (c *jsonCopier) str(s string) {
	c.size += len(s) + 16
	if c.ok && !utf8.ValidString(s) {
		c.ok = false // encoded with U+FFFD in its place
	}
}

func (c *jsonCopier) object(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		c.str(k)
		out[k] = c.value(v)
	}
	return out
}

func (c *jsonCopier) value(v any) any {
	c.size += 16
	switch x := v.(type) {
	case nil, bool:
		return x
	case string:
		c.str(x)
		return x
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			c.ok = false
		}
		return x
	case map[string]any:
		return c.object(x)
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = c.value(e)
		}
		return out
	}
	c.ok = false // an int, a typed map or list, a struct: decoded as another type
	return v
}

// copyStrings copies a list of strings, nil staying nil (null) and empty staying empty ([]).
func copyStrings[S ~string](c *jsonCopier, l []S) []S {
	if l == nil {
		return nil
	}
	out := make([]S, len(l))
	for i, s := range l {
		c.str(string(s))
		out[i] = s
	}
	return out
}
