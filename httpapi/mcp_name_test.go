package httpapi

import (
	"strings"
	"testing"
)

// TestMCPToolName: assistant names become valid MCP tool names, and a name already taken is
// told apart by a hash of the assistant id, the same at every list.
func TestMCPToolName(t *testing.T) {
	long := strings.Repeat("a", 80)
	for _, tc := range []struct {
		name, id string
		taken    []string
		want     string
	}{
		{"echo", "1", nil, "echo"},
		{"My agent/v2.1", "1", nil, "My_agent_v2.1"},
		{"héllo wörld", "1", nil, "h_llo_w_rld"},
		{"", "1", nil, "assistant"},
		{long, "1", nil, long[:64]},
		{"echo", "1", []string{"echo"}, "echo_6b86b273"},
		{"echo", "2", []string{"echo"}, "echo_d4735e3a"},
		{long, "1", []string{long[:64]}, long[:55] + "_6b86b273"},
	} {
		taken := map[string]bool{}
		for _, n := range tc.taken {
			taken[n] = true
		}
		got := mcpToolName(tc.name, tc.id, taken)
		if got != tc.want {
			t.Errorf("mcpToolName(%q, %q, %v) = %q, want %q", tc.name, tc.id, tc.taken, got, tc.want)
		}
		if len(got) > mcpToolNameMax || strings.ContainsFunc(got, func(r rune) bool {
			return !(r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
		}) {
			t.Errorf("%q is not a valid tool name", got)
		}
	}
}
