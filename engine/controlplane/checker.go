package controlplane

import (
	"regexp"
	"slices"

	"github.com/jetgraph/jetgraph/engine"
)

// cIdentifier is an environment variable name the way Kubernetes and shells take it.
var cIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checker collects every violation of one request body, each at its loc.
type checker struct {
	v engine.Violations
}

func (c *checker) add(typ, msg string, loc []any) { c.v.Add(typ, msg, loc...) }

func at(loc []any, more ...any) []any { return append(slices.Clip(loc), more...) }

// object returns m[key] as an object; absent or null is (nil, false) without a violation.
func (c *checker) object(m map[string]any, key string, loc []any) (map[string]any, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, false
	}
	o, ok := v.(map[string]any)
	if !ok {
		c.add("dict_type", "Input should be a valid dictionary", at(loc, key))
	}
	return o, ok
}

// str returns m[key] as a string; absent or null is ("", false) without a violation.
func (c *checker) str(m map[string]any, key string, loc []any) (string, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		c.add("string_type", "Input should be a valid string", at(loc, key))
	}
	return s, ok
}

// required reports key missing (absent or null) as a violation.
func (c *checker) required(m map[string]any, key string, loc []any) bool {
	if v, ok := m[key]; ok && v != nil {
		return true
	}
	c.add("missing", "Field required", at(loc, key))
	return false
}

func (c *checker) boolean(m map[string]any, key string, loc []any) (bool, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		c.add("bool_type", "Input should be a valid boolean", at(loc, key))
	}
	return b, ok
}

func (c *checker) list(m map[string]any, key string, loc []any) ([]any, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, false
	}
	l, ok := v.([]any)
	if !ok {
		c.add("list_type", "Input should be a valid list", at(loc, key))
	}
	return l, ok
}

func (c *checker) enum(m map[string]any, key string, loc []any, values ...string) {
	if s, ok := c.str(m, key, loc); ok && !slices.Contains(values, s) {
		c.add("enum", "Input should be "+quoteList(values), at(loc, key))
	}
}

func quoteList(values []string) string {
	out := ""
	for i, v := range values {
		switch {
		case i == 0:
		case i == len(values)-1:
			out += " or "
		default:
			out += ", "
		}
		out += "'" + v + "'"
	}
	return out
}
