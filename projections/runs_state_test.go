package projections

import (
	"reflect"
	"testing"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

func TestRunStateEncoding(t *testing.T) {
	at := engine.At(time.Date(2026, 11, 28, 21, 40, 1, 123456000, time.UTC))
	for _, tc := range []struct {
		name string
		st   RunState
	}{
		{"zero", RunState{}},
		{"pending", RunState{Status: engine.RunPending, UpdatedAt: at}},
		{"running", RunState{Status: engine.RunRunning, Attempt: 2, UpdatedAt: at, StartedAt: at, Checkpoint: "1f0c-ck"}},
		{"failed", RunState{Status: engine.RunFailed, Cancel: "interrupt", Attempt: 1, UpdatedAt: at, StartedAt: at,
			EndedAt: engine.At(at.Add(time.Second)), Error: &engine.RunError{Class: "ValueError", Message: "bad ✗ input\x00"}}},
		{"before 1970", RunState{Status: engine.RunSuccess, UpdatedAt: engine.At(time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeState(encodeState(nil, tc.st))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.st) {
				t.Fatalf("round trip: got %+v, want %+v", got, tc.st)
			}
		})
	}
	// A state stored as JSON (a file of an earlier schema) still reads.
	got, err := decodeState([]byte(`{"status":"running","attempt":1,"updated_at":"2026-11-28T21:40:01.123456+00:00","started_at":null,"ended_at":null}`))
	if err != nil || got.Status != engine.RunRunning || got.Attempt != 1 || !got.UpdatedAt.Equal(at.Time) {
		t.Fatalf("JSON state: %+v, %v", got, err)
	}
	for _, bad := range [][]byte{{stateFormat}, append(encodeState(nil, RunState{Status: "x"}), 0), {stateFormat, 200}} {
		if _, err := decodeState(bad); err == nil {
			t.Errorf("decodeState(%x): no error", bad)
		}
	}
}

// FuzzDecodeState: whatever the bytes, decodeState fails or returns a state that encodes back
// to what decodes to it again (for the binary form: JSON may hold times finer than it keeps).
func FuzzDecodeState(f *testing.F) {
	f.Add(encodeState(nil, RunState{Status: engine.RunRunning, Attempt: 1, Error: &engine.RunError{Class: "E"}}))
	f.Add([]byte(`{"status":"pending"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		st, err := decodeState(raw)
		if err != nil || raw[0] != stateFormat {
			return
		}
		again, err := decodeState(encodeState(nil, st))
		if err != nil {
			t.Fatalf("re-encoded state does not decode: %v", err)
		}
		if !reflect.DeepEqual(again, st) {
			t.Fatalf("round trip: %+v != %+v", again, st)
		}
	})
}
