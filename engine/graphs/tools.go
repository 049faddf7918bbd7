package graphs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Tool is a function a react agent's model may call. Run gets the call's arguments and returns
// the text of the tool message; an error becomes a tool message with status "error".
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments object. The offline fake model passes the
	// text after "<name>:" as the first required parameter (see NewReact).
	Parameters map[string]any
	Run        func(ctx context.Context, args map[string]any) (string, error)
}

// The built-in tools. None needs the network.
//
//   - calculator {expression}: arithmetic on numbers with + - * / % ^ (or **), parentheses,
//     unary minus, sqrt(x), abs(x), and the constants pi and e. A parser, not an eval: nothing
//     else is accepted.
//   - current_time {timezone?}: the current time in RFC 3339 with the weekday, in an IANA time
//     zone (from the system's zoneinfo) or UTC.
//   - echo {text}: returns text unchanged.
//   - word_count {text}: {"words", "characters", "lines"} of text, as JSON.
var builtinTools = map[string]Tool{
	"calculator": {
		Name:        "calculator",
		Description: "Evaluates an arithmetic expression: numbers, + - * / % ^, parentheses, sqrt(x), abs(x), pi, e.",
		Parameters:  stringParams("expression", "The expression, e.g. (2 + 3) * 4 ^ 2", true),
		Run: func(_ context.Context, args map[string]any) (string, error) {
			expr, err := stringArg(args, "expression", true)
			if err != nil {
				return "", err
			}
			v, err := Calculate(expr)
			if err != nil {
				return "", err
			}
			return formatNumber(v), nil
		},
	},
	"current_time": {
		Name:        "current_time",
		Description: "Returns the current date and time, in an IANA time zone (e.g. Europe/Paris) or UTC.",
		Parameters:  stringParams("timezone", "An IANA time zone name; UTC when empty", false),
		Run: func(_ context.Context, args map[string]any) (string, error) {
			tz, err := stringArg(args, "timezone", false)
			if err != nil {
				return "", err
			}
			loc := time.UTC
			if tz = strings.TrimSpace(tz); tz != "" {
				if loc, err = time.LoadLocation(tz); err != nil {
					return "", fmt.Errorf("unknown time zone %q", tz)
				}
			}
			now := time.Now().In(loc)
			return now.Format(time.RFC3339) + " (" + now.Weekday().String() + ")", nil
		},
	},
	"echo": {
		Name:        "echo",
		Description: "Returns its text unchanged.",
		Parameters:  stringParams("text", "The text to return", true),
		Run: func(_ context.Context, args map[string]any) (string, error) {
			return stringArg(args, "text", true)
		},
	},
	"word_count": {
		Name:        "word_count",
		Description: "Counts the words, characters and lines of a text.",
		Parameters:  stringParams("text", "The text to count", true),
		Run: func(_ context.Context, args map[string]any) (string, error) {
			text, err := stringArg(args, "text", true)
			if err != nil {
				return "", err
			}
			lines := 0
			if text != "" {
				lines = strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
			}
			raw, _ := json.Marshal(map[string]int{"words": len(strings.Fields(text)),
				"characters": utf8.RuneCountInString(text), "lines": lines})
			return string(raw), nil
		},
	},
}

// BuiltinToolNames returns the names of the built-in tools, sorted.
func BuiltinToolNames() []string {
	names := make([]string, 0, len(builtinTools))
	for n := range builtinTools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// BuiltinTool returns the built-in tool name.
func BuiltinTool(name string) (Tool, bool) {
	t, ok := builtinTools[name]
	return t, ok
}

// BuiltinTools returns every built-in tool, sorted by name.
func BuiltinTools() []Tool {
	var out []Tool
	for _, n := range BuiltinToolNames() {
		out = append(out, builtinTools[n])
	}
	return out
}

func stringParams(name, desc string, required bool) map[string]any {
	s := map[string]any{"type": "object", "properties": map[string]any{
		name: map[string]any{"type": "string", "description": desc}}}
	if required {
		s["required"] = []any{name}
	}
	return s
}

func stringArg(args map[string]any, name string, required bool) (string, error) {
	v, ok := args[name]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("missing argument %q", name)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("argument %q must be a string", name)
	}
	return s, nil
}

// formatNumber prints integers without an exponent and other numbers in their shortest form.
func formatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Calculator limits: longer or deeper expressions are refused.
const (
	maxExprLen   = 1000
	maxExprDepth = 64
)

// Calculate evaluates an arithmetic expression (see the calculator tool) with a recursive
// descent parser. ^ is right-associative and binds tighter than unary minus (-2^2 = -4).
func Calculate(expr string) (float64, error) {
	if len(expr) > maxExprLen {
		return 0, fmt.Errorf("expression longer than %d characters", maxExprLen)
	}
	p := &calc{src: strings.ReplaceAll(expr, "**", "^")}
	v, err := p.expr(0)
	if err != nil {
		return 0, err
	}
	p.skip()
	if p.pos < len(p.src) {
		return 0, fmt.Errorf("unexpected %q at position %d", p.src[p.pos:p.pos+1], p.pos+1)
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, errors.New("the result is not a finite number")
	}
	return v, nil
}

type calc struct {
	src string
	pos int
}

func (p *calc) skip() {
	for p.pos < len(p.src) && unicode.IsSpace(rune(p.src[p.pos])) {
		p.pos++
	}
}

// eat consumes c when it comes next.
func (p *calc) eat(c byte) bool {
	p.skip()
	if p.pos < len(p.src) && p.src[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *calc) expr(depth int) (float64, error) {
	if depth > maxExprDepth {
		return 0, fmt.Errorf("expression nested deeper than %d", maxExprDepth)
	}
	v, err := p.term(depth)
	for err == nil {
		var r float64
		switch {
		case p.eat('+'):
			r, err = p.term(depth)
			v += r
		case p.eat('-'):
			r, err = p.term(depth)
			v -= r
		default:
			return v, nil
		}
	}
	return 0, err
}

func (p *calc) term(depth int) (float64, error) {
	v, err := p.unary(depth)
	for err == nil {
		var r float64
		switch {
		case p.eat('*'):
			r, err = p.unary(depth)
			v *= r
		case p.eat('/'):
			if r, err = p.unary(depth); err == nil && r == 0 {
				err = errors.New("division by zero")
			}
			v /= r
		case p.eat('%'):
			if r, err = p.unary(depth); err == nil && r == 0 {
				err = errors.New("modulo by zero")
			}
			v = math.Mod(v, r)
		default:
			return v, nil
		}
	}
	return 0, err
}

func (p *calc) unary(depth int) (float64, error) {
	if depth > maxExprDepth {
		return 0, fmt.Errorf("expression nested deeper than %d", maxExprDepth)
	}
	switch {
	case p.eat('-'):
		v, err := p.unary(depth + 1)
		return -v, err
	case p.eat('+'):
		return p.unary(depth + 1)
	}
	base, err := p.primary(depth)
	if err != nil || !p.eat('^') {
		return base, err
	}
	exp, err := p.unary(depth + 1)
	return math.Pow(base, exp), err
}

func (p *calc) primary(depth int) (float64, error) {
	p.skip()
	if p.pos >= len(p.src) {
		return 0, errors.New("unexpected end of expression")
	}
	if p.eat('(') {
		v, err := p.expr(depth + 1)
		if err == nil && !p.eat(')') {
			err = fmt.Errorf("missing ) at position %d", p.pos+1)
		}
		return v, err
	}
	start := p.pos
	c := p.src[p.pos]
	switch {
	case c >= '0' && c <= '9' || c == '.':
		for p.pos < len(p.src) && (isDigit(p.src[p.pos]) || p.src[p.pos] == '.') {
			p.pos++
		}
		if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
			q := p.pos + 1
			if q < len(p.src) && (p.src[q] == '+' || p.src[q] == '-') {
				q++
			}
			if q < len(p.src) && isDigit(p.src[q]) {
				for p.pos = q; p.pos < len(p.src) && isDigit(p.src[p.pos]); p.pos++ {
				}
			}
		}
		v, err := strconv.ParseFloat(p.src[start:p.pos], 64)
		if err != nil {
			return 0, fmt.Errorf("bad number %q", p.src[start:p.pos])
		}
		return v, nil
	case c >= 'a' && c <= 'z':
		for p.pos < len(p.src) && p.src[p.pos] >= 'a' && p.src[p.pos] <= 'z' {
			p.pos++
		}
		switch name := p.src[start:p.pos]; name {
		case "pi":
			return math.Pi, nil
		case "e":
			return math.E, nil
		case "sqrt", "abs":
			if !p.eat('(') {
				return 0, fmt.Errorf("%s needs parentheses: %s(x)", name, name)
			}
			v, err := p.expr(depth + 1)
			if err == nil && !p.eat(')') {
				err = fmt.Errorf("missing ) at position %d", p.pos+1)
			}
			if name == "abs" {
				return math.Abs(v), err
			}
			if err == nil && v < 0 {
				err = errors.New("square root of a negative number")
			}
			return math.Sqrt(v), err
		default:
			return 0, fmt.Errorf("unknown name %q (known: sqrt, abs, pi, e)", name)
		}
	}
	r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
	return 0, fmt.Errorf("unexpected %q at position %d", r, p.pos+1)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
