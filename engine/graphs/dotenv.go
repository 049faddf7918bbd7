package graphs

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/joho/godotenv"
)

// MaxEnvFileBytes bounds a .env file that langgraph.json's "env" names: it holds variables, not
// data.
const MaxEnvFileBytes = 1 << 20

// readEnvFile reads the .env file of langgraph.json's "env" (a path from the config's folder, as
// the reference servers read it from the project's): its variables, for the hosted graphs' and
// the model settings' environment.
func (c *configParser) readEnvFile(name string) (map[string]string, error) {
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(c.file), path)
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, c.fail("env", "%q: no .env file %s", name, path)
	case fi.IsDir():
		return nil, c.fail("env", "%q: %s is a folder, not a .env file", name, path)
	case fi.Size() > MaxEnvFileBytes:
		return nil, c.fail("env", "%q: %s is %d bytes, over the limit of %d (MaxEnvFileBytes) for a .env file", name, path, fi.Size(), MaxEnvFileBytes)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, c.fail("env", "%q: %v", name, errors.Unwrap(err))
	}
	vars, err := parseDotEnv(raw, c.lookup)
	if err != nil {
		return nil, c.fail("env", "%q: %v", name, err)
	}
	return vars, nil
}

// parseDotEnv reads the variables of a .env file (KEY=value, "export KEY=value", comments,
// single and double quotes) with godotenv. A ${KEY} is a variable set above in the file, else
// the process's (lookup), as the Python reference reads the file (python-dotenv); one set
// nowhere is empty. Its errors never quote the file: a .env file holds secrets.
func parseDotEnv(raw []byte, lookup func(string) (string, bool)) (map[string]string, error) {
	vars, err := godotenv.UnmarshalBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("not a .env file: %s", dotEnvReason(err))
	}
	for name := range vars {
		if !envNamePattern.MatchString(name) {
			return nil, fmt.Errorf("%q is not a valid environment variable name", clipName(name))
		}
	}
	// godotenv expands references from the file's own variables only: the process's variables
	// the file refers to are set before its lines (quoted, so read back as they are), then
	// dropped unless the file sets them too.
	seed := map[string]string{}
	for _, m := range dotEnvRefPattern.FindAllSubmatch(raw, -1) {
		if v, ok := lookup(string(m[1])); ok {
			seed[string(m[1])] = v
		}
	}
	if len(seed) == 0 {
		return vars, nil
	}
	var lines []byte
	for _, name := range slices.Sorted(maps.Keys(seed)) {
		v := seed[name]
		if !strings.Contains(v, "'") { // single quotes: read back exactly, nothing expanded
			lines = fmt.Appendf(lines, "%s='%s'\n", name, v)
			continue
		}
		line, err := godotenv.Marshal(map[string]string{name: v})
		if err != nil {
			return vars, nil
		}
		lines = append(append(lines, line...), '\n')
	}
	expanded, err := godotenv.UnmarshalBytes(append(lines, raw...))
	if err != nil {
		return vars, nil // the file reads alone: its references stay as godotenv read them
	}
	for name := range expanded {
		if _, inFile := vars[name]; !inFile {
			delete(expanded, name)
		}
	}
	return expanded, nil
}

// dotEnvRefPattern finds the variables a .env file refers to, as godotenv expands them.
var dotEnvRefPattern = regexp.MustCompile(`\$\{?([A-Z0-9_]+)`)

// dotEnvReason is godotenv's error without the text of the file it quotes.
func dotEnvReason(err error) string {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "unterminated quoted value"):
		return "a quoted value has no closing quote"
	case strings.HasPrefix(msg, "unexpected character"):
		return "a line is neither NAME=value nor a comment"
	case strings.HasPrefix(msg, "zero length string"):
		return "a variable has no name"
	}
	return "it cannot be read"
}

// clipName is a variable name cut for an error message.
func clipName(s string) string {
	const n = 64
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
