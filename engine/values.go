package engine

// StringList reads a list of strings from a decoded JSON value (a []any of strings, a []string,
// or a single string); anything else is nil. Run kwargs come back from the log in this form.
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
