package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Filter is an auth rule's restriction of a resource to the records whose metadata match it:
// the reference servers' filter dicts. {"owner": "alice"} and {"owner": {"$eq": "alice"}} match
// metadata whose owner is alice; {"tags": {"$contains": "x"}} metadata whose tags list holds x
// (every element, for a list) or, the text cast, whose tags string has x in it; {"$or": [f, g]}
// and {"$and": [f, g]} combine two or more filters, beside the other keys of their level, at
// most two levels deep. The zero Filter matches everything.
//
// Invariant: a Filter is immutable once parsed, so one may be shared by the goroutines of a
// search.
type Filter struct {
	root *filterNode
}

// The operators of a filter's field, and its combinators.
const (
	FilterEq       = "$eq"
	FilterContains = "$contains"
	FilterOr       = "$or"
	FilterAnd      = "$and"
)

// maxFilterDepth is how deep $or and $and may nest, the reference's limit.
const maxFilterDepth = 2

// filterNode is one level of a filter: all of fields, all of and, and one of or (when any).
type filterNode struct {
	fields []fieldCond
	and    []*filterNode
	or     []*filterNode
}

// fieldCond is one key's condition: value is the JSON of the operand, kept encoded so a match
// compares JSON to JSON whatever Go types decoded either side (1 and 1.0 are one number).
type fieldCond struct {
	key      string
	op       string
	value    []byte
	elements [][]byte // $contains of a list: each element's JSON
	text     string   // $contains of a string: the substring, for the text cast
	isText   bool
	str      string // the operand when it is a string: compared without encoding
	isStr    bool
}

// ParseFilter reads an auth rule's filter. A nil or empty map is the zero Filter. Its error says
// what is wrong with the filter the rule returned: the rule's fault, so the request fails with a
// 500 naming it rather than going on unfiltered.
func ParseFilter(raw map[string]any) (Filter, error) {
	if len(raw) == 0 {
		return Filter{}, nil
	}
	n, err := parseFilterNode(raw, 0)
	if err != nil {
		return Filter{}, E(Op("auth.filter"), Other, "Your auth handler returned an invalid filter: "+err.Error())
	}
	return Filter{root: n}, nil
}

func parseFilterNode(raw map[string]any, depth int) (*filterNode, error) {
	if depth > maxFilterDepth {
		return nil, fmt.Errorf("operators nest more than %d deep", maxFilterDepth)
	}
	n := &filterNode{}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys) // errors and matching in one order whatever the map's
	for _, k := range keys {
		v := raw[k]
		switch k {
		case FilterOr, FilterAnd:
			groups, err := parseGroups(k, v, depth)
			if err != nil {
				return nil, err
			}
			if k == FilterOr {
				n.or = groups
			} else {
				n.and = groups
			}
			continue
		}
		c, err := parseFieldCond(k, v)
		if err != nil {
			return nil, err
		}
		n.fields = append(n.fields, c)
	}
	return n, nil
}

func parseGroups(op string, v any, depth int) ([]*filterNode, error) {
	list, ok := v.([]any)
	if !ok {
		if maps, isMaps := v.([]map[string]any); isMaps {
			for _, m := range maps {
				list = append(list, m)
			}
			ok = true
		}
	}
	if !ok || len(list) < 2 {
		return nil, fmt.Errorf("%s must be a list of at least 2 filter objects", op)
	}
	groups := make([]*filterNode, 0, len(list))
	for i, g := range list {
		m, ok := g.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s[%d] is not a filter object", op, i)
		}
		n, err := parseFilterNode(m, depth+1)
		if err != nil {
			return nil, err
		}
		groups = append(groups, n)
	}
	return groups, nil
}

func parseFieldCond(key string, v any) (fieldCond, error) {
	c := fieldCond{key: key, op: FilterEq}
	operand := v
	if m, ok := v.(map[string]any); ok {
		if len(m) != 1 {
			return c, fmt.Errorf("%q: an operator object has exactly one of %s, %s", key, FilterEq, FilterContains)
		}
		for op, x := range m {
			c.op, operand = op, x
		}
		if c.op != FilterEq && c.op != FilterContains {
			return c, fmt.Errorf("%q: unknown operator %q (%s or %s)", key, c.op, FilterEq, FilterContains)
		}
	}
	enc, err := canonicalJSON(operand)
	if err != nil {
		return c, fmt.Errorf("%q: %v", key, err)
	}
	c.value = enc
	c.str, c.isStr = operand.(string)
	if c.op == FilterContains {
		switch x := operand.(type) {
		case string:
			c.text, c.isText = x, true
			c.elements = [][]byte{enc}
		case []any:
			for _, el := range x {
				e, err := canonicalJSON(el)
				if err != nil {
					return c, fmt.Errorf("%q: %v", key, err)
				}
				c.elements = append(c.elements, e)
			}
		default:
			c.elements = [][]byte{enc}
		}
	}
	return c, nil
}

// canonicalJSON is v's JSON with numbers in one spelling: what two values equal as JSON share.
func canonicalJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

// IsZero reports whether f restricts nothing.
func (f Filter) IsZero() bool { return f.root == nil }

// And is the filter of records matching both f and g.
func (f Filter) And(g Filter) Filter {
	switch {
	case f.IsZero():
		return g
	case g.IsZero():
		return f
	}
	return Filter{root: &filterNode{and: []*filterNode{f.root, g.root}}}
}

// Match reports whether metadata satisfies f.
func (f Filter) Match(metadata map[string]any) bool {
	if f.root == nil {
		return true
	}
	return f.root.match(metadata)
}

func (n *filterNode) match(md map[string]any) bool {
	for _, c := range n.fields {
		if !c.match(md) {
			return false
		}
	}
	for _, g := range n.and {
		if !g.match(md) {
			return false
		}
	}
	if len(n.or) == 0 {
		return true
	}
	for _, g := range n.or {
		if g.match(md) {
			return true
		}
	}
	return false
}

func (c fieldCond) match(md map[string]any) bool {
	v, ok := md[c.key]
	if !ok {
		return false
	}
	if c.op == FilterEq {
		if s, ok := v.(string); ok {
			return c.isStr && s == c.str
		}
		enc, err := canonicalJSON(v)
		return err == nil && bytes.Equal(enc, c.value)
	}
	switch x := v.(type) {
	case []any:
		have := make([][]byte, 0, len(x))
		for _, el := range x {
			if e, err := canonicalJSON(el); err == nil {
				have = append(have, e)
			}
		}
		for _, want := range c.elements {
			found := false
			for _, h := range have {
				if bytes.Equal(h, want) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	case string:
		return c.isText && strings.Contains(x, c.text)
	}
	return false
}
