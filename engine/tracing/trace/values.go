package trace

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine"
)

// isoLayouts are the ISO 8601 forms ParseTime accepts besides RFC 3339: without a zone (read as
// UTC), with a space for the T, with a zone offset without its colon, and a bare date.
var isoLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
}

// ParseTime reads a timestamp as the clients send it: an ISO 8601 string with or without a zone
// (a time without a zone is UTC), or epoch milliseconds as a number or a string of digits. The
// result is in UTC.
func ParseTime(v any) (time.Time, error) {
	if s, ok := v.(string); ok {
		s = strings.TrimSpace(s)
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			for _, layout := range isoLayouts {
				if t, err := time.Parse(layout, s); err == nil {
					return t.UTC(), nil
				}
			}
			return time.Time{}, fmt.Errorf("%q is not an ISO 8601 time or epoch milliseconds", s)
		}
	}
	ms, ok := number(v)
	if !ok || math.IsNaN(ms) || math.IsInf(ms, 0) {
		return time.Time{}, fmt.Errorf("%s is not an ISO 8601 time or epoch milliseconds", jsonType(v))
	}
	return time.UnixMicro(int64(math.Round(ms * 1000))).UTC(), nil
}

// number reads a number as engine.Number does (the one reading the store's filters share) and,
// as the langsmith clients send some as text, a string of digits too.
func number(v any) (float64, bool) {
	if f, ok := engine.Number(v); ok {
		return f, true
	}
	if s, ok := v.(string); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return f, err == nil
	}
	return 0, false
}

// intOf reads a token count.
func intOf(v any) (int, bool) {
	f, ok := number(v)
	if !ok {
		return 0, false
	}
	return int(math.Round(f)), true
}

// path walks nested objects by key: path(m, "a", "b") is m["a"]["b"], or nil.
func path(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// pathStr is path as a string, or "".
func pathStr(v any, keys ...string) string {
	s, _ := path(v, keys...).(string)
	return s
}

// firstStr returns the first non-empty string among vs.
func firstStr(vs ...any) string {
	for _, v := range vs {
		if s, ok := v.(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
