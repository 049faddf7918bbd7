package eventlog

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jetgraph/jetgraph/engine/jsoncount"
)

// The body of a stored message is one of three forms. This build writes the framed one; every
// form stays readable:
//
//   - framed: the byte frameV1, the number of events (uvarint), then per event its ID, Type,
//     Aggregate.Kind, Aggregate.Tenant, Aggregate.ID, Time (time.Time.AppendBinary, with its
//     offset), Version (varint) and Data, each string and byte field as a uvarint length and its
//     bytes. Data is stored as given, never parsed: the payload is scanned by nobody but the
//     fold that reads it. A JSON text never starts with this byte.
//   - a JSON object: one Event (what builds before the framed form wrote for single appends);
//   - a JSON array of Events (their packed messages).
//
// A message may also hold a reference to its body in an object store (frameRef, see blobs.go):
// Log.DecodeBody reads those.
const frameV1 = 0x01

// nullData stands for an event without data, as the JSON forms stored it.
var nullData = json.RawMessage("null")

// encodeFrame writes events in the framed form.
func encodeFrame(events []Event) ([]byte, error) {
	n := 1 + binary.MaxVarintLen64
	for _, e := range events {
		n += len(e.ID) + len(e.Type) + len(e.Aggregate.Kind) + len(e.Aggregate.Tenant) +
			len(e.Aggregate.ID) + len(e.Data) + 16 + 7*binary.MaxVarintLen32
	}
	b := make([]byte, 0, n)
	b = append(b, frameV1)
	b = binary.AppendUvarint(b, uint64(len(events)))
	var err error
	for _, e := range events {
		for _, s := range []string{e.ID, e.Type, e.Aggregate.Kind, e.Aggregate.Tenant, e.Aggregate.ID} {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
		at := len(b)
		b = append(b, 0) // the time's length, at most 16 bytes
		if b, err = e.Time.AppendBinary(b); err != nil {
			return nil, fmt.Errorf("eventlog: encode time of %s: %w", e.ID, err)
		}
		b[at] = byte(len(b) - at - 1)
		b = binary.AppendVarint(b, int64(e.Version))
		data := e.Data
		if len(data) == 0 {
			data = nullData
		}
		b = binary.AppendUvarint(b, uint64(len(data)))
		b = append(b, data...)
	}
	return b, nil
}

// DecodeMessage reads the events of a stored message body in any of its inline forms. Their Seq
// is left for the caller to set. The events' Data share memory with body.
func DecodeMessage(body []byte) ([]Event, error) {
	switch {
	case len(body) > 0 && body[0] == frameV1:
		return decodeFrame(body[1:])
	case len(body) > 0 && body[0] == frameRef:
		return nil, errors.New("a body stored by reference: read it with Log.DecodeBody")
	case len(body) > 0 && body[0] == '[':
		var events []Event
		jsoncount.Decoded()
		if err := json.Unmarshal(body, &events); err != nil {
			return nil, err
		}
		return events, nil
	}
	events := make([]Event, 1)
	jsoncount.Decoded()
	if err := json.Unmarshal(body, &events[0]); err != nil {
		return nil, err
	}
	return events, nil
}

var errShortFrame = errors.New("truncated framed message")

func decodeFrame(b []byte) ([]Event, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 || count > uint64(len(b)) {
		return nil, errShortFrame
	}
	b = b[n:]
	bytesOf := func() ([]byte, bool) {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return nil, false
		}
		v := b[n : n+int(l)]
		b = b[n+int(l):]
		return v, true
	}
	events := make([]Event, count)
	for i := range events {
		e := &events[i]
		var ok bool
		for _, s := range []*string{&e.ID, &e.Type, &e.Aggregate.Kind, &e.Aggregate.Tenant, &e.Aggregate.ID} {
			var v []byte
			if v, ok = bytesOf(); !ok {
				return nil, errShortFrame
			}
			*s = string(v)
		}
		t, ok := bytesOf()
		if !ok {
			return nil, errShortFrame
		}
		if err := e.Time.UnmarshalBinary(t); err != nil {
			return nil, fmt.Errorf("time of event %s: %w", e.ID, err)
		}
		v, n := binary.Varint(b)
		if n <= 0 {
			return nil, errShortFrame
		}
		e.Version, b = int(v), b[n:]
		data, ok := bytesOf()
		if !ok {
			return nil, errShortFrame
		}
		e.Data = data
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d bytes after the last event of a framed message", len(b))
	}
	return events, nil
}
