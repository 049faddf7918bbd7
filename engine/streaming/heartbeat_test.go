package streaming

import (
	"reflect"
	"testing"
	"time"
)

// beatSink records when heartbeats reach the client, on the writer's clock.
type beatSink struct {
	now   *time.Time
	start time.Time
	beats []float64 // seconds after start
}

func (s *beatSink) WriteFrame(f Frame) error {
	if f.Comment == "heartbeat" {
		s.beats = append(s.beats, s.now.Sub(s.start).Seconds())
	}
	return nil
}

func (s *beatSink) Flush() error { return nil }

// TestHeartbeatBoundsSilence: a stream sends a heartbeat once nothing went out for a heartbeat
// period (4s here, looked at every second), so it is never silent much longer than a period;
// what was only flushed (events no mode of the client shows) does not count as sent; and checks
// a stall held back until just before the next send one heartbeat, not two nearly at once (the
// SDKs' idle watchdog would take their distance for the period and reconnect after three).
func TestHeartbeatBoundsSilence(t *testing.T) {
	const hb = 4 * time.Second
	type step struct {
		at   float64 // seconds after the stream began
		what string  // "event" (written and flushed), "hidden" (flushed, nothing written), "check"
	}
	checks := func(from, to float64) []step {
		var out []step
		for at := from; at <= to; at++ {
			out = append(out, step{at, "check"})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		steps []step
		beats []float64
	}{
		{"idle", checks(1, 12), []float64{4, 8, 12}},
		{"events", append(append([]step{{0.5, "event"}}, checks(1, 5)...), append([]step{{5.5, "event"}}, checks(6, 10)...)...),
			[]float64{5, 10}},
		{"hidden events", append([]step{{0.5, "hidden"}, {2.5, "hidden"}}, checks(1, 4)...), []float64{4}},
		{"a stall", append(checks(1, 3), step{8.9, "check"}, step{9, "check"}, step{10, "check"}, step{13, "check"}), []float64{8.9, 13}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			now := start
			sink := &beatSink{now: &now, start: start}
			w := newWriter(sink, hb)
			w.now, w.sent = func() time.Time { return now }, start
			steps := tc.steps
			for i := 1; i < len(steps); i++ { // in time order, an event before a check at once
				for j := i; j > 0 && steps[j].at < steps[j-1].at; j-- {
					steps[j], steps[j-1] = steps[j-1], steps[j]
				}
			}
			for _, s := range steps {
				now = start.Add(time.Duration(s.at * float64(time.Second)))
				var err error
				switch s.what {
				case "event":
					if err = w.write(Frame{Event: "values", Data: []byte("{}")}); err == nil {
						err = w.flushUnlessMore(0)
					}
				case "hidden":
					err = w.flushUnlessMore(0)
				case "check":
					err = w.heartbeat()
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if !reflect.DeepEqual(sink.beats, tc.beats) {
				t.Errorf("heartbeats at %v s, want %v", sink.beats, tc.beats)
			}
		})
	}
	if w := newWriter(&beatSink{}, hb); w.checkEvery() != time.Second {
		t.Errorf("checked every %v, want a quarter of the period", w.checkEvery())
	}
}
