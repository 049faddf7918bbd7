package cli

import (
	"strings"
	"testing"
)

// TestStoreIndexFlags: --store-embed and its companions give the index they name, and refuse
// what they cannot serve with the flag named.
func TestStoreIndexFlags(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("TEST_EMBED_KEY", "sk-x")
	for _, tc := range []struct {
		opts     storeOptions
		wantName string // "" for no index
		fields   string
		err      string
	}{
		{storeOptions{embed: "local", fields: "$"}, "local:256", "$", ""},
		{storeOptions{embed: "local", dims: 64, fields: "title, body.text"}, "local:64", "title,body.text", ""},
		{storeOptions{embed: "none", fields: "$"}, "", "", ""},
		{storeOptions{embed: "openai:text-embedding-3-small", url: "http://localhost:11434/v1", fields: "$"}, "openai:text-embedding-3-small", "$", ""},
		{storeOptions{embed: "openai:m", dims: 512, keyEnv: "TEST_EMBED_KEY", fields: "$"}, "openai:m:512", "$", ""},
		{storeOptions{embed: "openai:m", keyEnv: "NO_SUCH_KEY_VAR", fields: "$"}, "", "", "no API key"},
		{storeOptions{embed: "openai:", fields: "$"}, "", "", "--store-embed"},
		{storeOptions{embed: "cohere", fields: "$"}, "", "", "want local, none or openai:<model>"},
		{storeOptions{embed: "local", dims: -1}, "", "", "--store-embed-dims"},
		{storeOptions{embed: "openai:m", url: "ftp://x"}, "", "", "http or https"},
	} {
		ix, err := tc.opts.index()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: err = %v, want %q", tc.opts, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc.opts, err)
			continue
		}
		if tc.wantName == "" {
			if ix != nil {
				t.Errorf("%+v: an index, want none", tc.opts)
			}
			continue
		}
		if ix == nil || ix.Embedder.Name() != tc.wantName || strings.Join(ix.Fields, ",") != tc.fields {
			t.Errorf("%+v: index %+v, want %s on %s", tc.opts, ix, tc.wantName, tc.fields)
		}
	}
}
