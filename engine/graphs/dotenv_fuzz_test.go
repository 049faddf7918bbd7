package graphs

import (
	"strings"
	"testing"
)

// FuzzParseDotEnv: whatever a .env file holds (and the process variables it refers to), reading
// it never panics, gives only the names the file sets and valid ones, and fails without quoting
// the file (its values are secrets) other than a variable's name.
func FuzzParseDotEnv(f *testing.F) {
	for _, s := range []string{
		"A=1\n", "export A=1\n# c\nB='x y'\nC=\"${A}\\n\"\n", "A=\"unterminated\n", "A: yaml\n", "=x\n",
		"A=1 # comment\n", "\r\nA=1\r\n", "A.B=1\n", "sk-secret\n", "A='it\\'s'\n", "export\n", "A=$B ${C} \\$D\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		// Every variable the file refers to is set in the process, to the file itself.
		vars, err := parseDotEnv(raw, func(string) (string, bool) { return string(raw), true })
		if err != nil {
			msg := err.Error()
			if strings.HasSuffix(msg, " is not a valid environment variable name") {
				return
			}
			switch msg {
			case "not a .env file: a quoted value has no closing quote", "not a .env file: a line is neither NAME=value nor a comment",
				"not a .env file: a variable has no name", "not a .env file: it cannot be read":
			default:
				t.Fatalf("an error that may quote the file: %q", msg)
			}
			return
		}
		alone, _ := parseDotEnv(raw, func(string) (string, bool) { return "", false })
		for name := range vars {
			if !envNamePattern.MatchString(name) {
				t.Fatalf("name %q accepted", name)
			}
			if _, ok := alone[name]; !ok {
				t.Fatalf("name %q is the process's, not the file's", name)
			}
		}
	})
}
