package graphs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine/goldentest"
)

// The keys of langgraph.json beside its graphs (env as a .env file, store.index,
// checkpointer.ttl, dependencies), each read from a project on disk: what the file says, its
// warnings, or the error naming the entry, against testdata/langgraph/<case>.golden.json.
func TestLanggraphKeys(t *testing.T) {
	const agent = "graph = None\n"
	t.Setenv("JG_TEST_PROCESS_HOST", "example.org \"$x\"") // a ${VAR} of the process's, read back as it is
	t.Setenv("BASE", "the file's own BASE wins")
	for _, c := range []struct {
		name  string
		files map[string]string // the project: langgraph.json and the files it names
	}{
		{"env_file", map[string]string{
			"langgraph.json": `{"graphs": {"agent": "./src/agent.py:graph"}, "env": ".env"}`,
			"src/agent.py":   agent,
			".env": "# the project's secrets\nOPENAI_API_KEY=sk-test-123\nexport BASE=http://localhost:11434\n" +
				"URL=\"${BASE}/v1\"\nQUOTED='a # b'\nEMPTY=\nMULTI=\"one\\ntwo\"  # a comment\n" +
				"FROM_PROCESS=https://${JG_TEST_PROCESS_HOST}/v1\nUNSET=${JG_TEST_UNSET}\n",
		}},
		{"env_file_in_folder", map[string]string{
			"langgraph.json": `{"graphs": {"r": {"template": "react", "model": {"model": "m"}}}, "env": "./config/dev.env"}`,
			"config/dev.env": "OPENAI_BASE_URL=http://localhost:11434/v1\n",
		}},
		{"env_file_missing", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "env": ".env"}`,
		}},
		{"env_file_a_folder", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "env": "config"}`,
			"config/x":       "",
		}},
		{"env_file_unterminated_quote", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "env": ".env"}`,
			".env":           "A=1\nOPENAI_API_KEY=\"sk-secret-never-shown\n",
		}},
		{"env_file_not_a_variable", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "env": ".env"}`,
			".env":           "A=1\nsk-secret-never-shown\n",
		}},
		{"env_file_bad_name", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "env": ".env"}`,
			".env":           "my.var=1\n",
		}},
		{"store_index_openai", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "store": {"index": {"embed": "openai:text-embedding-3-small", "dims": 1536, "fields": ["text", "metadata.title"]}}}`,
		}},
		{"store_index_local", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "store": {"index": {"embed": "local", "dims": 64}, "ttl": {"default_ttl": 5}, "path": "./store.py:make"}}`,
		}},
		{"store_index_provider_not_served", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "store": {"index": {"embed": "cohere:embed-english-v3.0", "dims": 1024}}}`,
		}},
		{"store_index_code", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "store": {"index": {"embed": "./src/embed.py:embed", "dims": 8}}}`,
		}},
		{"store_index_no_embed", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "store": {"index": {"dims": 8}}}`,
		}},
		{"store_index_bad_dims", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "store": {"index": {"embed": "openai:m", "dims": 0}}}`,
		}},
		{"store_index_bad_fields", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "store": {"index": {"embed": "openai:m", "fields": ["text", ""]}}}`,
		}},
		{"checkpointer_ttl", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "checkpointer": {"ttl": {"strategy": "delete", "sweep_interval_minutes": 10, "default_ttl": 60, "sweep_limit": 100}}}`,
		}},
		{"checkpointer_ttl_keep_latest", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "checkpointer": {"ttl": {"strategy": "keep_latest", "default_ttl": 60}}}`,
		}},
		{"checkpointer_ttl_bad_default", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "checkpointer": {"ttl": {"default_ttl": -1}}}`,
		}},
		{"checkpointer_other_keys", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "checkpointer": {"backend": "mongo", "serde": {}}}`,
		}},
		{"dependencies", map[string]string{
			"langgraph.json": `{"graphs": {"agent": "./src/agent.py:graph"}, "dependencies": [".", "./libs/tools", "langchain-openai"]}`,
			"src/agent.py":   agent,
			"libs/tools/x":   "",
		}},
		{"dependencies_missing", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "dependencies": [".", "./nope"]}`,
		}},
		{"dependencies_a_file", map[string]string{
			"langgraph.json": `{"graphs": {"agent": "./src/agent.py:graph"}, "dependencies": ["./src/agent.py"]}`,
			"src/agent.py":   agent,
		}},
		{"dependencies_not_a_list", map[string]string{
			"langgraph.json": `{"graphs": {"a": "echo"}, "dependencies": "."}`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range c.files {
				path := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			file := filepath.Join(dir, "langgraph.json")
			rel := func(s string) string { return strings.ReplaceAll(s, dir, "$PROJECT") }
			got := map[string]any{}
			var warnings []string
			proj, err := Catalog{Warn: func(m string) { warnings = append(warnings, rel(m)) }}.LoadProject(file)
			if err != nil {
				got["error"] = rel(err.Error())
				if strings.Contains(err.Error(), "sk-secret") {
					t.Errorf("the error shows the .env file's secret: %v", err)
				}
			} else {
				got["graphs"] = proj.Graphs.IDs()
				got["env"] = proj.Env
				got["store_index"] = proj.StoreIndex
				got["thread_ttl"] = proj.ThreadTTL
				hosted := map[string]any{}
				for _, e := range proj.Graphs.Hosted() {
					var deps []string
					for _, d := range e.Code.Dependencies {
						deps = append(deps, rel(d))
					}
					hosted[e.ID] = map[string]any{"env": e.Code.Env, "dependencies": deps}
				}
				got["hosted"] = hosted
			}
			got["warnings"] = warnings
			goldentest.JSON(t, filepath.Join("testdata", "langgraph", c.name+".golden.json"), got)
		})
	}
}
