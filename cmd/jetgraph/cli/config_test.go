package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigCheck checks `config check`: a valid graph.json prints the graphs it serves, an
// invalid one is an error naming the key and the reason, as serve would refuse it.
func TestConfigCheck(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	for _, c := range []struct {
		name, config, wantOut, wantErr string
	}{
		{"built-in and template", `{"graphs": {"mine": "echo", "bot": {"template": "react"}}}`, "mine\nbot\n", ""},
		{"unknown graph", `{"graphs": {"mine": "nope"}}`, "", `graphs.mine: unknown graph "nope"`},
		{"not json", `{"graphs": `, "", "graph.json"},
		{"no file", "", "", "--config is required"},
		{"langgraph.json's keys", `{"graphs": {"mine": "echo"}, "dependencies": ["."], "store": {"index": {"embed": "local", "dims": 32}},
			"checkpointer": {"ttl": {"strategy": "delete", "default_ttl": 60}}}`, "mine\n", ""},
		{"an embeddings provider not served", `{"graphs": {"mine": "echo"}, "store": {"index": {"embed": "cohere:embed-english-v3.0"}}}`,
			"", `store.index.embed: "cohere:embed-english-v3.0": jetgraph cannot serve the embeddings of "cohere"`},
		{"OpenAI's embeddings without a key", `{"graphs": {"mine": "echo"}, "store": {"index": {"embed": "openai:text-embedding-3-small"}}}`,
			"", `store.index: no API key is configured for the OpenAI API (set OPENAI_API_KEY)`},
		{"a .env file missing", `{"graphs": {"mine": "echo"}, "env": ".env"}`, "", `env: ".env": no .env file`},
		{"a thread TTL strategy not served", `{"graphs": {"mine": "echo"}, "checkpointer": {"ttl": {"strategy": "keep_latest"}}}`,
			"", `checkpointer.ttl.strategy: "keep_latest" is not served by jetgraph`},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"config", "check"}
			if c.config != "" {
				file := filepath.Join(t.TempDir(), "graph.json")
				if err := os.WriteFile(file, []byte(c.config), 0o644); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", file)
			}
			stdout, stderr, err := run(t, Program{}, args...)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || stderr == "" {
					t.Fatalf("err = %v, stderr %q; want %q", err, stderr, c.wantErr)
				}
				return
			}
			if err != nil || stdout != c.wantOut {
				t.Fatalf("stdout %q, err %v; want %q", stdout, err, c.wantOut)
			}
		})
	}
}
