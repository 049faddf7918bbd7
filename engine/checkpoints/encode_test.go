package checkpoints

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/projections"
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
		"escapes": {"q\"uote": "a\\b", "html": "<b>&amp;</b>", "amp": "a&b", "gt": "a>b", "ctl": "a\nb\tc\x01", "uni": "é\u2028✓", "bad": "\xff"},
		"numbers": {"f": 1.5, "big": 1e21, "under": 999999999999999900000.0, "small": 1e-7, "tiny": -1.5e-300, "edge": 1e-6,
			"zero": 0.0, "negzero": math.Copysign(0, -1), "neg": -3, "i64": int64(math.MaxInt64), "max": math.MaxFloat64, "nan": nil},
		"nested": {"writes": map[string]any{"echo": graph.State{"messages": []any{map[string]any{"content": "<hi>", "n": 2.5}, nil, []any{}}},
			"typed": map[string]any{"msg": struct{ A string }{"x"}}, "nil list": []any(nil), "nil map": map[string]any(nil)}},
		"kinds":    {"t": true, "f": false, "raw": json.RawMessage(` { "x" : [1, 2] } `), "list": []string{"a"}, "m": map[string]string{"z": "1", "a": "<"}},
		"nil maps": {"ms": map[string]string(nil)},
	}
	for name, md := range mds {
		t.Run("metadata "+name, func(t *testing.T) {
			got, err := encodeMetadata(md)
			sameAsEncodingJSON(t, got, err, md)
		})
	}
	for _, v := range []any{make(chan int), math.NaN(), []any{math.Inf(1)}} {
		if _, err := encodeMetadata(map[string]any{"k": v}); err == nil {
			t.Fatalf("%v, which encoding/json refuses, was encoded", v)
		}
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
	f.Add("f", "", int64(7), "x")
	f.Fuzz(func(t *testing.T, k, v string, n int64, other string) {
		x := math.Float64frombits(uint64(n))
		if math.IsNaN(x) || math.IsInf(x, 0) {
			x = float64(n)
		}
		md := map[string]any{k: v, k + "n": n, "parents": map[string]string{other: v}, other: []any{v, x, float64(n) / 7},
			"writes": map[string]any{v: map[string]any{other: x}}}
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

// BenchmarkCheckpointEvent compares the direct encoders with encoding/json on the checkpoint an
// echo run saves after its step: run metadata, the node's writes, three channels.
func BenchmarkCheckpointEvent(b *testing.B) {
	msgs := json.RawMessage(`[{"content":"hi","type":"human","id":"a1"},{"content":"hi","type":"ai","id":"a2"}]`)
	md := map[string]any{"run_id": "019ac0de-0000-7000-8000-000000000000", "thread_id": "019ac0de-0000-7000-8000-000000000001",
		"graph_id": "echo", "assistant_id": "fe096781-5601-53d2-b2f6-0d3403f7e9ca", "user_id": "", "source": "loop", "step": 1,
		"parents": map[string]string{}, "writes": map[string]any{"echo": map[string]any{"messages": []any{map[string]any{"content": "hi", "type": "ai"}}}}}
	d := engine.CheckpointData{Parent: &engine.CheckpointRef{ThreadID: "t", ID: "019ac0de-0000-7000-8000-000000000002"},
		Checkpoint: engine.CheckpointHeader{V: 1, ID: "019ac0de-0000-7000-8000-000000000003", TS: time.Now().UTC(),
			ChannelVersions: map[string]int64{"__start__": 2, "messages": 3, "branch:to:echo": 3},
			VersionsSeen:    map[string]map[string]int64{"__input__": {}, "__start__": {"__start__": 1}, "echo": {"branch:to:echo": 2}}},
		Blobs: map[string]engine.BlobData{"messages": {Version: 3, Value: msgs}, "branch:to:echo": {Version: 3}}}
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d.Metadata, _ = encodeMetadata(md)
			if _, err := encodeCheckpointData(&d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d.Metadata, _ = json.Marshal(md)
			if _, err := json.Marshal(d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzAppendRaw holds appendRaw to json.Compact: the same bytes for valid JSON (what precedes it
// in the buffer kept), an error for the rest.
func FuzzAppendRaw(f *testing.F) {
	for _, s := range []string{` { "x" : [1, 2] } `, `"a\u2028<b>"`, `[1e3, -0.5, true, null]`, `{"a":`, `nope`, "\"\xff\"", `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) == 0 {
			return // null, tested above
		}
		got, err := appendRaw([]byte("prefix"), raw)
		var want bytes.Buffer
		wantErr := json.Compact(&want, raw)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("appendRaw(%q) error %v, json.Compact's %v", raw, err, wantErr)
		}
		if err == nil && string(got) != "prefix"+want.String() {
			t.Fatalf("appendRaw(%q) = %q, want prefix%q", raw, got, want.String())
		}
	})
}

// TestPrimedCheckpointEqualsDecoded: what a checkpoint's writer hands the folds (checkpointEvent's
// primed payload) is what they would decode from its event, field for field, so that a fold's
// result does not depend on it.
func TestPrimedCheckpointEqualsDecoded(t *testing.T) {
	ts := time.Date(2026, 11, 29, 1, 0, 0, 123456789, time.UTC)
	now := time.Now().UTC()
	ds := map[string]engine.CheckpointData{
		"empty": {Checkpoint: engine.CheckpointHeader{TS: ts}},
		"first": {Metadata: json.RawMessage(`{"step":-1, "writes": {"__start__": {"messages": ["hi"]}}}`), Full: true,
			Checkpoint: engine.CheckpointHeader{V: 1, ID: "c1", TS: now, ChannelVersions: map[string]int64{"__start__": 1}, VersionsSeen: map[string]map[string]int64{}},
			Blobs:      map[string]engine.BlobData{"__start__": {Version: 1, Value: json.RawMessage(` {"messages":[{"role":"user","content":"<hi>\u2028"}]} `)}}},
		"diff": {NS: "sub:t|x<y>", Metadata: nil, Parent: &engine.CheckpointRef{ThreadID: "t", NS: "n", ID: "p"},
			Checkpoint: engine.CheckpointHeader{V: 1, ID: "c2", TS: ts, ChannelVersions: map[string]int64{"b": 2, "a\"q": 1},
				VersionsSeen: map[string]map[string]int64{"node": {"b": 1, "a": 1}, "__input__": {}, "nil": nil}},
			Blobs: map[string]engine.BlobData{"gone": {Version: 3}, "big": {Version: 2, Ref: "sha256:ab"}, "v": {Version: 1, Value: json.RawMessage("[1, 2]")}, "null": {Version: 4, Value: json.RawMessage("null")}}},
		"nil blobs": {Checkpoint: engine.CheckpointHeader{ID: "c3", TS: ts, ChannelVersions: map[string]int64{}}, Metadata: json.RawMessage(`null`)},
	}
	for name, d := range ds {
		t.Run(name, func(t *testing.T) {
			e, primed, ok, err := checkpointEvent("default", "t", &d)
			if err != nil || !ok {
				t.Fatalf("checkpointEvent: primed %v, %v", ok, err)
			}
			decoded, err := projections.DecodeCheckpointPayload(e.Data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(primed, decoded) {
				t.Fatalf("primed  %#v\ndecoded %#v", primed, decoded)
			}
		})
	}
	local := engine.CheckpointData{Checkpoint: engine.CheckpointHeader{TS: ts.In(time.FixedZone("x", 3600))}}
	if _, _, ok, err := checkpointEvent("default", "t", &local); err != nil || ok {
		t.Fatalf("a checkpoint timed outside UTC was primed (%v)", err)
	}
}
