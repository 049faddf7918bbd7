package checkpoints

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/jsoncount"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
)

// A run saves a checkpoint at every step, and its event was the run path's most expensive JSON:
// encoding/json walks the metadata and the version maps by reflection, copying every key and
// value. The encoders here write the same JSON directly: the same names in the same order (map
// keys sorted, as encoding/json sorts them), strings and numbers as encoding/json writes them,
// raw values checked and compacted as encoding/json does (which also escapes <, > and & inside
// them; a decoder reads both alike). Values other than decoded JSON (strings, numbers, bools,
// null, objects and lists of those), such as a node's typed update, still go through
// encoding/json. TestEncodeCheckpointMatchesEncodingJSON and FuzzEncodeMetadata hold them to
// that.

// encodeMetadata is md as a JSON object, as json.Marshal writes it.
func encodeMetadata(md map[string]any) (json.RawMessage, error) {
	return appendObject(make([]byte, 0, 64*len(md)+2), md)
}

// sortedKeys is m's keys in order. (slices.Sorted(maps.Keys(m)) grows its slice as it goes:
// this is one allocation.)
func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendValue appends v's JSON: scalars, and objects and lists of decoded JSON (the input and
// the updates a checkpoint's metadata holds as "writes") directly, anything else by
// encoding/json.
func appendValue(buf []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(buf, "null"...), nil
	case string:
		return appendString(buf, x), nil
	case bool:
		return strconv.AppendBool(buf, x), nil
	case int:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(buf, x, 10), nil
	case float64:
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return appendFloat(buf, x), nil
		}
	case map[string]any:
		return appendObject(buf, x)
	case graph.State:
		return appendObject(buf, x)
	case []any:
		if x == nil {
			return append(buf, "null"...), nil
		}
		buf = append(buf, '[')
		for i, e := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = appendValue(buf, e); err != nil {
				return nil, err
			}
		}
		return append(buf, ']'), nil
	case map[string]string:
		return appendMap(buf, x, func(buf []byte, s string) ([]byte, error) { return appendString(buf, s), nil })
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(buf, raw...), nil
}

// appendObject appends m as a JSON object, names sorted.
func appendObject[M ~map[string]any](buf []byte, m M) ([]byte, error) {
	return appendMap(buf, m, appendValue)
}

// appendMap appends m as a JSON object, names sorted, each value written by value; null for nil.
func appendMap[M ~map[string]V, V any](buf []byte, m M, value func([]byte, V) ([]byte, error)) ([]byte, error) {
	return appendMapOf(buf, m, func(buf []byte, _ string, v V) ([]byte, error) { return value(buf, v) })
}

// appendMapOf is appendMap with value told each name too.
func appendMapOf[M ~map[string]V, V any](buf []byte, m M, value func([]byte, string, V) ([]byte, error)) ([]byte, error) {
	if m == nil {
		return append(buf, "null"...), nil
	}
	buf = append(buf, '{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(appendString(buf, k), ':')
		var err error
		if buf, err = value(buf, k, m[k]); err != nil {
			return nil, fmt.Errorf("%q: %w", k, err)
		}
	}
	return append(buf, '}'), nil
}

// appendFloat appends a finite f as encoding/json writes a float64: the shortest decimal that
// reads back as f, in exponent form below 1e-6 and from 1e21 on, without a leading zero in a
// negative exponent.
func appendFloat(buf []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	buf = strconv.AppendFloat(buf, f, format, -1, 64)
	if format == 'e' {
		if n := len(buf); n >= 4 && buf[n-4] == 'e' && buf[n-3] == '-' && buf[n-2] == '0' {
			buf[n-2] = buf[n-1]
			buf = buf[:n-1]
		}
	}
	return buf
}

// appendString appends s as a JSON string. A string of printable ASCII without what
// encoding/json escapes (quotes, backslashes, <, >, &) is written as it is: ids, names, the
// usual metadata. Any other goes through encoding/json, for its escapes.
func appendString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			raw, _ := json.Marshal(s) // a string always encodes
			return append(buf, raw...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// appendRaw appends a raw JSON value compacted, refusing one that is not valid JSON (as
// encoding/json does for a json.RawMessage), null for an empty one. It compacts with jsontext,
// which does what json.Compact does (no string or number rewritten) in a third of its time: a
// checkpoint's metadata and channel values pass here, about 2% of the server's CPU per echo
// run with json.Compact (issue 28).
func appendRaw(buf []byte, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return append(buf, "null"...), nil
	}
	start := len(buf)
	buf = append(buf, raw...)
	v := jsontext.Value(buf[start:])
	if err := v.Compact(); err != nil {
		return nil, err
	}
	return append(buf[:start], v...), nil
}

// appendVersions appends a channel -> version map.
func appendVersions(buf []byte, m map[string]int64) ([]byte, error) {
	return appendMap(buf, m, func(buf []byte, n int64) ([]byte, error) { return strconv.AppendInt(buf, n, 10), nil })
}

// encodeCheckpointData is d as json.Marshal writes it.
func encodeCheckpointData(d *engine.CheckpointData) ([]byte, error) {
	return encodeCheckpoint(d, nil)
}

// span is where a part of an encoded document lies in it.
type span struct{ from, to int }

// checkpointSpans are where encodeCheckpoint wrote the parts of a checkpoint that the folds
// keep as JSON (see projections.PrimedCheckpoint).
type checkpointSpans struct {
	header, metadata span
	values           map[string]span
}

// encodeCheckpoint is encodeCheckpointData, noting in spans (unless nil) where it wrote what.
func encodeCheckpoint(d *engine.CheckpointData, spans *checkpointSpans) ([]byte, error) {
	size := len(d.Metadata) + 256
	for _, b := range d.Blobs {
		size += len(b.Value) + len(b.Ref) + 64
	}
	buf := make([]byte, 0, size)
	buf = append(buf, `{"ns":`...)
	buf = appendString(buf, d.NS)
	h := &d.Checkpoint
	buf = append(buf, `,"checkpoint":`...)
	headerAt := len(buf)
	buf = append(buf, `{"v":`...)
	buf = strconv.AppendInt(buf, int64(h.V), 10)
	buf = append(buf, `,"id":`...)
	buf = appendString(buf, h.ID)
	buf = append(buf, `,"ts":"`...)
	buf, err := h.TS.AppendText(buf) // (RFC 3339 with nanoseconds, as its MarshalJSON)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: checkpoint time: %w", err)
	}
	buf = append(buf, '"')
	buf = append(buf, `,"channel_versions":`...)
	if buf, err = appendVersions(buf, h.ChannelVersions); err != nil {
		return nil, err
	}
	buf = append(buf, `,"versions_seen":`...)
	if buf, err = appendMap(buf, h.VersionsSeen, appendVersions); err != nil {
		return nil, err
	}
	buf = append(buf, '}')
	headerEnd := len(buf)
	buf = append(buf, `,"metadata":`...)
	metadataAt := len(buf)
	if buf, err = appendRaw(buf, d.Metadata); err != nil {
		return nil, fmt.Errorf("checkpoints: metadata: %w", err)
	}
	if spans != nil {
		spans.header, spans.metadata = span{headerAt, headerEnd}, span{metadataAt, len(buf)}
		spans.values = make(map[string]span, len(d.Blobs))
	}
	buf = append(buf, `,"parent":`...)
	if p := d.Parent; p == nil {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, `{"thread_id":`...)
		buf = appendString(buf, p.ThreadID)
		buf = append(buf, `,"checkpoint_ns":`...)
		buf = appendString(buf, p.NS)
		buf = append(buf, `,"checkpoint_id":`...)
		buf = appendString(buf, p.ID)
		buf = append(buf, '}')
	}
	buf = append(buf, `,"blobs":`...)
	if spans == nil {
		buf, err = appendMap(buf, d.Blobs, appendBlob)
	} else {
		buf, err = appendBlobsAt(buf, d.Blobs, spans.values)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoints: channel %w", err)
	}
	if d.Full {
		buf = append(buf, `,"full":true`...)
	}
	return append(buf, '}'), nil
}

// appendBlob appends a channel's value at a version.
func appendBlob(buf []byte, b engine.BlobData) ([]byte, error) {
	buf, _, err := appendBlobAt(buf, b)
	return buf, err
}

// appendBlobsAt is appendMap(buf, blobs, appendBlob), noting in values where each value it
// wrote lies.
func appendBlobsAt(buf []byte, blobs map[string]engine.BlobData, values map[string]span) ([]byte, error) {
	return appendMapOf(buf, blobs, func(buf []byte, ch string, b engine.BlobData) ([]byte, error) {
		buf, at, err := appendBlobAt(buf, b)
		if at.to > at.from {
			values[ch] = at
		}
		return buf, err
	})
}

// appendBlobAt is appendBlob, returning where the value lies (an empty span without one).
func appendBlobAt(buf []byte, b engine.BlobData) ([]byte, span, error) {
	var at span
	buf = append(buf, `{"version":`...)
	buf = strconv.AppendInt(buf, b.Version, 10)
	if len(b.Value) > 0 {
		buf = append(buf, `,"value":`...)
		at.from = len(buf)
		var err error
		if buf, err = appendRaw(buf, b.Value); err != nil {
			return nil, at, err
		}
		at.to = len(buf)
	}
	if b.Ref != "" {
		buf = append(buf, `,"ref":`...)
		buf = appendString(buf, b.Ref)
	}
	return append(buf, '}'), at, nil
}

// checkpointEvent is the event of a checkpoint's data on thread threadID of tenant: built as
// eventlog.New builds one, with the data encoded by encodeCheckpointData (one document, its
// metadata in it).
//
// It also returns the payload as the folds read it back (see projections.PrimedCheckpoint), and
// whether there is one: not for a checkpoint whose time is not in UTC, which its JSON would read
// back in another location.
func checkpointEvent(tenant, threadID string, d *engine.CheckpointData) (eventlog.Event, projections.PrimedCheckpoint, bool, error) {
	jsoncount.Encoded()
	var spans checkpointSpans
	raw, err := encodeCheckpoint(d, &spans)
	if err != nil {
		return eventlog.Event{}, projections.PrimedCheckpoint{}, false, err
	}
	now := time.Now().UTC()
	e := eventlog.Event{ID: eventlog.NewID(now), Type: engine.ThreadCheckpoint, Aggregate: Aggregate(tenant, threadID),
		Time: now, Version: eventlog.Upcasts.Current(engine.ThreadCheckpoint), Data: raw}
	if d.Checkpoint.TS.Location() != time.UTC {
		return e, projections.PrimedCheckpoint{}, false, nil
	}
	part := func(s span) []byte { return raw[s.from:s.to:s.to] }
	p := projections.PrimedCheckpoint{NS: d.NS, Header: d.Checkpoint, HeaderJSON: part(spans.header),
		Metadata: part(spans.metadata), Parent: d.Parent, Full: d.Full}
	if d.Blobs != nil {
		p.Blobs = make(map[string]engine.BlobData, len(d.Blobs))
		for ch, b := range d.Blobs {
			b.Value = nil
			if s, ok := spans.values[ch]; ok {
				b.Value = part(s)
			}
			p.Blobs[ch] = b
		}
	}
	return e, p, true, nil
}
