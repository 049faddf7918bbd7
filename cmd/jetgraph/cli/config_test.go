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
	for _, c := range []struct {
		name, config, wantOut, wantErr string
	}{
		{"built-in and template", `{"graphs": {"mine": "echo", "bot": {"template": "react"}}}`, "mine\nbot\n", ""},
		{"unknown graph", `{"graphs": {"mine": "nope"}}`, "", `graphs.mine: unknown graph "nope"`},
		{"not json", `{"graphs": `, "", "graph.json"},
		{"no file", "", "", "--config is required"},
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
