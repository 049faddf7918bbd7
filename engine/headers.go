package engine

import "strings"

// HeaderPatterns are langgraph.json's http.configurable_headers: which request headers a run's
// config.configurable gets. A pattern is a header name in which * matches any run of characters
// (nothing else is special, so that no pattern can be slow); names compare case-insensitively.
// Without Include no header is copied, as in the reference servers.
type HeaderPatterns struct {
	Include []string `json:"includes,omitempty"`
	Exclude []string `json:"excludes,omitempty"`
}

// CredentialHeaders are never copied into configurable, whatever the patterns say: the
// reference's (x-api-key, x-service-key, x-tenant-id, authorization) and the other headers that
// carry a credential.
var CredentialHeaders = []string{"authorization", "proxy-authorization", "x-api-key", "x-service-key",
	"x-tenant-id", "cookie", "set-cookie"}

// Allows reports whether the header called name (lower-case) goes into configurable.
func (p HeaderPatterns) Allows(name string) bool {
	for _, c := range CredentialHeaders {
		if name == c {
			return false
		}
	}
	for _, x := range p.Exclude {
		if wildcardMatch(strings.ToLower(x), name) {
			return false
		}
	}
	for _, in := range p.Include {
		if wildcardMatch(strings.ToLower(in), name) {
			return true
		}
	}
	return false
}

// Empty reports whether p copies no header at all.
func (p HeaderPatterns) Empty() bool { return len(p.Include) == 0 }

// wildcardMatch reports whether s is all of pattern, * in it matching any run of characters.
// It works greedily from the pieces between stars, in time linear in len(s) per piece.
func wildcardMatch(pattern, s string) bool {
	pieces := strings.Split(pattern, "*")
	if len(pieces) == 1 {
		return pattern == s
	}
	first, last := pieces[0], pieces[len(pieces)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	s = s[len(first) : len(s)-len(last)]
	for _, p := range pieces[1 : len(pieces)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}
