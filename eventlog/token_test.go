package eventlog

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzValidToken: whatever passes ValidToken stands for exactly one token of a literal subject:
// the aggregate's filter splits into its four parts, none a wildcard, and it is plain printable
// ASCII; what fails it is refused by Validate.
func FuzzValidToken(f *testing.F) {
	for _, s := range []string{"", "*", ">", "a.b", "a b", "0193a2b4-0000-7000-8000-000000000000",
		"0123456789abcdef0123456789abcdef", "a\x00b", "é", "a\tb", "%2A", strings.Repeat("x", MaxTokenBytes+1)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		agg := Aggregate{Kind: "thread", Tenant: DefaultTenant, ID: s}
		if !ValidToken(s) {
			if agg.Validate() == nil {
				t.Fatalf("%q is refused as a token but its aggregate validates", s)
			}
			return
		}
		if err := agg.Validate(); err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(agg.Filter(), ".")
		if len(parts) != 4 || parts[2] != s || parts[3] != "*" {
			t.Fatalf("filter %q of id %q is not four tokens with the id third", agg.Filter(), s)
		}
		if s == "*" || s == ">" || !utf8.ValidString(s) || len(s) > MaxTokenBytes {
			t.Fatalf("%q passed", s)
		}
		for _, r := range s {
			if r <= ' ' || r >= 0x7f {
				t.Fatalf("%q holds %q", s, r)
			}
		}
	})
}

func TestValidToken(t *testing.T) {
	for s, want := range map[string]bool{
		"0193a2b4-0000-7000-8000-000000000000": true, "default": true, "a_b-c": true,
		"": false, "*": false, ">": false, "a*": false, "a.b": false, "a b": false, "a\nb": false,
		"é": false, "\x7f": false, strings.Repeat("x", MaxTokenBytes): true, strings.Repeat("x", MaxTokenBytes+1): false,
	} {
		if got := ValidToken(s); got != want {
			t.Errorf("ValidToken(%q) = %v, want %v", s, got, want)
		}
	}
}
