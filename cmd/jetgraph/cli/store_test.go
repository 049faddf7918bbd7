package cli

import (
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine/graphs"
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
		{storeOptions{fields: "$"}, "local:256", "$", ""}, // not given: local
	} {
		ix, err := tc.opts.index(nil, "")
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

// TestStoreIndexFromConfig: langgraph.json's store.index gives the index unless --store-embed is
// given; its embeddings key and server come from the file's env over the process's, and one it
// cannot serve is an error naming the entry.
func TestStoreIndexFromConfig(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_KEY", "")
	openaiIx := &graphs.StoreIndex{Provider: graphs.EmbedOpenAI, Model: "text-embedding-3-small", Dims: 512, Fields: []string{"text"}}
	for _, tc := range []struct {
		name     string
		opts     storeOptions
		proj     *graphs.Project
		wantName string
		fields   string
		err      string
	}{
		{"config's index", storeOptions{keyEnv: "OPENAI_API_KEY", fields: "$"},
			&graphs.Project{StoreIndex: openaiIx, Env: map[string]string{"OPENAI_API_KEY": "sk-from-env-file"}},
			"openai:text-embedding-3-small:512", "text", ""},
		{"config's index on a local server", storeOptions{keyEnv: "OPENAI_API_KEY", fields: "$"},
			&graphs.Project{StoreIndex: openaiIx, Env: map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}},
			"openai:text-embedding-3-small:512", "text", ""},
		{"config's local index", storeOptions{fields: "$"},
			&graphs.Project{StoreIndex: &graphs.StoreIndex{Provider: graphs.EmbedLocal, Dims: 32}}, "local:32", "", ""},
		{"the flag wins", storeOptions{embed: "local", dims: 16, fields: "$"},
			&graphs.Project{StoreIndex: openaiIx}, "local:16", "$", ""},
		{"no key for OpenAI's API", storeOptions{keyEnv: "OPENAI_API_KEY", fields: "$"},
			&graphs.Project{StoreIndex: openaiIx}, "", "", "langgraph.json: store.index: no API key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix, err := tc.opts.index(tc.proj, "langgraph.json")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ix == nil || ix.Embedder.Name() != tc.wantName || strings.Join(ix.Fields, ",") != tc.fields {
				t.Errorf("index %+v, want %s on %q", ix, tc.wantName, tc.fields)
			}
		})
	}
}
