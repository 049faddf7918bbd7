package graphs

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// A langgraph.json, as users of the LangGraph libraries write it, is a graph.json too: besides
// built-in graphs and templates, a "graphs" entry may name code, "./path/file.py:attr" or
// "package.module:attr", which a Python host runs with the user's own langgraph (see
// engine/hosting). Keys of langgraph.json that a local jetgraph does not act on are warnings.

var (
	pythonModulePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	attrPattern         = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// code reads an entry that names code ("./src/agent.py:graph").
func (c *configParser) code(key, spec string) (Entry, error) {
	where, attr, _ := strings.Cut(spec, ":")
	if i := strings.LastIndex(spec, ":"); i >= 0 {
		where, attr = spec[:i], spec[i+1:]
	}
	if !attrPattern.MatchString(attr) {
		return Entry{}, c.fail(key, "%q: %q is not an attribute name (write ./path/file.py:attribute)", spec, attr)
	}
	root := c.root()
	code := &Code{Language: LanguagePython, Attr: attr, Root: root, Env: maps.Clone(c.env), Dependencies: c.deps}
	switch ext := filepath.Ext(where); {
	case ext == ".ts" || ext == ".mts" || ext == ".cts" || ext == ".js" || ext == ".mjs" || ext == ".cjs" || ext == ".py":
		if ext != ".py" {
			code.Language = LanguageTypeScript
		}
		path := where
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.IsDir() {
			return Entry{}, c.fail(key, "%q: no file %s", spec, path)
		}
		code.Path = path
	case pythonModulePattern.MatchString(where):
		code.Path = where // a module of the user's installed packages, found by the host
	default:
		return Entry{}, c.fail(key, "%q must be ./path/file.py:attribute or package.module:attribute", spec)
	}
	if code.Language == LanguageTypeScript {
		return Entry{Code: code, Description: "TypeScript graph " + spec}, nil
	}
	return Entry{Code: code, Description: "Python graph " + spec}, nil
}

// langgraphKeys are the top-level keys of langgraph.json that a local jetgraph recognises but
// does not act on: the user's environment already has the runtimes, and the rest is not served
// yet. (dependencies, env, store and checkpointer are read: see ParseProject.)
var langgraphKeys = map[string]string{
	"python_version":   "",
	"node_version":     "",
	"pip_installer":    "",
	"base_image":       "",
	"image_distro":     "",
	"dockerfile_lines": "",
	"api_version":      "",
	"ui":               "not supported yet, ignored",
	"webhooks":         "not supported yet, ignored",
}

// topLevel handles a key of the file besides graphs and env: nothing for the keys of
// langgraph.json that need nothing locally, a warning naming the key for the others.
func (c *configParser) topLevel(key string) {
	note, known := langgraphKeys[key]
	switch {
	case known && note == "":
	case known:
		c.warn(key + ": " + note)
	default:
		c.warn(key + ": unknown key, ignored (known: graphs, env, and langgraph.json's)")
	}
}

// warn reports a warning about the file.
func (c *configParser) warn(msg string) {
	if c.onWarn != nil {
		c.onWarn(c.file + ": " + msg)
	}
}
