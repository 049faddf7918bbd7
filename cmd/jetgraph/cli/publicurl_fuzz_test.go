package cli

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzParsePublicURL checks --public-url's parser on any input: it never panics, and what it
// accepts is an http(s) URL with a host, no query, fragment or credentials and no trailing
// slash, which it accepts again unchanged (custom_url is that base plus a path).
func FuzzParsePublicURL(f *testing.F) {
	for _, s := range []string{"", "https://agents.example.com", "http://10.0.0.5:8080/jg/", "https://",
		"https://a.example.com/?x=1", "https://user:pw@a.example.com", "http://[::1]:8123", "https://a#frag", "http://a//", "http://a?", "http://a#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := parsePublicURL(in)
		if err != nil || got == "" {
			return
		}
		u, perr := url.Parse(got)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			strings.ContainsAny(got, "?#") || u.User != nil || strings.HasSuffix(got, "/") {
			t.Fatalf("parsePublicURL(%q) accepted %q (%v)", in, got, perr)
		}
		if again, err := parsePublicURL(got); err != nil || again != got {
			t.Fatalf("parsePublicURL(%q) = %q, but that again gives %q, %v", in, got, again, err)
		}
	})
}
