package graphs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine/graph"
)

func testLookup(k string) (string, bool) {
	v, ok := map[string]string{"HOST": "localhost", "MY_KEY": "sk-test", "EMPTY": ""}[k]
	return v, ok
}

func TestParseConfigValid(t *testing.T) {
	for _, c := range []struct {
		name, conf string
		ids        string // served ids, in order
		check      func(t *testing.T, r *Registry)
	}{
		{"built-in under a new id", `{"graphs": {"my_agent": "agent", "echo": "echo"}}`, "my_agent,echo",
			func(t *testing.T, r *Registry) {
				e, _ := r.Get("my_agent")
				if e.Config["configurable"].(map[string]any)["model_name"] != "openai" {
					t.Errorf("my_agent keeps agent's assistant defaults: %v", e.Config)
				}
			}},
		{"file order kept", `{"graphs": {"z": "echo", "a": "react", "m": "simple_runtime"}, "$schema": "x"}`, "z,a,m",
			func(t *testing.T, r *Registry) {
				e, _ := r.Get("m")
				if e.Context["model"] != "unknown" {
					t.Errorf("m context = %v", e.Context)
				}
			}},
		{"react with settings", `{"graphs": {"assistant": {"template": "react", "description": "Helps.",
			"system_prompt": "Be terse.", "tools": ["echo"], "max_iterations": 2, "model": {"provider": "fake"}}}}`, "assistant",
			func(t *testing.T, r *Registry) {
				e, _ := r.Get("assistant")
				if e.Description != "Helps." {
					t.Errorf("description = %q", e.Description)
				}
				g, _ := r.Build("assistant", graph.Config{})
				res, err := g.Run(context.Background(), graph.RunOptions{ThreadID: "t", Input: human("echo: hi")})
				if err != nil {
					t.Fatal(err)
				}
				wantTexts(t, res.Values, "messages", "echo: hi", "", "hi", "echo: hi")
			}},
		{"openai with a local server and no key", `{"graphs": {"a": {"template": "react",
			"model": {"base_url": "http://localhost:11434/v1", "model": "llama3.2"}}}}`, "a", nil},
		{"openai from env", `{"graphs": {"a": {"template": "react", "model": {"model": "llama3.2", "temperature": 0.5}}},
			"env": {"OPENAI_BASE_URL": "http://${HOST}:11434/v1", "OPENAI_API_KEY": "${MY_KEY}"}}`, "a", nil},
		{"openai key from api_key_env", `{"graphs": {"a": {"template": "react", "model": {"api_key_env": "MY_KEY"}}}}`, "a", nil},
		{"no tools", `{"graphs": {"a": {"template": "react", "tools": []}}}`, "a", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseConfig("graph.json", []byte(c.conf), testLookup)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(r.IDs(), ","); got != c.ids {
				t.Errorf("ids = %s, want %s", got, c.ids)
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

func TestParseConfigInvalid(t *testing.T) {
	known := strings.Join(Default().IDs(), ", ")
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ conf, want string }{
		{`{"graphs": {"assistant": {"template": "foo"}}}`, `graphs.assistant.template: unknown template "foo" (known: react)`},
		{`{"graphs": {"assistant": {"system_prompt": "x"}}}`, `graphs.assistant.template: missing (known: react)`},
		{`{"graphs": {"assistant": {"template": 3}}}`, `graphs.assistant.template: must be a string`},
		{`{"graphs": {"assistant": {"template": "react", "prompt": "x"}}}`, `graphs.assistant.prompt: unknown setting (known: template, description, system_prompt, model, tools, max_iterations)`},
		{`{"graphs": {"a": {"template": "react", "tools": ["calculator", "shell"]}}}`, `graphs.a.tools[1]: unknown tool "shell" (known: calculator, current_time, echo, word_count)`},
		{`{"graphs": {"a": {"template": "react", "tools": ["echo", "echo"]}}}`, `graphs.a.tools[1]: tool "echo" given twice`},
		{`{"graphs": {"a": {"template": "react", "tools": "echo"}}}`, `graphs.a.tools: must be a list of tool names (known: calculator, current_time, echo, word_count)`},
		{`{"graphs": {"a": {"template": "react", "max_iterations": 0}}}`, `graphs.a.max_iterations: must be a whole number from 1 to 10000`},
		{`{"graphs": {"a": {"template": "react", "max_iterations": 2.5}}}`, `graphs.a.max_iterations: must be a whole number from 1 to 10000`},
		{`{"graphs": {"a": {"template": "react", "system_prompt": ""}}}`, `graphs.a.system_prompt: must be a non-empty string`},
		{`{"graphs": {"a": {"template": "react", "model": {"provider": "anthropic"}}}}`, `graphs.a.model.provider: unknown provider "anthropic" (known: fake, openai)`},
		{`{"graphs": {"a": {"template": "react", "model": {"provider": "fake", "model": "x"}}}}`, `graphs.a.model: provider fake takes no other setting`},
		{`{"graphs": {"a": {"template": "react", "model": {"api_key": "sk-123"}}}}`, `graphs.a.model.api_key: unknown setting (known: provider, base_url, model, api_key_env, temperature)`},
		{`{"graphs": {"a": {"template": "react", "model": {"api_key_env": "sk-123"}}}}`, `graphs.a.model.api_key_env: must name an environment variable that holds the key, not hold the key`},
		{`{"graphs": {"a": {"template": "react", "model": {"api_key_env": "UNSET_KEY"}}}}`, `graphs.a.model.api_key_env: environment variable UNSET_KEY is not set`},
		{`{"graphs": {"a": {"template": "react", "model": {"model": "gpt-4o"}}}}`, `graphs.a.model: no API key is configured for the OpenAI API (set OPENAI_API_KEY)`},
		{`{"graphs": {"a": {"template": "react", "model": {"base_url": "http://${HOST}:11434/v1"}}}}`, `graphs.a.model: the base URL must be an http or https URL`},
		{`{"graphs": {"a": {"template": "react", "model": {"temperature": 3}}}}`, `graphs.a.model.temperature: must be a number from 0 to 2`},
		{`{"graphs": {"a": {"template": "react", "model": "gpt-4o"}}}`, `graphs.a.model: must be an object`},
		{`{"graphs": {"my_agent": "agnet"}}`, `graphs.my_agent: unknown graph "agnet" (known: ` + known + `)`},
		{`{"graphs": {"agent": "./src/agent.py:graph"}}`, `graphs.agent: "./src/agent.py:graph": no file ` + filepath.Join(cwd, "src", "agent.py")},
		{`{"graphs": {"agent": "./src/agent.ts:graph"}}`, `graphs.agent: "./src/agent.ts:graph": no file ` + filepath.Join(cwd, "src", "agent.ts")},
		{`{"graphs": {"agent": "./src/agent.py:"}}`, `graphs.agent: "./src/agent.py:": "" is not an attribute name (write ./path/file.py:attribute)`},
		{`{"graphs": {"agent": "./src/agent.py"}}`, `graphs.agent: "./src/agent.py" names no attribute: write ./path/file.py:attribute (the compiled graph or a function that makes it)`},
		{`{"graphs": {"agent": "my-pkg/agent:graph"}}`, `graphs.agent: "my-pkg/agent:graph" must be ./path/file.py:attribute or package.module:attribute`},
		{`{"graphs": {"a": 3}}`, `graphs.a: must be a built-in graph's name or an object with a template`},
		{`{"graphs": {"a b": "echo"}}`, `graphs.a b: a graph id must be letters, digits, '_', '-' or '.', starting with a letter or digit, at most 128 characters`},
		{`{"graphs": {"a": "echo", "a": "agent"}}`, `graphs.a: given twice`},
		{`{"graphs": {}}`, `graphs: empty: name at least one graph`},
		{`{"graphs": []}`, `graphs: must be an object`},
		{`{"env": {}}`, `graphs: missing: name at least one graph`},
		{`{"graphs": {"a": "echo"}, "env": [".env"]}`, `env: must be an object`},
		{`{"graphs": {"a": "echo"}, "env": {"OPENAI_API_KEY": "sk-123"}}`, `env.OPENAI_API_KEY: keep secrets out of graph.json: write "${OPENAI_API_KEY}" to take the value from the process environment`},
		{`{"graphs": {"a": "echo"}, "env": {"URL": "http://${NOPE}/v1"}}`, `env.URL: ${NOPE} is not set in the environment`},
		{`{"graphs": {"a": "echo"}, "env": {"URL": "${a b}"}}`, `env.URL: ${a b} is not a valid variable reference`},
		{`{"graphs": {"a": "echo"}, "env": {"URL": 3}}`, `env.URL: must be a string`},
		{`{"graphs": {"a": "echo"}, "env": {"1X": "y"}}`, `env.1X: not a valid environment variable name`},
		{"{\n  \"graphs\": {\n    \"a\": \"echo\",\n  }\n}", `invalid JSON at line 4, column 3: invalid character '}' looking for beginning of object key string`},
		{`{"graphs": {"a": "echo"}`, `invalid JSON at line 1, column 24: unexpected end of JSON input`},
		{`{"graphs": {"a": "echo"}} {}`, `invalid JSON at line 1, column 27: invalid character '{' after top-level value`},
		{`[]`, `must be an object`},
	} {
		_, err := ParseConfig("graph.json", []byte(c.conf), testLookup)
		if err == nil {
			t.Errorf("%s: accepted", c.conf)
			continue
		}
		if got := strings.TrimPrefix(err.Error(), "graph.json: "); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.conf, got, c.want)
		}
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "graph.json")
	if _, err := LoadConfig(path); err == nil || err.Error() != path+": no such file or directory" {
		t.Errorf("missing file: %v", err)
	}
	if err := os.WriteFile(path, []byte(`{"graphs": {"bot": {"template": "react"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := LoadConfig(path)
	if err != nil || strings.Join(r.IDs(), ",") != "bot" {
		t.Fatalf("%v %v", r, err)
	}
	if err := os.WriteFile(path, []byte(`{"graphs": {"bot": {"template": "rect"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path); err == nil || err.Error() != path+`: graphs.bot.template: unknown template "rect" (known: react)` {
		t.Errorf("invalid file: %v", err)
	}
}
