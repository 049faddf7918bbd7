package engine

import (
	"encoding/json"
	"testing"
	"time"
)

func TestTimeJSON(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 16, 54, 123456000, time.UTC)
	for _, tc := range []struct {
		name string
		in   string
		want time.Time
		bad  bool
	}{
		{"layout", `"2026-11-22T10:16:54.123456+00:00"`, at, false},
		{"other offset, read as UTC", `"2026-11-22T12:16:54.123456+02:00"`, at, false},
		{"Z", `"2026-11-22T10:16:54.123456Z"`, at, false},
		{"escaped", `"2026-11-22T10:16:54.123456\u002b00:00"`, at, false},
		{"null", `null`, time.Time{}, false},
		{"empty", `""`, time.Time{}, false},
		{"not a time", `"yesterday"`, time.Time{}, true},
		{"not a string", `12`, time.Time{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got Time
			err := json.Unmarshal([]byte(tc.in), &got)
			if (err != nil) != tc.bad {
				t.Fatalf("error = %v, want error %v", err, tc.bad)
			}
			if !tc.bad && !got.Time.Equal(tc.want) {
				t.Fatalf("read %v, want %v", got.Time, tc.want)
			}
		})
	}
	for _, tm := range []time.Time{at, at.In(time.FixedZone("x", -5*3600)), {}} {
		got, err := json.Marshal(At(tm))
		if err != nil {
			t.Fatal(err)
		}
		want := []byte("null")
		if !tm.IsZero() {
			want, _ = json.Marshal(tm.UTC().Format(TimeLayout))
		}
		if string(got) != string(want) {
			t.Errorf("Marshal(%v) = %s, want %s", tm, got, want)
		}
	}
}
