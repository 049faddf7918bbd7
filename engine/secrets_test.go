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
