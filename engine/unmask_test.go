package engine

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestKeepSecrets: what an answer showed, written back, keeps the stored secrets; a placeholder
// with nothing stored is a violation at its place; everything else is taken as sent.
func TestKeepSecrets(t *testing.T) {
	stored := `{"configurable":{"api_key":"sk-real","model":"m","hook":"https://u:pw@h.example.com/x?token=t1&a=b"},"list":[{"db_password":"p1"}]}`
	for _, tc := range []struct {
		name, in, want, errs string
	}{
		{"round trip of the masked answer", `{"configurable":{"api_key":"********","model":"m2","hook":"https://u:********@h.example.com/x?a=b&token=********"},"list":[{"db_password":"********"}]}`,
			`{"configurable":{"api_key":"sk-real","hook":"https://u:pw@h.example.com/x?token=t1\u0026a=b","model":"m2"},"list":[{"db_password":"p1"}]}`, "[]"},
		{"new real values win", `{"configurable":{"api_key":"sk-new"}}`, `{"configurable":{"api_key":"sk-new"}}`, "[]"},
		{"a placeholder where nothing is stored", `{"configurable":{"openai_api_key":"********"},"list":[{},{"db_password":"********"}]}`,
			`{"configurable":{"openai_api_key":"********"},"list":[{},{"db_password":"********"}]}`,
			"[[configurable openai_api_key] [list 1 db_password]]"},
		{"a masked URL masking another URL", `{"configurable":{"hook":"https://u:********@other.example.com/x"}}`,
			`{"configurable":{"hook":"https://u:********@other.example.com/x"}}`, "[[configurable hook]]"},
		{"stars under a plain key are data", `{"configurable":{"model":"********"}}`, `{"configurable":{"model":"********"}}`, "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in, old map[string]any
			if err := json.Unmarshal([]byte(tc.in), &in); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(stored), &old); err != nil {
				t.Fatal(err)
			}
			var v Violations
			got, err := json.Marshal(KeepSecretsMap(&v, in, old))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			var locs [][]any
			for _, e := range v {
				locs = append(locs, e.Loc)
			}
			if s := fmt.Sprint(locs); s != tc.errs && !(tc.errs == "[]" && len(locs) == 0) {
				t.Errorf("violations at %s, want %s", s, tc.errs)
			}
		})
	}
}

func TestKeepSecretURLWithoutStoredURL(t *testing.T) {
	var v Violations
	for _, s := range []string{"https://hooks.example.com/h?kind=run", "https://h.example.com/********"} {
		if got := KeepSecretURL(&v, s, nil, "webhook"); got != s {
			t.Errorf("%q became %q", s, got)
		}
	}
	if len(v) != 0 {
		t.Fatalf("plain URLs refused: %v", v)
	}
	KeepSecretURL(&v, "https://user:********@hooks.example.com/h", nil, "webhook")
	KeepSecretURL(&v, "https://hooks.example.com/h?sig=********", nil, "webhook")
	if len(v) != 2 {
		t.Fatalf("masked URLs with nothing stored: %v", v)
	}
}

func TestHasMasked(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want bool
	}{
		{"nil", nil, false},
		{"plain config", map[string]any{"configurable": map[string]any{"model": "x", "api_key": "sk-real"}}, false},
		{"placeholder under a secret key", map[string]any{"configurable": map[string]any{"api_key": MaskedValue}}, true},
		{"placeholder under a plain key", map[string]any{"configurable": map[string]any{"model": MaskedValue}}, false},
		{"placeholder in a list", map[string]any{"tools": []any{map[string]any{"token": MaskedValue}}}, true},
		{"masked URL", MaskURL("https://user:pass@hooks.example/x"), true},
		{"plain URL", "https://hooks.example/x", false},
	} {
		if got := HasMasked(tc.in); got != tc.want {
			t.Errorf("%s: HasMasked = %v, want %v", tc.name, got, tc.want)
		}
		// HasMasked is the gate of KeepSecrets: where it says no, KeepSecrets changes nothing.
		var v Violations
		if !tc.want {
			if KeepSecrets(&v, tc.in, nil); len(v) != 0 {
				t.Errorf("%s: HasMasked says none, KeepSecrets found %v", tc.name, v)
			}
		}
	}
}
