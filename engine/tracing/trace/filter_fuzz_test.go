package trace

import (
	"errors"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
)

// FuzzParseFilter: any text parses or is refused without panicking; a refusal is an Invalid
// engine error carrying a FilterError whose position is inside the text; what parses matches
// runs without panicking, and the filter's own laws hold on them: not(not(f)) and and(f, f)
// select what f selects, not(f) the rest.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{
		``, `eq(run_type, "llm")`, `and(eq(metadata_key, "user"), eq(metadata_value, "ann"))`,
		`or(gt(latency, "1.5s"), lt(total_tokens, 1e3))`, `in(tags, ["a", 'b'])`, `search("x\u00e9\n")`,
		`not(has(tags, "prod"))`, `like(name, "%_a")`, `gte(start_time, 1772366402123)`, `eq(error, null)`,
	} {
		f.Add(s)
	}
	runs := filterRuns(f)
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := ParseFilter(s)
		if err != nil {
			var fe *FilterError
			if !engine.Is(engine.Invalid, err) || !errors.As(err, &fe) {
				t.Fatalf("ParseFilter(%q) = %v: want an Invalid error with a FilterError", s, err)
			}
			if fe.Pos < 0 || fe.Pos > len(s) {
				t.Fatalf("ParseFilter(%q): position %d outside the text", s, fe.Pos)
			}
			return
		}
		if got := flt.(interface{ String() string }).String(); got != s {
			t.Fatalf("String() = %q, want the source %q", got, s)
		}
		laws := map[string]func(bool) bool{
			"not(not(" + s + "))":       func(m bool) bool { return m },
			"and(" + s + ", " + s + ")": func(m bool) bool { return m },
			"not(" + s + ")":            func(m bool) bool { return !m },
		}
		if strings.Trim(s, filterBlanks) == "" {
			return // "" matches everything but is no expression to nest
		}
		for law, want := range laws {
			g, err := ParseFilter(law)
			if err != nil {
				t.Fatalf("%q parses but %q does not: %v", s, law, err)
			}
			for _, r := range runs {
				if g.Match(r) != want(flt.Match(r)) {
					t.Fatalf("%q on run %s: %v, but %q: %v", s, r.Name, flt.Match(r), law, g.Match(r))
				}
			}
		}
	})
}
