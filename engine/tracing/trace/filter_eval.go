package trace

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

type node interface{ match(r *Run) bool }

type matchAll struct{}

func (matchAll) match(*Run) bool { return true }

type pred func(r *Run) bool

func (f pred) match(r *Run) bool { return f(r) }

type notNode struct{ n node }

func (n notNode) match(r *Run) bool { return !n.n.match(r) }

type orNode []node

func (o orNode) match(r *Run) bool {
	for _, n := range o {
		if n.match(r) {
			return true
		}
	}
	return false
}

type andNode []node

func (a andNode) match(r *Run) bool {
	for _, n := range a {
		if !n.match(r) {
			return false
		}
	}
	return true
}

// pairGroup matches when one key/value pair of a family (metadata, inputs, outputs) passes all
// its tests. A comparison on a pair field is a group of one; and() merges its direct ones.
type pairGroup struct {
	family string
	tests  []func(k string, v any) bool
}

func (g *pairGroup) match(r *Run) bool {
	for k, v := range pairsOf(r, g.family) {
		ok := true
		for _, t := range g.tests {
			if !t(k, v) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func pairsOf(r *Run, family string) map[string]any {
	switch family {
	case "metadata":
		return r.Metadata()
	case "input":
		return r.Inputs
	}
	return r.Outputs
}

// newAnd merges the pair comparisons of one family among kids into one group.
func newAnd(kids []node) node {
	var out andNode
	groups := map[string]*pairGroup{}
	for _, k := range kids {
		g, ok := k.(*pairGroup)
		if !ok {
			out = append(out, k)
			continue
		}
		if m, ok := groups[g.family]; ok {
			m.tests = append(m.tests, g.tests...)
			continue
		}
		m := &pairGroup{family: g.family, tests: slices.Clone(g.tests)}
		groups[g.family] = m
		out = append(out, m)
	}
	if len(out) == 1 {
		return out[0]
	}
	return out
}

// anyOf is in(field, [...]): the eq comparisons alts, one of which must hold (for pairs, on the
// same pair as the group's other tests).
func anyOf(spec fieldSpec, alts []node) node {
	if spec.kind != fPair {
		return orNode(alts)
	}
	tests := make([]func(string, any) bool, len(alts))
	for i, a := range alts {
		tests[i] = a.(*pairGroup).tests[0]
	}
	return &pairGroup{family: spec.family, tests: []func(string, any) bool{func(k string, x any) bool {
		for _, t := range tests {
			if t(k, x) {
				return true
			}
		}
		return false
	}}}
}

// compile builds the node of op(field, v) (op is not in), or says why it cannot.
func compile(op, field string, spec fieldSpec, v value) (node, string) {
	if op == "has" && spec.kind != fTags {
		return nil, fmt.Sprintf("has works on tags, not %s", field)
	}
	switch spec.kind {
	case fString:
		return compileString(op, field, spec, v)
	case fNumber:
		return compileNumber(op, field, spec, v)
	case fTime:
		return compileTime(op, field, spec, v)
	case fBool:
		if v.kind != vBool || (op != "eq" && op != "neq") {
			return nil, fmt.Sprintf("%s takes eq or neq with true or false", field)
		}
		want := v.b == (op == "eq")
		return pred(func(r *Run) bool { return spec.boolean(r) == want }), ""
	case fError:
		return compileError(op, v)
	case fTags:
		return compileTags(op, v)
	}
	return compilePair(op, field, spec, v)
}

// ordered applies a comparison op to the result c of comparing a field's value with the filter's
// (-1, 0, 1).
func ordered(op string, c int) bool {
	switch op {
	case "eq":
		return c == 0
	case "neq":
		return c != 0
	case "gt":
		return c > 0
	case "gte":
		return c >= 0
	case "lt":
		return c < 0
	}
	return c <= 0
}

// nullCompare handles a comparison with null: eq matches null fields, neq the others.
func nullCompare(op, field string, present func(*Run) bool) (node, string) {
	switch op {
	case "eq":
		return pred(func(r *Run) bool { return !present(r) }), ""
	case "neq":
		return pred(present), ""
	}
	return nil, fmt.Sprintf("%s with null takes eq or neq, not %s", field, op)
}

func compileString(op, field string, spec fieldSpec, v value) (node, string) {
	present := func(r *Run) bool { _, ok := spec.str(r); return ok }
	if v.kind == vNull {
		return nullCompare(op, field, present)
	}
	if v.kind != vString {
		return nil, fmt.Sprintf("%s is a text field: compare it with a string, not a %s", field, v)
	}
	if spec.enum != nil && op != "like" && !slices.Contains(spec.enum, v.s) {
		return nil, fmt.Sprintf("%q is not a %s (%s)", v.s, field, strings.Join(spec.enum, ", "))
	}
	if op == "like" {
		re := likeRegexp(v.s)
		return pred(func(r *Run) bool { s, ok := spec.str(r); return ok && re.MatchString(s) }), ""
	}
	return pred(func(r *Run) bool {
		s, ok := spec.str(r)
		if !ok {
			return op == "neq"
		}
		return ordered(op, strings.Compare(s, v.s))
	}), ""
}

func compileNumber(op, field string, spec fieldSpec, v value) (node, string) {
	if op == "like" {
		return nil, fmt.Sprintf("like works on text, not %s", field)
	}
	present := func(r *Run) bool { _, ok := spec.num(r); return ok }
	want := v.f
	switch {
	case v.kind == vNull:
		return nullCompare(op, field, present)
	case v.kind == vString && spec.duration:
		d, err := time.ParseDuration(v.s)
		if err != nil {
			return nil, fmt.Sprintf("%q is not a duration such as \"2s\" or \"150ms\"", v.s)
		}
		want = d.Seconds()
	case v.kind != vNumber:
		return nil, fmt.Sprintf("%s is a number: compare it with a number, not a %s", field, v)
	}
	return pred(func(r *Run) bool {
		n, ok := spec.num(r)
		if !ok {
			return op == "neq"
		}
		return ordered(op, cmp.Compare(n, want))
	}), ""
}

func compileTime(op, field string, spec fieldSpec, v value) (node, string) {
	if op == "like" {
		return nil, fmt.Sprintf("like works on text, not %s", field)
	}
	present := func(r *Run) bool { _, ok := spec.tm(r); return ok }
	if v.kind == vNull {
		return nullCompare(op, field, present)
	}
	var raw any = v.s
	if v.kind == vNumber {
		raw = v.f
	} else if v.kind != vString {
		return nil, fmt.Sprintf("%s is a time: compare it with an ISO 8601 string, not a %s", field, v)
	}
	want, err := ParseTime(raw)
	if err != nil {
		return nil, err.Error()
	}
	return pred(func(r *Run) bool {
		t, ok := spec.tm(r)
		if !ok {
			return op == "neq"
		}
		return ordered(op, t.Compare(want))
	}), ""
}

func compileError(op string, v value) (node, string) {
	hasErr := func(r *Run) bool { return r.Error != nil && *r.Error != "" }
	switch v.kind {
	case vNull:
		return nullCompare(op, "error", hasErr)
	case vBool:
		if op != "eq" && op != "neq" {
			return nil, "error with true or false takes eq or neq"
		}
		want := v.b == (op == "eq")
		return pred(func(r *Run) bool { return hasErr(r) == want }), ""
	case vString:
		spec := fieldSpec{kind: fString, str: func(r *Run) (string, bool) {
			if !hasErr(r) {
				return "", false
			}
			return *r.Error, true
		}}
		return compileString(op, "error", spec, v)
	}
	return nil, fmt.Sprintf("error compares with true, false, null or a string, not a %s", v)
}

func compileTags(op string, v value) (node, string) {
	if v.kind != vString {
		return nil, fmt.Sprintf("tags are strings: compare them with a string, not a %s", v)
	}
	switch op {
	case "has", "eq":
		return pred(func(r *Run) bool { return slices.Contains(r.Tags, v.s) }), ""
	case "neq":
		return pred(func(r *Run) bool { return !slices.Contains(r.Tags, v.s) }), ""
	case "like":
		re := likeRegexp(v.s)
		return pred(func(r *Run) bool { return slices.ContainsFunc(r.Tags, re.MatchString) }), ""
	}
	return nil, fmt.Sprintf("tags take has, eq, neq, in or like, not %s", op)
}

func compilePair(op, field string, spec fieldSpec, v value) (node, string) {
	if v.kind == vNull && spec.onKey || v.kind == vList {
		return nil, fmt.Sprintf("%s cannot be compared with %s", field, v)
	}
	if spec.onKey && v.kind != vString {
		return nil, fmt.Sprintf("%s is a key: compare it with a string, not a %s", field, v)
	}
	var re *regexp.Regexp
	if op == "like" {
		if v.kind != vString {
			return nil, "like takes a string pattern"
		}
		re = likeRegexp(v.s)
	}
	test := func(k string, x any) bool {
		if spec.onKey {
			x = k
		}
		if re != nil {
			s, ok := scalarText(x)
			return ok && re.MatchString(s)
		}
		c, ok := compareScalar(x, v)
		return ok && ordered(op, c)
	}
	return &pairGroup{family: spec.family, tests: []func(string, any) bool{test}}, ""
}

// compareScalar compares a stored JSON value with a filter value: numbers by value, booleans and
// null by identity, anything else by its text. ok is false when they cannot be compared.
func compareScalar(x any, v value) (int, bool) {
	switch v.kind {
	case vNull:
		if x == nil {
			return 0, true
		}
		return 1, true
	case vBool:
		b, ok := x.(bool)
		if !ok {
			if s, isStr := x.(string); isStr {
				return strings.Compare(s, strconv.FormatBool(v.b)), true
			}
			return 1, true
		}
		if b == v.b {
			return 0, true
		}
		return 1, true
	case vNumber:
		if f, ok := number(x); ok {
			return cmp.Compare(f, v.f), true
		}
		return 0, false
	}
	s, ok := scalarText(x)
	if !ok {
		return 0, false
	}
	return strings.Compare(s, v.s), true
}

// scalarText is a stored scalar as text.
func scalarText(x any) (string, bool) {
	switch t := x.(type) {
	case string:
		return t, true
	case bool:
		return strconv.FormatBool(t), true
	case nil:
		return "", false
	}
	if f, ok := number(x); ok {
		return strconv.FormatFloat(f, 'f', -1, 64), true
	}
	return "", false
}

// likeRegexp compiles a SQL LIKE pattern, case-insensitive.
func likeRegexp(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?is)^`)
	for _, c := range p {
		switch c {
		case '%':
			b.WriteString(`.*`)
		case '_':
			b.WriteString(`.`)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`$`)
	return regexp.MustCompile(b.String())
}
