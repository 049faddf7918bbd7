package engine

import (
	"maps"
	"net/url"
	"slices"
	"strings"
)

// KeepSecrets returns in (decoded JSON) with every masked placeholder a client sent back
// replaced by the secret stored at the same place in stored: a client that reads a record
// (answers mask secrets, see MaskSecrets) and writes it back must not overwrite the real secret
// with MaskedValue. A placeholder — MaskedValue under a secret-looking key, or a URL whose
// credentials are masked — with no stored secret to keep at that place is a violation at its
// loc: the client must send the real value. Everything else is returned as sent.
func KeepSecrets(v *Violations, in, stored any, loc ...any) any {
	switch x := in.(type) {
	case map[string]any:
		old, _ := stored.(map[string]any)
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) { // violations in a stable order
			val := x[k]
			at := append(append([]any{}, loc...), k)
			if s, ok := val.(string); ok && s == MaskedValue && SecretKey(k) {
				if prev, has := old[k]; has && prev != nil && prev != "" && prev != MaskedValue {
					out[k] = prev
				} else {
					v.Add("value_error", "masked secret: no stored value to keep here, send the real value", at...)
					out[k] = val
				}
				continue
			}
			out[k] = KeepSecrets(v, val, old[k], at...)
		}
		return out
	case []any:
		old, _ := stored.([]any)
		out := make([]any, len(x))
		for i, val := range x {
			var prev any
			if i < len(old) {
				prev = old[i]
			}
			out[i] = KeepSecrets(v, val, prev, append(append([]any{}, loc...), i)...)
		}
		return out
	case string:
		return KeepSecretURL(v, x, stored, loc...)
	}
	return in
}

// HasMasked reports whether in (decoded JSON) holds a placeholder KeepSecrets would replace or
// refuse, anywhere in it. A command looks up stored secrets only then: a request that carries
// none (nearly all of them) costs no extra read.
func HasMasked(in any) bool {
	switch x := in.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && s == MaskedValue && SecretKey(k) || HasMasked(val) {
				return true
			}
		}
	case []any:
		return slices.ContainsFunc(x, HasMasked)
	case string:
		return maskedURL(x)
	}
	return false
}

// KeepSecretsMap is KeepSecrets for a map (nil stays nil).
func KeepSecretsMap(v *Violations, in, stored map[string]any, loc ...any) map[string]any {
	if in == nil {
		return nil
	}
	return KeepSecrets(v, in, stored, loc...).(map[string]any)
}

// KeepSecretURL returns s, or the stored URL when s is that URL as answers show it (its
// credentials masked). A URL with masked credentials that masks no stored URL is a violation
// at loc.
func KeepSecretURL(v *Violations, s string, stored any, loc ...any) string {
	if !maskedURL(s) {
		return s
	}
	if prev, ok := stored.(string); ok && prev != s && MaskURL(prev) == s {
		return prev
	}
	v.Add("value_error", "masked URL credentials: no stored URL to keep here, send the real URL", loc...)
	return s
}

// maskedURL reports whether s is a URL whose credentials are MaskedValue, as MaskURL leaves them.
func maskedURL(s string) bool {
	if !strings.Contains(s, MaskedValue) || !strings.Contains(s, "://") {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return false
	}
	if u.User != nil {
		if p, has := u.User.Password(); (has && p == MaskedValue) || (!has && u.User.Username() == MaskedValue) {
			return true
		}
	}
	for k, vals := range u.Query() {
		if secretParam(k) {
			for _, val := range vals {
				if val == MaskedValue {
					return true
				}
			}
		}
	}
	return false
}
