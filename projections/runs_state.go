package projections

import (
	"encoding/binary"
	"errors"
	"time"

	"go.etcd.io/bbolt"

	"github.com/jetgraph/jetgraph/engine"
)

// The run_state bucket holds a run's state in a compact binary form rather than JSON: every
// transition of every run writes it (three times for a run that starts and ends), and the loops
// that wait for runs and the worker's queue read it; encoding it is a few appends, decoding it
// a few slices, with none of a JSON document's reflection and allocations.
//
// The form, after stateFormat (a byte no JSON text starts with):
//
//	status, cancel, checkpoint   strings: uvarint length, then the bytes
//	attempt                      uvarint
//	updated_at, started_at,      each a varint of unix microseconds (the zero time's for none;
//	ended_at                     the file keeps times to the microsecond, as its JSON did)
//	error                        0 for none; 1, then its class and message as strings

// stateFormat starts a state in the binary form.
const stateFormat = 0xb1

// zeroMicros is the zero time in unix microseconds.
var zeroMicros = time.Time{}.UnixMicro()

var errBadState = errors.New("projections: malformed run state")

// encodeState appends st in the binary form to b.
func encodeState(b []byte, st RunState) []byte {
	b = append(b, stateFormat)
	b = appendString(b, st.Status)
	b = appendString(b, st.Cancel)
	b = appendString(b, st.Checkpoint)
	b = binary.AppendUvarint(b, uint64(max(st.Attempt, 0)))
	for _, t := range []engine.Time{st.UpdatedAt, st.StartedAt, st.EndedAt} {
		b = binary.AppendVarint(b, t.UnixMicro())
	}
	if st.Error == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = appendString(b, st.Error.Class)
	return appendString(b, st.Error.Message)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// stateReader reads the binary form; the first malformed field sets err and makes the rest
// read as zero.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) uvarint() uint64 { return readNumber(r, binary.Uvarint) }

func (r *stateReader) varint() int64 { return readNumber(r, binary.Varint) }

// readNumber reads a number of r with read (binary.Uvarint or Varint).
func readNumber[T uint64 | int64](r *stateReader, read func([]byte) (T, int)) T {
	if r.err != nil {
		return 0
	}
	v, n := read(r.b)
	if n <= 0 {
		r.err = errBadState
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *stateReader) string() string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)) {
		r.err = errBadState
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *stateReader) time() engine.Time {
	us := r.varint()
	if us == zeroMicros {
		return engine.Time{}
	}
	return engine.At(time.UnixMicro(us))
}

func (r *stateReader) byte() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.err = errBadState
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// decodeState reads a state stored by encodeState, or as JSON (a file of an earlier schema,
// until its rebuild).
func decodeState(raw []byte) (RunState, error) {
	var st RunState
	if len(raw) == 0 || raw[0] != stateFormat {
		return st, decodeJSON(raw, &st)
	}
	r := stateReader{b: raw[1:]}
	st.Status, st.Cancel, st.Checkpoint = r.string(), r.string(), r.string()
	attempt := r.uvarint()
	if attempt > 1<<31 {
		r.err = errBadState
	}
	st.Attempt = int(attempt)
	st.UpdatedAt, st.StartedAt, st.EndedAt = r.time(), r.time(), r.time()
	switch r.byte() {
	case 0:
	case 1:
		st.Error = &engine.RunError{Class: r.string(), Message: r.string()}
	default:
		r.err = errBadState
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errBadState
	}
	if r.err != nil {
		return RunState{}, r.err
	}
	return st, nil
}

// putState stores st under key.
func putState(b *bbolt.Bucket, key []byte, st RunState) error {
	return b.Put(key, encodeState(make([]byte, 0, 64), st))
}

// getState reads the state under key and reports whether it is there.
func getState(b *bbolt.Bucket, key []byte) (RunState, bool, error) {
	raw := b.Get(key)
	if raw == nil {
		return RunState{}, false, nil
	}
	st, err := decodeState(raw)
	return st, true, err
}
