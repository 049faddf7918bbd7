package checkpoints

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

// The hand-written encoders write what encoding/json writes, byte for byte, for the values a
// run's checkpoints hold: ids and names, the odd string that needs escapes, numbers, nested
// values, raw channel values (compacted as encoding/json compacts them).
func TestEncodeCheckpointMatchesEncodingJSON(t *testing.T) {
	ts := time.Date(2026, 11, 28, 17, 0, 0, 123456789, time.UTC)
	mds := map[string]map[string]any{
		"nil":   nil,
		"empty": {},
		"a run's": {"run_id": "019ac0de-0000-7000-8000-000000000000", "graph_id": "echo", "step": 2, "source": "loop",
			"parents": map[string]string{}, "writes": map[string]any{"echo": map[string]any{"messages": []any{"hi"}}}},
		"escapes":  {"q\"uote": "a\\b", "html": "<b>&amp;</b>", "amp": "a&b", "gt": "a>b", "ctl": "a\nb\tc\x01", "uni": "é\u2028✓", "bad": "\xff"},
		"numbers":  {"f": 1.5, "big": 1e21, "small": 1e-7, "neg": -3, "i64": int64(math.MaxInt64), "nan": nil},
		"kinds":    {"t": true, "f": false, "raw": json.RawMessage(` { "x" : [1, 2] } `), "list": []string{"a"}, "m": map[string]string{"z": "1", "a": "<"}},
		"nil maps": {"ms": map[string]string(nil)},
	}
	for name, md := range mds {
		t.Run("metadata "+name, func(t *testing.T) {
			got, err := encodeMetadata(md)
			sameAsEncodingJSON(t, got, err, md)
		})
	}
	if _, err := encodeMetadata(map[string]any{"ch": make(chan int)}); err == nil {
		t.Fatal("a value encoding/json refuses was encoded")
	}

	ds := map[string]engine.CheckpointData{
		"zero": {},
		"first": {NS: "", Metadata: json.RawMessage(`{"step":-1}`), Full: true,
			Checkpoint: engine.CheckpointHeader{V: 1, ID: "c1", TS: ts, ChannelVersions: map[string]int64{"__start__": 1}, VersionsSeen: map[string]map[string]int64{}},
			Blobs:      map[string]engine.BlobData{"__start__": {Version: 1, Value: json.RawMessage(`{"messages":[{"role":"user","content":"hi"}]}`)}}},
		"diff": {NS: "sub:t|x<y>", Metadata: json.RawMessage(` {"a" : 1} `), Parent: &engine.CheckpointRef{ThreadID: "t", NS: "n", ID: "p"},
			Checkpoint: engine.CheckpointHeader{V: 1, ID: "c2", TS: ts, ChannelVersions: map[string]int64{"b": 2, "a": 1},
				VersionsSeen: map[string]map[string]int64{"node": {"b": 1, "a": 1}, "__input__": {}, "nil": nil}},
			Blobs: map[string]engine.BlobData{"gone": {Version: 3}, "big": {Version: 2, Ref: "sha256:ab"}, "v": {Version: 1, Value: json.RawMessage("[1, 2]")}}},
	}
	for name, d := range ds {
		t.Run("data "+name, func(t *testing.T) {
			got, err := encodeCheckpointData(&d)
			sameAsEncodingJSON(t, got, err, d)
		})
	}
	bad := engine.CheckpointData{Blobs: map[string]engine.BlobData{"a": {Value: json.RawMessage(`{"x":`)}}}
	if _, err := encodeCheckpointData(&bad); err == nil {
		t.Fatal("a channel value that is not JSON was encoded")
	}
	bad = engine.CheckpointData{Metadata: json.RawMessage(`nope`)}
	if _, err := encodeCheckpointData(&bad); err == nil {
		t.Fatal("metadata that is not JSON was encoded")
	}
}

// FuzzEncodeMetadata holds the string and number encoders to encoding/json's output.
func FuzzEncodeMetadata(f *testing.F) {
	f.Add("run_id", "019ac0de", int64(3), "<&>")
	f.Add("k\"", "\u2028\xff\n", int64(-1), "")
	f.Fuzz(func(t *testing.T, k, v string, n int64, other string) {
		md := map[string]any{k: v, k + "n": n, "parents": map[string]string{other: v}, other: []any{v}}
		got, err := encodeMetadata(md)
		sameAsEncodingJSON(t, got, err, md)
	})
}

// sameAsEncodingJSON fails t unless got (encoded with err) is what json.Marshal writes for v.
func sameAsEncodingJSON(t *testing.T, got []byte, err error, v any) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(v)
	if !bytes.Equal(got, want) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
