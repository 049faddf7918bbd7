package engine

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestHeaderPatterns: the reference's semantics of http.configurable_headers.
func TestHeaderPatterns(t *testing.T) {
	p := HeaderPatterns{Include: []string{"x-user-id", "My-Prefix-*", "x-*-org", "authorization", "x-api-key"}, Exclude: []string{"my-prefix-secret*"}}
	for name, want := range map[string]bool{
		"x-user-id": true, "my-prefix-a": true, "my-prefix-": true, "x-acme-org": true, "x--org": true,
		"my-prefix-secret-1": false, "x-user-idx": false, "x-org": false, "user-agent": false,
		"authorization": false, "x-api-key": false, "x-tenant-id": false, "cookie": false,
	} {
		if got := p.Allows(name); got != want {
			t.Errorf("Allows(%q) = %v, want %v", name, got, want)
		}
	}
	if (HeaderPatterns{Exclude: []string{"x"}}).Allows("x-user-id") {
		t.Error("without includes a header was allowed")
	}
}

// FuzzWildcardMatch checks the matcher against the reference's translation of a pattern to a
// regular expression (* is .*, everything else literal, the whole name).
func FuzzWildcardMatch(f *testing.F) {
	for _, s := range [][2]string{{"x-*", "x-a"}, {"*a*b*", "aab"}, {"a*a", "a"}, {"**", ""}, {"x.y", "xzy"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if !utf8.ValidString(pattern) || !utf8.ValidString(s) {
			t.Skip("the regular expression oracle reads UTF-8 (header names are ASCII)")
		}
		var re strings.Builder
		re.WriteString(`(?s)\A`)
		for i, piece := range strings.Split(pattern, "*") {
			if i > 0 {
				re.WriteString(".*")
			}
			re.WriteString(regexp.QuoteMeta(piece))
		}
		re.WriteString(`\z`)
		want := regexp.MustCompile(re.String()).MatchString(s)
		if got := wildcardMatch(pattern, s); got != want {
			t.Fatalf("wildcardMatch(%q, %q) = %v, want %v", pattern, s, got, want)
		}
	})
}
