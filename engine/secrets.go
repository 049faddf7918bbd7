package engine

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
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

// urlPattern finds the URLs in a text: a scheme, "://", and what follows up to a space or a
// quote (error texts quote the URLs they failed on), without the punctuation that ends it.
var urlPattern = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]*[^\s"'<>.,;:!?)\]]`)

// MaskURLs returns text with the credentials of every URL in it masked (see MaskURL).
func MaskURLs(text string) string {
	if !strings.Contains(text, "://") {
		return text
	}
	return urlPattern.ReplaceAllStringFunc(text, MaskURL)
}

// minSecretLen is the shortest secret MaskText looks for: a shorter value under a secret-looking
// key ("", "no", a flag) would mask ordinary words rather than protect anything.
const minSecretLen = 4

// MaskText returns text (an error's, for a log line) as answers would show what it quotes: the
// values that MaskSecrets masks in each of sources (JSON values: decoded, or anything that
// encodes to JSON) are replaced by MaskedValue wherever they appear, and the credentials of
// every URL are masked. A node that fails quoting the API key of its config logs no key.
func MaskText(text string, sources ...any) string {
	var secrets []string
	for _, src := range sources {
		secrets = appendSecrets(secrets, decoded(src), false)
	}
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) }) // the longest first
	for _, s := range secrets {
		text = strings.ReplaceAll(text, s, MaskedValue)
	}
	return MaskURLs(text)
}

// decoded is v as encoding/json decodes JSON into an any (nil when it does not encode).
func decoded(v any) any {
	switch v.(type) {
	case nil, map[string]any, []any, string:
		return v
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}

// appendSecrets adds to out the strings of v that MaskSecrets would mask: every string under a
// secret-looking key (secret: v is under one), at any depth.
func appendSecrets(out []string, v any, secret bool) []string {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			out = appendSecrets(out, val, secret || SecretKey(k))
		}
	case []any:
		for _, val := range x {
			out = appendSecrets(out, val, secret)
		}
	case string:
		if secret && len(x) >= minSecretLen {
			out = append(out, x)
		}
	}
	return out
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
