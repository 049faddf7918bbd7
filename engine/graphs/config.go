package graphs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/model"
)

// A graph.json says which graphs a process serves:
//
//	{
//	  "graphs": {
//	    "my_agent": "agent",
//	    "assistant": {
//	      "template": "react",
//	      "description": "Answers with tools",
//	      "system_prompt": "You are terse.",
//	      "model": {"provider": "openai", "base_url": "http://localhost:11434/v1",
//	                "model": "llama3.2", "api_key_env": "OLLAMA_API_KEY", "temperature": 0},
//	      "tools": ["calculator", "current_time"],
//	      "max_iterations": 8
//	    }
//	  },
//	  "env": {"OPENAI_BASE_URL": "http://localhost:11434/v1", "OPENAI_API_KEY": "${OLLAMA_KEY}"}
//	}
//
// Each key of "graphs" is a graph id, served in file order. A string value names a built-in
// graph (an example graph, or "react") served under the new id with its system assistant's
// defaults. An object value picks a template ("react", see NewReact) with settings; unknown
// settings are rejected. "model" defaults to the offline fake model; given, its provider
// defaults to "openai" (any server that speaks the chat completions API): base_url and model
// override OPENAI_BASE_URL and JETGRAPH_MODEL / OPENAI_MODEL, and the API key is read from the
// environment variable api_key_env names (default OPENAI_API_KEY): never from the file.
// "tools" defaults to every built-in tool.
//
// "env" sets variables for the model settings only (the process environment is left alone): a
// variable set there wins over the process's. A value may refer to process variables as
// ${NAME}; a variable that is not set is an error. Variables whose name ends in KEY, TOKEN,
// SECRET or PASSWORD must be such references, so that secrets stay out of the file. "env" may
// instead name a .env file (a path from the config's folder, as langgraph.json's does), whose
// variables are set the same way, secrets included: that file is where they belong. Hosted
// graphs run with these variables over the process's. "$schema" is ignored.

// ConfigError is an invalid graph.json: the file, the key (a path such as
// "graphs.assistant.template") and the reason.
type ConfigError struct {
	File, Key, Reason string
}

func (e *ConfigError) Error() string {
	if e.Key == "" {
		return e.File + ": " + e.Reason
	}
	return e.File + ": " + e.Key + ": " + e.Reason
}

// Templates lists the graph templates a graph.json may use.
func Templates() []string { return []string{"react"} }

// Catalog is what a graph.json may name: the graphs a string entry serves under a new id, and
// the tools a react entry lists. A program built on jetgraph with graphs and tools of its own
// (see cmd/jetgraph/cli) puts them here, so that its users' graph.json can name them.
type Catalog struct {
	// Graphs are the graphs a string entry may name; nil means Default().
	Graphs *Registry
	// Tools are the tools a react entry's "tools" may name besides the built-in ones (which
	// they replace when a name is the same). A react entry without "tools" gets the built-in
	// ones only.
	Tools []Tool
	// Warn, when set, receives the file's warnings (keys that are ignored), each naming the key.
	Warn func(string)
}

// LoadConfig reads a graph.json and returns the registry it describes, naming the default
// catalog (the example graphs, react and the built-in tools).
func LoadConfig(path string) (*Registry, error) { return Catalog{}.Load(path) }

// ParseConfig is LoadConfig on the content of file, reading the process environment through
// lookupEnv.
func ParseConfig(file string, raw []byte, lookupEnv func(string) (string, bool)) (*Registry, error) {
	return Catalog{}.Parse(file, raw, lookupEnv)
}

// Load is LoadConfig with the graphs and tools of cat.
func (cat Catalog) Load(path string) (*Registry, error) {
	p, err := cat.LoadProject(path)
	if err != nil {
		return nil, err
	}
	return p.Graphs, nil
}

// Parse is ParseConfig with the graphs and tools of cat.
func (cat Catalog) Parse(file string, raw []byte, lookupEnv func(string) (string, bool)) (*Registry, error) {
	p, err := cat.ParseProject(file, raw, lookupEnv)
	if err != nil {
		return nil, err
	}
	return p.Graphs, nil
}

// LoadProject is Load, with what the file says of the server besides its graphs.
func (cat Catalog) LoadProject(path string) (*Project, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, &ConfigError{File: path, Reason: errors.Unwrap(err).Error()}
	}
	return cat.ParseProject(path, raw, os.LookupEnv)
}

// ParseProject is Parse, with what the file says of the server besides its graphs.
func (cat Catalog) ParseProject(file string, raw []byte, lookupEnv func(string) (string, bool)) (*Project, error) {
	c := &configParser{file: file, lookup: lookupEnv, env: map[string]string{}, tools: map[string]Tool{}, onWarn: cat.Warn}
	for _, t := range BuiltinTools() {
		c.tools[t.Name] = t
	}
	for _, t := range cat.Tools {
		c.tools[t.Name] = t
	}
	if err := c.checkSyntax(raw); err != nil {
		return nil, err
	}
	top, err := c.object("", raw)
	if err != nil {
		return nil, err
	}
	proj := &Project{}
	var graphsRaw, httpRaw, authRaw json.RawMessage
	for _, kv := range top {
		switch kv.key {
		case "graphs":
			graphsRaw = kv.value
		case "env":
			var envFile string
			if json.Unmarshal(kv.value, &envFile) == nil {
				vars, err := c.readEnvFile(envFile)
				if err != nil {
					return nil, err
				}
				maps.Copy(c.env, vars)
				continue
			}
			if err := c.parseEnv(kv.value); err != nil {
				return nil, err
			}
		case "dependencies":
			if c.deps, err = c.dependencies(kv.value); err != nil {
				return nil, err
			}
		case "store":
			if proj.StoreIndex, err = c.store(kv.value); err != nil {
				return nil, err
			}
		case "checkpointer":
			if proj.ThreadTTL, err = c.checkpointer(kv.value); err != nil {
				return nil, err
			}
		case "http":
			httpRaw = kv.value // read once env and dependencies are known: its app is code
		case "auth":
			authRaw = kv.value // its path is code, like http.app
		case "$schema":
		default:
			c.topLevel(kv.key)
		}
	}
	if graphsRaw == nil {
		return nil, c.fail("graphs", "missing: name at least one graph")
	}
	if httpRaw != nil {
		if proj.HTTP, err = c.httpConfig(httpRaw); err != nil {
			return nil, err
		}
	}
	if authRaw != nil {
		if proj.Auth, err = c.authConfig(authRaw); err != nil {
			return nil, err
		}
	}
	entries, err := c.object("graphs", graphsRaw)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, c.fail("graphs", "empty: name at least one graph")
	}
	builtins := cat.Graphs
	if builtins == nil {
		builtins = Default()
	}
	reg := NewRegistry()
	for _, kv := range entries {
		key := "graphs." + kv.key
		if !graphIDPattern.MatchString(kv.key) {
			return nil, c.fail(key, "a graph id must be letters, digits, '_', '-' or '.', starting with a letter or digit, at most 128 characters")
		}
		e, err := c.graph(key, kv.value, builtins)
		if err != nil {
			return nil, err
		}
		e.ID = kv.key
		if err := reg.Register(e); err != nil {
			return nil, c.fail(key, "%s", err.Error())
		}
	}
	proj.Graphs, proj.Env = reg, maps.Clone(c.env)
	return proj, nil
}

var (
	graphIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)
	envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	envRefPattern  = regexp.MustCompile(`\$\{([^}]*)\}`)
	secretPattern  = regexp.MustCompile(`(?i)(KEY|TOKEN|SECRET|PASSWORD)$`)
)

type configParser struct {
	file   string
	lookup func(string) (string, bool)
	env    map[string]string
	tools  map[string]Tool // by name: what a react entry's "tools" may name
	deps   []string        // the local folders of "dependencies", absolute
	onWarn func(string)
}

func (c *configParser) fail(key, format string, args ...any) error {
	return &ConfigError{File: c.file, Key: key, Reason: fmt.Sprintf(format, args...)}
}

// getenv reads a variable for the model settings: graph.json's env first, then the process's.
func (c *configParser) getenv(name string) string {
	if v, ok := c.env[name]; ok {
		return v
	}
	v, _ := c.lookup(name)
	return v
}

type keyValue struct {
	key   string
	value json.RawMessage
}

// object reads a JSON object keeping its key order; a duplicate key is an error.
func (c *configParser) object(key string, raw json.RawMessage) ([]keyValue, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, c.fail(key, "invalid JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, c.fail(key, "must be an object")
	}
	var out []keyValue
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, c.fail(key, "invalid JSON: %v", err)
		}
		k := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, c.fail(key, "invalid JSON: %v", err)
		}
		if seen[k] {
			return nil, c.fail(join(key, k), "given twice")
		}
		seen[k] = true
		out = append(out, keyValue{k, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, c.fail(key, "invalid JSON: %v", err)
	}
	return out, nil
}

// checkSyntax reports a JSON syntax error of the whole file with its line and column.
func (c *configParser) checkSyntax(raw []byte) error {
	var v any
	err := json.Unmarshal(raw, &v)
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se) && se.Offset > 0 && se.Offset <= int64(len(raw)):
		pos := se.Offset - 1 // the offending byte
		line := 1 + bytes.Count(raw[:pos], []byte("\n"))
		col := pos - int64(bytes.LastIndexByte(raw[:pos], '\n'))
		return c.fail("", "invalid JSON at line %d, column %d: %v", line, col, err)
	}
	return c.fail("", "invalid JSON: %v", err)
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func (c *configParser) parseEnv(raw json.RawMessage) error {
	kvs, err := c.object("env", raw)
	if err != nil {
		return err
	}
	for _, kv := range kvs {
		key := "env." + kv.key
		if !envNamePattern.MatchString(kv.key) {
			return c.fail(key, "not a valid environment variable name")
		}
		var v string
		if err := json.Unmarshal(kv.value, &v); err != nil {
			return c.fail(key, "must be a string")
		}
		refs := envRefPattern.FindAllStringSubmatch(v, -1)
		if secretPattern.MatchString(kv.key) && v != "" && len(refs) == 0 {
			return c.fail(key, "keep secrets out of graph.json: write \"${%s}\" to take the value from the process environment", kv.key)
		}
		var missing string
		v = envRefPattern.ReplaceAllStringFunc(v, func(ref string) string {
			name := ref[2 : len(ref)-1]
			val, ok := c.lookup(name)
			if (!ok || !envNamePattern.MatchString(name)) && missing == "" {
				missing = name
			}
			return val
		})
		if missing != "" {
			if !envNamePattern.MatchString(missing) {
				return c.fail(key, "${%s} is not a valid variable reference", missing)
			}
			return c.fail(key, "${%s} is not set in the environment", missing)
		}
		c.env[kv.key] = v
	}
	return nil
}

// graph reads one entry of "graphs": a built-in graph's name or a template object.
func (c *configParser) graph(key string, raw json.RawMessage, builtins *Registry) (Entry, error) {
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		e, ok := builtins.Get(name)
		switch {
		case ok:
			e.Config, e.Context = engine.CloneMap(e.Config), engine.CloneMap(e.Context)
			return e, nil
		case strings.Contains(name, ":"):
			return c.code(key, name)
		case strings.ContainsAny(name, "/\\"):
			return Entry{}, c.fail(key, "%q names no attribute: write ./path/file.py:attribute (the compiled graph or a function that makes it)", name)
		}
		return Entry{}, c.fail(key, "unknown graph %q (known: %s)", name, strings.Join(builtins.IDs(), ", "))
	}
	kvs, err := c.object(key, raw)
	if err != nil {
		return Entry{}, c.fail(key, "must be a built-in graph's name or an object with a template")
	}
	settings := map[string]json.RawMessage{}
	for _, kv := range kvs {
		settings[kv.key] = kv.value
	}
	tmpl, ok := settings["template"]
	if !ok {
		return Entry{}, c.fail(key+".template", "missing (known: %s)", strings.Join(Templates(), ", "))
	}
	if err := json.Unmarshal(tmpl, &name); err != nil {
		return Entry{}, c.fail(key+".template", "must be a string")
	}
	if name != "react" {
		return Entry{}, c.fail(key+".template", "unknown template %q (known: %s)", name, strings.Join(Templates(), ", "))
	}
	return c.react(key, kvs)
}

var reactKeys = []string{"template", "description", "system_prompt", "model", "tools", "max_iterations"}

// react reads the settings of a react template entry.
func (c *configParser) react(key string, kvs []keyValue) (Entry, error) {
	s := ReactSettings{Name: strings.TrimPrefix(key, "graphs.")}
	e := Entry{Description: reactDescription}
	for _, kv := range kvs {
		k := key + "." + kv.key
		switch kv.key {
		case "template":
		case "description":
			if err := json.Unmarshal(kv.value, &e.Description); err != nil {
				return Entry{}, c.fail(k, "must be a string")
			}
		case "system_prompt":
			if err := json.Unmarshal(kv.value, &s.SystemPrompt); err != nil || strings.TrimSpace(s.SystemPrompt) == "" {
				return Entry{}, c.fail(k, "must be a non-empty string")
			}
		case "max_iterations":
			var f float64
			if err := json.Unmarshal(kv.value, &f); err != nil || f != math.Trunc(f) || f < 1 || f > 10000 {
				return Entry{}, c.fail(k, "must be a whole number from 1 to 10000")
			}
			s.MaxIterations = int(f)
		case "tools":
			var names []string
			if err := json.Unmarshal(kv.value, &names); err != nil {
				return Entry{}, c.fail(k, "must be a list of tool names (known: %s)", c.toolNames())
			}
			s.Tools = []Tool{}
			for i, n := range names {
				t, ok := c.tools[n]
				if !ok {
					return Entry{}, c.fail(fmt.Sprintf("%s[%d]", k, i), "unknown tool %q (known: %s)", n, c.toolNames())
				}
				if slices.Index(names, n) != i {
					return Entry{}, c.fail(fmt.Sprintf("%s[%d]", k, i), "tool %q given twice", n)
				}
				s.Tools = append(s.Tools, t)
			}
		case "model":
			m, err := c.model(k, kv.value)
			if err != nil {
				return Entry{}, err
			}
			s.Model = m
		default:
			return Entry{}, c.fail(k, "unknown setting (known: %s)", strings.Join(reactKeys, ", "))
		}
	}
	g, err := NewReact(s)
	if err != nil {
		return Entry{}, c.fail(key, "%v", err)
	}
	e.Build = Static(g)
	return e, nil
}

// toolNames lists the tools a react entry may name, sorted.
func (c *configParser) toolNames() string {
	names := slices.Sorted(maps.Keys(c.tools))
	return strings.Join(names, ", ")
}

var modelKeys = []string{"provider", "base_url", "model", "api_key_env", "temperature"}

// model reads a react entry's model settings; nil means the offline fake.
func (c *configParser) model(key string, raw json.RawMessage) (model.ChatModel, error) {
	kvs, err := c.object(key, raw)
	if err != nil {
		return nil, err
	}
	provider := "openai"
	str := map[string]string{}
	cfg := model.ConfigFromEnv(c.getenv)
	for _, kv := range kvs {
		k := key + "." + kv.key
		switch kv.key {
		case "provider", "base_url", "model", "api_key_env":
			var v string
			if err := json.Unmarshal(kv.value, &v); err != nil || strings.TrimSpace(v) == "" {
				return nil, c.fail(k, "must be a non-empty string")
			}
			str[kv.key] = strings.TrimSpace(v)
		case "temperature":
			var t float64
			if err := json.Unmarshal(kv.value, &t); err != nil || t < 0 || t > 2 {
				return nil, c.fail(k, "must be a number from 0 to 2")
			}
			cfg.Temperature = &t
		default:
			return nil, c.fail(k, "unknown setting (known: %s)", strings.Join(modelKeys, ", "))
		}
	}
	if p, ok := str["provider"]; ok {
		provider = p
	}
	switch provider {
	case "fake":
		if len(kvs) > 1 {
			return nil, c.fail(key, "provider fake takes no other setting")
		}
		return nil, nil
	case "openai":
	default:
		return nil, c.fail(key+".provider", "unknown provider %q (known: fake, openai)", provider)
	}
	if v, ok := str["base_url"]; ok {
		cfg.BaseURL = v
	}
	if v, ok := str["model"]; ok {
		cfg.Model = v
	}
	if name, ok := str["api_key_env"]; ok {
		if !envNamePattern.MatchString(name) {
			return nil, c.fail(key+".api_key_env", "must name an environment variable that holds the key, not hold the key")
		}
		if cfg.APIKey = strings.TrimSpace(c.getenv(name)); cfg.APIKey == "" {
			return nil, c.fail(key+".api_key_env", "environment variable %s is not set", name)
		}
	}
	m, err := model.NewOpenAI(cfg)
	if err != nil {
		var ee *engine.Error
		if errors.As(err, &ee) && ee.Detail != "" {
			return nil, c.fail(key, "%s", ee.Detail)
		}
		return nil, c.fail(key, "%v", err)
	}
	return m, nil
}
