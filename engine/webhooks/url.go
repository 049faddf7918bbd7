package webhooks

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
)

// MaxURLLength is the longest webhook URL accepted.
const MaxURLLength = 2048

// invalidURL is the 422 error for a bad webhook, in the FastAPI shape the clients understand. The
// URL itself is never echoed: it may hold a token.
func invalidURL(reason string) error {
	return engine.E(engine.Op("runs.create"), engine.Invalid, "Invalid webhook URL: "+reason,
		[]engine.FieldError{{Loc: []any{"body", "webhook"}, Msg: "Invalid webhook URL: " + reason, Type: "url_parsing"}})
}

// ValidateURL checks that u is an absolute http or https URL with a host, as a run's webhook must
// be. It returns an engine.Invalid error (HTTP 422) whose one field error is at
// ["body", "webhook"], so the run layer may answer with it or append its Fields to its own
// violations.
//
// The reference server also accepts a path starting with "/" and posts it to its own app; jetgraph
// does not (yet), and refuses it here.
func ValidateURL(u string) error {
	_, err := parseURL(u)
	return err
}

func parseURL(u string) (*url.URL, error) {
	switch {
	case u == "":
		return nil, invalidURL("empty")
	case len(u) > MaxURLLength:
		return nil, invalidURL(fmt.Sprintf("longer than %d characters", MaxURLLength))
	case strings.TrimSpace(u) != u || strings.ContainsAny(u, " \t\r\n"):
		return nil, invalidURL("contains whitespace")
	}
	p, err := url.Parse(u)
	if err != nil {
		return nil, invalidURL("cannot be parsed")
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		if p.Scheme == "" {
			return nil, invalidURL("must be an absolute http or https URL")
		}
		return nil, invalidURL(fmt.Sprintf("scheme %q is not http or https", p.Scheme))
	}
	if p.Opaque != "" || p.Host == "" || p.Hostname() == "" {
		return nil, invalidURL("has no host")
	}
	return p, nil
}

// Redact returns u without what may be secret: user info, query string and fragment are dropped,
// leaving scheme://host/path. It is what events and logs show. A URL that cannot be parsed
// becomes "(invalid URL)".
func Redact(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Opaque != "" {
		return "(invalid URL)"
	}
	r := url.URL{Scheme: p.Scheme, Host: p.Host, Path: p.Path, RawPath: p.RawPath}
	return r.String()
}

// hostAllowed reports whether host matches one of the patterns: "example.com" matches that host
// only, ".example.com" and "*.example.com" match its subdomains (not the domain itself). An empty
// list allows every host.
func hostAllowed(patterns []string, host string) bool {
	if len(patterns) == 0 {
		return true
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSpace(p))
		switch {
		case p == "":
		case strings.HasPrefix(p, "*."):
			if strings.HasSuffix(host, p[1:]) {
				return true
			}
		case strings.HasPrefix(p, "."):
			if strings.HasSuffix(host, p) {
				return true
			}
		case p == host:
			return true
		}
	}
	return false
}
