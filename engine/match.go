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
	if c, ok := CompareNumbers(a, b); ok {
		return c == 0
	}
	if _, ok := Number(a); ok {
		return false
	}
	return reflect.DeepEqual(a, b)
}
