package scenarios

import (
	"strings"
	"testing"
)

// TestMCPSDK drives /mcp with the official MCP TypeScript SDK's client
// (StreamableHTTPClientTransport) against the built binary: tools listed from the assistants,
// a new assistant listed without a restart, calls that run them, a failing graph as a tool error.
func TestMCPSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	ensureNodeModules(t)
	srv := startServerArgs(t, t.TempDir())
	out := runNode(t, srv, "mcp.mjs")
	if !strings.Contains(out, "mcp scenario passed") {
		t.Fatalf("scenario output: %s", out)
	}
}
