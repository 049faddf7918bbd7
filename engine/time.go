package engine

import (
	"bytes"
	"encoding/json"
	"time"
)

// TimeLayout is how jetgraph writes timestamps: ISO 8601 with microseconds and an explicit offset,
// as the reference servers do ("2026-11-22T10:16:54.123456+00:00").
const TimeLayout = "2006-01-02T15:04:05.000000-07:00"

// Time is a timestamp that marshals in TimeLayout, always in UTC.
type Time struct{ time.Time }

// At wraps t as a Time in UTC.
func At(t time.Time) Time { return Time{t.UTC()} }

// MarshalJSON writes the time in TimeLayout, or null for the zero time.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	// The layout has nothing to escape: quote it directly.
	b := make([]byte, 0, len(TimeLayout)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, TimeLayout)
	return append(b, '"'), nil
}

// UnmarshalJSON reads TimeLayout or any RFC 3339 form.
func (t *Time) UnmarshalJSON(b []byte) error {
	var s *string
	if n := len(b); n >= 2 && b[0] == '"' && b[n-1] == '"' && !bytes.ContainsAny(b[1:n-1], `\"`) {
		// A plain string, as every time jetgraph writes is: no decoder needed.
		str := string(b[1 : n-1])
		s = &str
	} else if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == nil || *s == "" {
		t.Time = time.Time{}
		return nil
	}
	v, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return err
	}
	t.Time = v.UTC()
	return nil
}
