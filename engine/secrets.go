package engine

import (
	"net/url"
	"regexp"
	"strings"
)

// MaskedValue is what a secret-looking value shows as in answers and traces.
const MaskedValue = "********"

// secretKeyPattern matches the configurable and metadata keys whose values are credentials:
// api_key, openai_api_key, access_token, client_secret, db_password, authorization, ... (a
// suffix, so max_tokens or token_budget are not).
var secretKeyPattern = regexp.MustCompile(`(?i)(api[_-]?key|access[_-]?key|private[_-]?key|secret[_-]?key|token|secret|password|passwd|pwd|credentials?|authorization|cookie)$`)

// SecretKey reports whether a configurable or metadata key names a secret.
func SecretKey(key string) bool { return secretKeyPattern.MatchString(key) }

// MaskSecrets returns a copy of v (decoded JSON: maps, slices, strings, ...) in which the values
// under secret-looking keys are MaskedValue and URLs lose their credentials (see MaskURL). It is
// what answers and traces show of what a client configured; the stored value is untouched, so
// the graph still gets it.
func MaskSecrets(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if SecretKey(k) && val != nil && val != "" {
				out[k] = MaskedValue
			} else {
				out[k] = MaskSecrets(val)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = MaskSecrets(val)
		}
		return out
	case string:
		return MaskURL(x)
	}
	return v
}

// MaskMap is MaskSecrets for a map (nil stays nil).
func MaskMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return MaskSecrets(m).(map[string]any)
}

// MaskURL returns s with the credentials of a URL masked: the password of its user info, and
// the values of secret-looking query parameters (token, api_key, ...). Anything else, URLs
// without credentials included, is returned as is.
func MaskURL(s string) string {
	if !strings.Contains(s, "://") || strings.ContainsAny(s, " \t\n") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return s
	}
	changed := false
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), MaskedValue)
		} else {
			u.User = url.User(MaskedValue)
		}
		changed = true
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if secretParam(k) {
				q[k] = []string{MaskedValue}
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	if !changed {
		return s
	}
	out := u.String()
	// url.String escapes the mask's asterisks in user info; show them plainly.
	return strings.ReplaceAll(out, url.QueryEscape(MaskedValue), MaskedValue)
}

// secretParam reports whether a URL query parameter carries a credential.
func secretParam(k string) bool {
	return SecretKey(k) || strings.EqualFold(k, "key") || strings.EqualFold(k, "sig") || strings.EqualFold(k, "signature")
}

// Masked returns the run as answers show it: the config and context of its kwargs with secrets
// masked, and its webhook's credentials masked. The record itself is untouched.
func (r Run) Masked() Run {
	k := &r.Kwargs
	k.Config, k.Context, k.Webhook = MaskMap(k.Config), MaskMap(k.Context), OptString(MaskURL(string(k.Webhook)))
	return r
}

// Masked returns the thread as answers show it: its config with secrets masked.
func (t Thread) Masked() Thread {
	t.Config = MaskMap(t.Config)
	return t
}

// Masked returns the assistant as answers show it: its config and context with secrets masked.
func (a Assistant) Masked() Assistant {
	a.Config, a.Context = MaskMap(a.Config), MaskMap(a.Context)
	return a
}

// Masked returns the version as answers show it: its config and context with secrets masked.
func (a AssistantVersion) Masked() AssistantVersion {
	a.Config, a.Context = MaskMap(a.Config), MaskMap(a.Context)
	return a
}
