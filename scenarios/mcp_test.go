package scenarios

import (
	"strings"
	"testing"
)

// TestMCPSDK drives /mcp with the official MCP TypeScript SDK's client
// (StreamableHTTPClientTransport) against the built binary: tools listed from the assistants,
// a new assistant listed without a restart, calls that run them, a failing graph and a run
// stopped at an interrupt as tool errors, an unknown method and a malformed body as JSON-RPC
// errors.
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
