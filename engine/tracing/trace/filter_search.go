package trace

import (
	"strconv"
	"strings"
)

// searchNode is search("text") or search(field, "text"): a case-insensitive substring test.
type searchNode struct {
	field string // "" for all of them
	text  string // lower case
}

// searchable reports whether search can look in field.
func searchable(field string) bool {
	switch field {
	case "inputs", "outputs", "metadata", "tags", "error":
		return true
	}
	spec, ok := fields[field]
	return ok && spec.kind == fString
}

func (s searchNode) match(r *Run) bool {
	if s.field != "" {
		return s.in(r, s.field)
	}
	for _, f := range []string{"name", "id", "run_type", "error", "tags", "inputs", "outputs", "metadata"} {
		if s.in(r, f) {
			return true
		}
	}
	return false
}

// in searches one field.
func (s searchNode) in(r *Run, field string) bool {
	switch field {
	case "inputs":
		return s.walk(r.Inputs)
	case "outputs":
		return s.walk(r.Outputs)
	case "metadata":
		return s.walk(r.Metadata())
	case "tags":
		for _, t := range r.Tags {
			if s.contains(t) {
				return true
			}
		}
		return false
	case "error":
		return r.Error != nil && s.contains(*r.Error)
	}
	v, ok := fields[field].str(r)
	return ok && s.contains(v)
}

func (s searchNode) contains(v string) bool { return strings.Contains(strings.ToLower(v), s.text) }

// walk searches the keys and scalar leaves of a decoded JSON value.
func (s searchNode) walk(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s.contains(k) || s.walk(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if s.walk(e) {
				return true
			}
		}
	case string:
		return s.contains(x)
	case bool:
		return s.contains(strconv.FormatBool(x))
	case nil:
	default:
		if f, ok := number(x); ok {
			return s.contains(strconv.FormatFloat(f, 'f', -1, 64))
		}
	}
	return false
}
