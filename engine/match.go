package engine

import "reflect"

// Contains reports whether doc contains filter in the sense of JSON containment (Postgres @>):
// every key of a filter object is in doc with a contained value, every element of a filter array
// is contained in some element of doc's array, and scalars are equal (numbers by value).
func Contains(doc, filter any) bool {
	switch f := filter.(type) {
	case map[string]any:
		d, ok := doc.(map[string]any)
		if !ok {
			return false
		}
		for k, fv := range f {
			dv, ok := d[k]
			if !ok || !Contains(dv, fv) {
				return false
			}
		}
		return true
	case []any:
		d, ok := doc.([]any)
		if !ok {
			return false
		}
	next:
		for _, fv := range f {
			for _, dv := range d {
				if Contains(dv, fv) {
					continue next
				}
			}
			return false
		}
		return true
	default:
		return scalarEqual(doc, filter)
	}
}

func scalarEqual(a, b any) bool {
	if an, ok := number(a); ok {
		bn, ok := number(b)
		return ok && an == bn
	}
	return reflect.DeepEqual(a, b)
}

// number converts the numeric types JSON decoding produces to float64.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}
