package graphs

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

// FuzzCalculate: any text is evaluated or refused without panicking; an accepted expression has a
// finite value that parentheses, negation and adding zero around it treat as a number.
func FuzzCalculate(f *testing.F) {
	for _, s := range []string{"2+3*4", "(2 + 3) * 4 ^ 2", "-2^2", "2**3**2", "sqrt(16) + abs(-3)", "pi*e",
		"10 % 4", "1e3/8", ".5", "1/0", "sqrt(-1)", "((1)", "2^", "e9", "1.2.3", "9^9^9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Calculate(s)
		if err != nil {
			return
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("Calculate(%q) = %v without an error", s, v)
		}
		if len(s) > maxExprLen-8 || strings.Count(s, "(") > maxExprDepth/2 {
			return // the forms below would pass a limit
		}
		for form, want := range map[string]float64{"(" + s + ")": v, "-(" + s + ")": -v, "0+(" + s + ")": v} {
			got, err := Calculate(form)
			if err != nil || got != want {
				t.Fatalf("Calculate(%q) = %v, but Calculate(%q) = %v, %v; want %v", s, v, form, got, err, want)
			}
		}
	})
}

// FuzzCalculateTree builds an expression tree from the fuzzer's bytes, writes it fully
// parenthesized and checks that Calculate agrees with evaluating the tree directly: the same
// value, or an error exactly when the tree divides by zero, takes the root of a negative number
// or ends not finite.
func FuzzCalculateTree(f *testing.F) {
	f.Add([]byte{0, 3, 1, 4})
	f.Add([]byte{5, 6, 2, 0, 9, 1, 7, 3, 4, 8, 0, 2})
	f.Add([]byte{3, 1, 0, 0, 4, 2, 6, 9, 9, 9})
	f.Fuzz(func(t *testing.T, seed []byte) {
		g := &treeGen{b: seed}
		text, want, wantErr := g.expr(0)
		got, err := Calculate(text)
		if wantErr == nil && (math.IsNaN(want) || math.IsInf(want, 0)) {
			wantErr = errors.New("not finite")
		}
		switch {
		case (err != nil) != (wantErr != nil):
			t.Fatalf("Calculate(%q) = %v, %v; the tree gives %v, %v", text, got, err, want, wantErr)
		case err == nil && got != want:
			t.Fatalf("Calculate(%q) = %v; the tree gives %v", text, got, want)
		}
	})
}

// treeGen draws an expression from bytes: its text, its value and the error evaluating it must give.
type treeGen struct {
	b []byte
	i int
}

func (g *treeGen) next() int {
	if g.i >= len(g.b) {
		return 0
	}
	g.i++
	return int(g.b[g.i-1])
}

func (g *treeGen) expr(depth int) (string, float64, error) {
	k := g.next()
	if depth >= 6 || k%10 < 3 {
		n := g.next() % 20
		return strconv.Itoa(n), float64(n), nil
	}
	if k%10 < 5 {
		fn := [...]string{"-", "sqrt", "abs"}[k%3]
		s, v, err := g.expr(depth + 1)
		switch {
		case err != nil:
		case fn == "-":
			return "-(" + s + ")", -v, nil
		case fn == "sqrt" && v < 0:
			err = errors.New("square root of a negative number")
		case fn == "sqrt":
			v = math.Sqrt(v)
		default:
			v = math.Abs(v)
		}
		return fn + "(" + s + ")", v, err
	}
	op := "+-*/%^"[k%6]
	ls, lv, lerr := g.expr(depth + 1)
	rs, rv, rerr := g.expr(depth + 1)
	text := "(" + ls + ")" + string(op) + "(" + rs + ")"
	if err := errors.Join(lerr, rerr); err != nil {
		return text, 0, err
	}
	switch op {
	case '+':
		return text, lv + rv, nil
	case '-':
		return text, lv - rv, nil
	case '*':
		return text, lv * rv, nil
	case '/':
		if rv == 0 {
			return text, 0, errors.New("division by zero")
		}
		return text, lv / rv, nil
	case '%':
		if rv == 0 {
			return text, 0, errors.New("modulo by zero")
		}
		return text, math.Mod(lv, rv), nil
	}
	return text, math.Pow(lv, rv), nil
}
