package engine

import (
	"reflect"
	"testing"
)

func TestSecretKey(t *testing.T) {
	for key, want := range map[string]bool{
		"api_key": true, "OPENAI_API_KEY": true, "apiKey": true, "access_token": true, "client_secret": true,
		"db_password": true, "Authorization": true, "credentials": true, "private-key": true,
		"max_tokens": false, "token_budget": false, "model": false, "keyboard": false, "thread_id": false,
	} {
		if got := SecretKey(key); got != want {
			t.Errorf("SecretKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestMaskURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:p@h.example.com/x?a=1":          "https://u:" + MaskedValue + "@h.example.com/x?a=1",
		"https://tok@h.example.com/x":              "https://" + MaskedValue + "@h.example.com/x",
		"https://h.example.com/x?token=t&kind=run": "https://h.example.com/x?kind=run&token=" + MaskedValue,
		"https://h.example.com/x?key=abc":          "https://h.example.com/x?key=" + MaskedValue,
		"https://h.example.com/x?page=2":           "https://h.example.com/x?page=2",
		"not a url":                                "not a url",
		"plain text with :// inside":               "plain text with :// inside",
	} {
		if got := MaskURL(in); got != want {
			t.Errorf("MaskURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMaskSecretsLeavesTheOriginal(t *testing.T) {
	in := map[string]any{"configurable": map[string]any{"api_key": "k", "n": 1.0, "empty_token": ""},
		"urls": []any{"https://a:b@h/x"}}
	got := MaskSecrets(in)
	want := map[string]any{"configurable": map[string]any{"api_key": MaskedValue, "n": 1.0, "empty_token": ""},
		"urls": []any{"https://a:" + MaskedValue + "@h/x"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("MaskSecrets = %v, want %v", got, want)
	}
	if in["configurable"].(map[string]any)["api_key"] != "k" || in["urls"].([]any)[0] != "https://a:b@h/x" {
		t.Fatalf("MaskSecrets changed its input: %v", in)
	}
}

func TestMaskURLs(t *testing.T) {
	for in, want := range map[string]string{
		`Post "https://u:p@h.example.com/v1/chat?api_key=k": dial tcp: refused`: `Post "https://u:` + MaskedValue + `@h.example.com/v1/chat?api_key=` + MaskedValue + `": dial tcp: refused`,
		"calling http://h:8080/v1 and https://tok@other/x failed":               "calling http://h:8080/v1 and https://" + MaskedValue + "@other/x failed",
		"no url here: a :// alone":                                              "no url here: a :// alone",
		"GET https://h/x?token=t1234: refused (see http://h/doc).":              "GET https://h/x?token=" + MaskedValue + ": refused (see http://h/doc).",
	} {
		if got := MaskURLs(in); got != want {
			t.Errorf("MaskURLs(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMaskText(t *testing.T) {
	type kwargs struct {
		Config map[string]any `json:"config"`
	}
	tests := []struct {
		name, text string
		sources    []any
		want       string
	}{
		{"a secret of decoded JSON", "bad key sk-live-123 for model m", []any{map[string]any{"configurable": map[string]any{"api_key": "sk-live-123", "model": "m"}}},
			"bad key " + MaskedValue + " for model m"},
		{"a struct is read as its JSON", "token abcd-efgh refused", []any{kwargs{Config: map[string]any{"access_token": "abcd-efgh"}}},
			"token " + MaskedValue + " refused"},
		{"every leaf under a secret key, the longest first", "u=admin-user p=admin-user-pw", []any{map[string]any{"credentials": map[string]any{"user": "admin-user", "pw": "admin-user-pw"}}},
			"u=" + MaskedValue + " p=" + MaskedValue},
		{"short values and other keys are left", "model gpt no", []any{map[string]any{"token": "no", "model": "gpt"}, nil},
			"model gpt no"},
		{"URLs lose their credentials", "GET https://h/x?token=t1234 failed", nil,
			"GET https://h/x?token=" + MaskedValue + " failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MaskText(tt.text, tt.sources...); got != tt.want {
				t.Errorf("MaskText = %q, want %q", got, tt.want)
			}
		})
	}
}
