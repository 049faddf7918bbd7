package engine

import "maps"

// CloneMap copies m deeply enough for JSON-like values (nested maps and lists), so that the copy
// shares nothing that a change to m reaches.
func CloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = CloneValue(v)
	}
	return out
}

// CloneValue is CloneMap for any JSON-like value: objects and lists are copied, the rest kept.
func CloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return CloneMap(x)
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = CloneValue(e)
		}
		return c
	}
	return v
}

// StringList reads a list of strings from a decoded JSON value (a []any of strings, a []string,
// or a single string); anything else is nil. Lists inside decoded JSON values come in this form.
func StringList(v any) []string {
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case string:
		return []string{l}
	}
	return nil
}
