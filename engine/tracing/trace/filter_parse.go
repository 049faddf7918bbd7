package trace

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jetgraph/jetgraph/engine"
)

// Filter selects runs: the compiled form of the filter language of POST /runs/query and
// /runs/stats. Match expects runs that Derive has seen.
type Filter interface {
	Match(r *Run) bool
}

// FilterError is a syntax or type error in a filter, at byte offset Pos (0-based) of its text.
type FilterError struct {
	Pos int
	Msg string
}

func (e *FilterError) Error() string { return fmt.Sprintf("filter: %s at position %d", e.Msg, e.Pos) }

// ParseFilter compiles a filter of the langsmith query language. "" (or blanks) matches every run.
//
//	filter     = "" | expr
//	expr       = ("and" | "or") "(" expr {"," expr} ")"
//	           | "not" "(" expr ")"
//	           | op "(" field "," value ")"            op: eq neq gt gte lt lte has like
//	           | "in" "(" field "," "[" [value {"," value}] "]" ")"
//	           | "search" "(" [field ","] string ")"
//	value      = string | number | "true" | "false" | "null"
//	string     = '"' chars '"' | "'" chars "'"       with \" \' \\ \n \t \uXXXX escapes
//
// Fields: id, trace_id, parent_run_id, session_id, reference_example_id, dotted_order, name,
// run_type, status (strings; eq, neq, in, like, and gt... in text order); latency (seconds, a
// number or a duration string such as "1.5s" or "200ms"), total_tokens, prompt_tokens,
// completion_tokens, total_cost, prompt_cost, completion_cost (numbers); start_time, end_time,
// first_token_time (ISO strings or epoch milliseconds); is_root (boolean); error (eq(error, true)
// is "has an error", eq(error, null) "has none", a string compares the error text); tags (has,
// eq = has, neq = has not, in = has any, like = any tag matches); and the key/value pairs of the
// metadata, inputs and outputs: metadata_key, metadata_value, input_key, input_value, output_key,
// output_value. Conditions on one kind of pair joined by and() must hold for the same pair, so
// and(eq(metadata_key, "user"), eq(metadata_value, "ann")) is "metadata user is ann".
// like takes SQL patterns (% any text, _ one character), case-insensitive; search is a
// case-insensitive substring test over the name, id, error, tags, inputs, outputs and metadata,
// or over one field (a string field, error, tags, inputs, outputs or metadata).
//
// An error is an *engine.Error (Invalid) wrapping a *FilterError that gives the position.
func ParseFilter(s string) (Filter, error) {
	if strings.Trim(s, filterBlanks) == "" {
		return filter{n: matchAll{}, src: s}, nil
	}
	toks, err := lex(s)
	if err != nil {
		return nil, filterErr(err)
	}
	p := &parser{toks: toks}
	n, err := p.expr()
	if err == nil && p.peek().kind != tEOF {
		err = p.errAt(p.peek(), "unexpected %s after the end of the filter", p.peek())
	}
	if err != nil {
		return nil, filterErr(err)
	}
	return filter{n: n, src: s}, nil
}

func filterErr(err error) error {
	return engine.E(engine.Op("trace.filter"), engine.Invalid, err.Error(), err)
}

// filter is a compiled filter with its source.
type filter struct {
	n   node
	src string
}

func (f filter) Match(r *Run) bool { return f.n.match(r) }
func (f filter) String() string    { return f.src }

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tNumber
	tLParen
	tRParen
	tComma
	tLBrack
	tRBrack
)

type token struct {
	kind tokKind
	text string // an identifier, or a string's value
	num  float64
	pos  int
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of filter"
	case tIdent:
		return fmt.Sprintf("identifier %s", t.text)
	case tString:
		return fmt.Sprintf("string %q", t.text)
	case tNumber:
		return fmt.Sprintf("number %v", t.num)
	}
	return fmt.Sprintf("%q", t.text)
}

// filterBlanks are the characters between tokens; a filter of only these matches every run.
const filterBlanks = " \t\n\r"

func lex(s string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case strings.IndexByte(filterBlanks, c) >= 0:
			i++
		case strings.IndexByte("(),[]", c) >= 0:
			kind := map[byte]tokKind{'(': tLParen, ')': tRParen, ',': tComma, '[': tLBrack, ']': tRBrack}[c]
			toks = append(toks, token{kind: kind, text: string(c), pos: i})
			i++
		case c == '"' || c == '\'':
			str, n, err := lexString(s, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tString, text: str, pos: i})
			i += n
		case c == '-' || c == '+' || c == '.' || '0' <= c && c <= '9':
			j := i + 1
			for j < len(s) && strings.IndexByte("0123456789.eE+-", s[j]) >= 0 {
				if (s[j] == '+' || s[j] == '-') && s[j-1] != 'e' && s[j-1] != 'E' {
					break
				}
				j++
			}
			f, err := strconv.ParseFloat(s[i:j], 64)
			if err != nil {
				return nil, &FilterError{Pos: i, Msg: fmt.Sprintf("bad number %q", s[i:j])}
			}
			toks = append(toks, token{kind: tNumber, num: f, text: s[i:j], pos: i})
			i = j
		case c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] == '.' || 'a' <= s[j] && s[j] <= 'z' || 'A' <= s[j] && s[j] <= 'Z' || '0' <= s[j] && s[j] <= '9') {
				j++
			}
			toks = append(toks, token{kind: tIdent, text: s[i:j], pos: i})
			i = j
		default:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return nil, &FilterError{Pos: i, Msg: fmt.Sprintf("unexpected character %q", r)}
		}
	}
	return append(toks, token{kind: tEOF, pos: len(s)}), nil
}

// lexString reads the quoted string at s[i:], returning its value and length.
func lexString(s string, i int) (string, int, error) {
	q := s[i]
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == q:
			return b.String(), j + 1 - i, nil
		case c == '\\':
			if j+1 >= len(s) {
				return "", 0, &FilterError{Pos: j, Msg: "unfinished escape"}
			}
			j++
			switch e := s[j]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'u':
				if j+4 >= len(s) {
					return "", 0, &FilterError{Pos: j - 1, Msg: "bad \\u escape"}
				}
				n, err := strconv.ParseUint(s[j+1:j+5], 16, 32)
				if err != nil {
					return "", 0, &FilterError{Pos: j - 1, Msg: "bad \\u escape"}
				}
				b.WriteRune(rune(n))
				j += 4
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, &FilterError{Pos: i, Msg: "unterminated string"}
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) errAt(t token, format string, args ...any) error {
	return &FilterError{Pos: t.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) expect(kind tokKind, what string) (token, error) {
	t := p.next()
	if t.kind != kind {
		return t, p.errAt(t, "expected %s, got %s", what, t)
	}
	return t, nil
}

// expr parses a function call.
func (p *parser) expr() (node, error) {
	fn := p.next()
	if fn.kind != tIdent {
		return nil, p.errAt(fn, "expected a function such as and, or, not, eq, has or search, got %s", fn)
	}
	if _, err := p.expect(tLParen, `"("`); err != nil {
		return nil, err
	}
	var n node
	var err error
	switch name := strings.ToLower(fn.text); name {
	case "and", "or":
		n, err = p.logical(name)
	case "not":
		var inner node
		if inner, err = p.expr(); err == nil {
			n = notNode{inner}
		}
	case "eq", "neq", "gt", "gte", "lt", "lte", "has", "like", "in":
		n, err = p.comparison(name)
	case "search":
		n, err = p.search()
	default:
		return nil, p.errAt(fn, "unknown function %s", fn.text)
	}
	if err != nil {
		return nil, err
	}
	if _, err := p.expect(tRParen, `")"`); err != nil {
		return nil, err
	}
	return n, nil
}

func (p *parser) logical(name string) (node, error) {
	var kids []node
	for {
		n, err := p.expr()
		if err != nil {
			return nil, err
		}
		kids = append(kids, n)
		if p.peek().kind != tComma {
			break
		}
		p.next()
	}
	if name == "or" {
		return orNode(kids), nil
	}
	return newAnd(kids), nil
}

func (p *parser) comparison(op string) (node, error) {
	ft, err := p.expect(tIdent, "a field name")
	if err != nil {
		return nil, err
	}
	spec, ok := fields[ft.text]
	if !ok {
		return nil, p.errAt(ft, "unknown field %s", ft.text)
	}
	if _, err := p.expect(tComma, `","`); err != nil {
		return nil, err
	}
	var v value
	if op == "in" {
		v, err = p.list()
	} else {
		v, err = p.value()
	}
	if err != nil {
		return nil, err
	}
	if op != "in" {
		n, msg := compile(op, ft.text, spec, v)
		if msg != "" {
			return nil, &FilterError{Pos: v.pos, Msg: msg}
		}
		return n, nil
	}
	alts := make([]node, 0, len(v.list))
	for _, e := range v.list {
		n, msg := compile("eq", ft.text, spec, e)
		if msg != "" {
			return nil, &FilterError{Pos: e.pos, Msg: msg}
		}
		alts = append(alts, n)
	}
	return anyOf(spec, alts), nil
}

func (p *parser) search() (node, error) {
	t := p.next()
	field := ""
	if t.kind == tIdent {
		field = t.text
		if !searchable(field) {
			return nil, p.errAt(t, "search cannot look in %s", field)
		}
		if _, err := p.expect(tComma, `","`); err != nil {
			return nil, err
		}
		t = p.next()
	}
	if t.kind != tString {
		return nil, p.errAt(t, "search takes a string, got %s", t)
	}
	return searchNode{field: field, text: strings.ToLower(t.text)}, nil
}

// value kinds.
type valKind int

const (
	vString valKind = iota
	vNumber
	vBool
	vNull
	vList
)

type value struct {
	kind valKind
	s    string
	f    float64
	b    bool
	list []value
	pos  int
}

func (v value) String() string {
	switch v.kind {
	case vString:
		return fmt.Sprintf("string %q", v.s)
	case vNumber:
		return fmt.Sprintf("number %v", v.f)
	case vBool:
		return fmt.Sprintf("boolean %v", v.b)
	case vNull:
		return "null"
	}
	return "a list"
}

func (p *parser) value() (value, error) {
	t := p.next()
	switch t.kind {
	case tString:
		return value{kind: vString, s: t.text, pos: t.pos}, nil
	case tNumber:
		return value{kind: vNumber, f: t.num, pos: t.pos}, nil
	case tIdent:
		switch strings.ToLower(t.text) {
		case "true", "false":
			return value{kind: vBool, b: strings.EqualFold(t.text, "true"), pos: t.pos}, nil
		case "null", "none":
			return value{kind: vNull, pos: t.pos}, nil
		}
		return value{}, p.errAt(t, "expected a value, got identifier %s (quote strings: \"%s\")", t.text, t.text)
	}
	return value{}, p.errAt(t, "expected a value (a string, a number, true, false or null), got %s", t)
}

func (p *parser) list() (value, error) {
	open, err := p.expect(tLBrack, `"[" to open a list`)
	if err != nil {
		return value{}, err
	}
	l := value{kind: vList, pos: open.pos}
	if p.peek().kind == tRBrack {
		p.next()
		return l, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return value{}, err
		}
		l.list = append(l.list, v)
		t := p.next()
		if t.kind == tRBrack {
			return l, nil
		}
		if t.kind != tComma {
			return value{}, p.errAt(t, `expected "," or "]", got %s`, t)
		}
	}
}
