package graphs

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestCalculate(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{"2 + 3 * 4", "14"},
		{"(2 + 3) * 4", "20"},
		{"2 ^ 3 ^ 2", "512"},
		{"2 ** 10", "1024"},
		{"-2 ^ 2", "-4"},
		{"2 ^ -1", "0.5"},
		{"10 % 4", "2"},
		{"7 / 2", "3.5"},
		{"--3", "3"},
		{"sqrt(16) + abs(-2)", "6"},
		{"pi", "3.141592653589793"},
		{"1.5e3 + .5", "1500.5"},
		{"0.1 + 0.2", "0.30000000000000004"},
		{"1 / 0", "error: division by zero"},
		{"5 % 0", "error: modulo by zero"},
		{"2 +", "error: unexpected end of expression"},
		{"(1 + 2", "error: missing ) at position 7"},
		{"1 + 2)", `error: unexpected ")" at position 6`},
		{"os.exit(1)", `error: unknown name "os" (known: sqrt, abs, pi, e)`},
		{"sqrt(-1)", "error: square root of a negative number"},
		{"10 ^ 400", "error: the result is not a finite number"},
		{"1 # 2", `error: unexpected "#" at position 3`},
		{strings.Repeat("(", 100) + "1" + strings.Repeat(")", 100), "error: expression nested deeper than 64"},
		{strings.Repeat("1+", 600) + "1", "error: expression longer than 1000 characters"},
	} {
		got := ""
		if v, err := Calculate(c.expr); err != nil {
			got = "error: " + err.Error()
		} else {
			got = formatNumber(v)
		}
		if got != c.want {
			t.Errorf("Calculate(%.40q) = %s, want %s", c.expr, got, c.want)
		}
	}
}

func TestBuiltinTools(t *testing.T) {
	ctx := context.Background()
	run := func(name string, args map[string]any) string {
		tool, ok := BuiltinTool(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		out, err := tool.Run(ctx, args)
		if err != nil {
			return "error: " + err.Error()
		}
		return out
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"echo", map[string]any{"text": "hi"}, "hi"},
		{"echo", map[string]any{}, `error: missing argument "text"`},
		{"echo", map[string]any{"text": 3.0}, `error: argument "text" must be a string`},
		{"word_count", map[string]any{"text": "the quick\nbrown fox\n"}, `{"characters":20,"lines":2,"words":4}`},
		{"word_count", map[string]any{"text": ""}, `{"characters":0,"lines":0,"words":0}`},
		{"calculator", map[string]any{"expression": "6*7"}, "42"},
		{"current_time", map[string]any{"timezone": "Not/AZone"}, `error: unknown time zone "Not/AZone"`},
	} {
		if got := run(c.tool, c.args); got != c.want {
			t.Errorf("%s(%v) = %s, want %s", c.tool, c.args, got, c.want)
		}
	}
	now := run("current_time", nil)
	stamp, _, _ := strings.Cut(now, " ")
	if ts, err := time.Parse(time.RFC3339, stamp); err != nil || time.Since(ts) > time.Minute {
		t.Errorf("current_time = %q (%v)", now, err)
	}
	if got := strings.Join(BuiltinToolNames(), ","); got != "calculator,current_time,echo,word_count" {
		t.Errorf("names = %s", got)
	}
}
