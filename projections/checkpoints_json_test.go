package projections

import (
	"encoding/json"
	"reflect"
	"testing"

	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/jetgraph/jetgraph/engine"
)

// checkStoredCheckpointJSON fails t unless appendJSON writes r as putJSON does (the same value
// once decoded), or declines.
func checkStoredCheckpointJSON(t *testing.T, r storedCheckpoint) {
	t.Helper()
	got, ok := r.appendJSON(nil)
	want, err := jsonv1.Marshal(r)
	if !ok {
		return // putJSON writes it (or refuses it)
	}
	if err != nil {
		t.Fatalf("appendJSON wrote %s, where putJSON refuses the record: %v", got, err)
	}
	var g, w any
	if err := jsonv1.Unmarshal(got, &g); err != nil {
		t.Fatalf("appendJSON wrote %s: %v", got, err)
	}
	if err := jsonv1.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("appendJSON wrote\n%s\nputJSON writes\n%s", got, want)
	}
}

func TestStoredCheckpointJSON(t *testing.T) {
	parent := &engine.CheckpointRef{ThreadID: "t<1>", NS: "", ID: "1ef"}
	for _, tc := range []struct {
		name string
		rec  storedCheckpoint
	}{
		{"empty", storedCheckpoint{}},
		{"no values", storedCheckpoint{Checkpoint: []byte(`{"id":"1"}`), Values: map[string]blobLoc{}}},
		{"full", storedCheckpoint{Checkpoint: []byte(`{"v":4,"id":"1ef","channel_versions":{"messages":3}}`),
			Metadata: []byte(`{"source":"loop","step":1,"note":"a <b> & \u2028"}`), Parent: parent,
			Values: map[string]blobLoc{"messages": {Version: 3, Origin: "1ef"}, "__start__": {Version: -1, Origin: ""}, "é\"\\": {Version: 1 << 40, Origin: "x"}}}},
		{"spaced raw", storedCheckpoint{Checkpoint: []byte(" { \"id\" : \"1\" } "), Metadata: []byte("\n{}\t")}},
		{"duplicate names", storedCheckpoint{Checkpoint: []byte(`{"id":"1","id":"2"}`)}},
		{"bad UTF-8", storedCheckpoint{Parent: &engine.CheckpointRef{ThreadID: "\xff"}, Values: map[string]blobLoc{"\xfe": {}}}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkStoredCheckpointJSON(t, tc.rec) })
	}
	// The common case is written without reflection.
	if _, ok := (storedCheckpoint{Checkpoint: []byte(`{"id":"1"}`), Metadata: []byte(`{}`), Parent: parent,
		Values: map[string]blobLoc{"a": {1, "1"}}}).appendJSON(nil); !ok {
		t.Fatal("appendJSON declined a plain record")
	}
}

func FuzzStoredCheckpointJSON(f *testing.F) {
	f.Add([]byte(`{"id":"1"}`), []byte(`{"step":1}`), "t", "", "1", "messages", int64(3), "1")
	f.Add([]byte(`{"a":"<\u2029>"}`), []byte(nil), "", "ns|x", "", "", int64(-1), "")
	f.Add([]byte(`[1,2]`), []byte(`null`), "\xff", "", "", "\x00", int64(0), "\xfe")
	f.Fuzz(func(t *testing.T, header, metadata []byte, thread, ns, id, channel string, version int64, origin string) {
		// The raw parts are valid JSON, read by a decoder or written by an encoder.
		if !json.Valid(header) {
			header = nil
		}
		if !json.Valid(metadata) {
			metadata = nil
		}
		r := storedCheckpoint{Checkpoint: header, Metadata: metadata, Values: map[string]blobLoc{channel: {version, origin}, "z": {1, id}}}
		if thread != "" {
			r.Parent = &engine.CheckpointRef{ThreadID: thread, NS: ns, ID: id}
		}
		checkStoredCheckpointJSON(t, r)
	})
}

// BenchmarkStoredCheckpointJSON: an echo run's checkpoint record, written by appendJSON and by
// reflection (putJSON's way).
func BenchmarkStoredCheckpointJSON(b *testing.B) {
	r := storedCheckpoint{Checkpoint: []byte(`{"v":4,"id":"1f0c1a2b-3c4d-6e5f-8a9b-0c1d2e3f4a5b","ts":"2026-11-29T03:00:00.000000+00:00","channel_versions":{"__start__":2,"messages":3,"branch:to:echo":3},"versions_seen":{"__input__":{},"__start__":{"__start__":1},"echo":{"branch:to:echo":2}}}`),
		Metadata: []byte(`{"source":"loop","step":1,"parents":{},"writes":{"echo":{"messages":[{"role":"assistant","content":"hi"}]}}}`),
		Parent:   &engine.CheckpointRef{ThreadID: "0193d0c4-2c8e-7b3a-9f1e-5a6b7c8d9e0f", ID: "1f0c1a2b-3c4d-6e5f-8a9b-0c1d2e3f4a5a"},
		Values:   map[string]blobLoc{"messages": {3, "1f0c1a2b-3c4d-6e5f-8a9b-0c1d2e3f4a5b"}, "__start__": {2, "1f0c1a2b-3c4d-6e5f-8a9b-0c1d2e3f4a5a"}}}
	b.Run("appendJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := r.appendJSON(nil); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("reflection", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonv1.Marshal(r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
