package engine

import (
	"cmp"
	"encoding/json"
)

// Number reads a decoded JSON number as a float64: float64 as encoding/json gives it, the Go
// integer and float types a caller may build values with, and json.Number from a decoder with
// UseNumber. A string is never a number here: the store's filters and the trace filters both
// compare numbers through this one function, so 1, 1.0, int64(1) and json.Number("1") are the
// same number everywhere (the trace filters' own reading of digit strings is theirs, see
// trace.ParseFilter).
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case uint32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// CompareNumbers orders a and b by value when both are numbers (see Number); ok is false when
// either is not.
func CompareNumbers(a, b any) (c int, ok bool) {
	x, ok := Number(a)
	if !ok {
		return 0, false
	}
	y, ok := Number(b)
	if !ok {
		return 0, false
	}
	return cmp.Compare(x, y), true
}
