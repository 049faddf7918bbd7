package scenarios

import (
	"path/filepath"
	"strings"
	"testing"
)

// hostedSurface serves the hosted Python scenario's graphs and drives one surface of
// hosted_surfaces.mjs with its official client: they take the same run path as the runs API.
func hostedSurface(t *testing.T, surface string) {
	t.Helper()
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	userPython := ensureVenv(t, filepath.Join(filepath.Dir(hostedPythonConfig), "requirements.txt"))
	srv := startServerArgs(t, t.TempDir(), "--config", hostedPythonConfig, "--python", userPython)
	if out := runNode(t, srv, "hosted_surfaces.mjs", surface); !strings.Contains(out, "hosted "+surface+" scenario passed") {
		t.Fatalf("scenario output: %s", out)
	}
}

// TestHostedMCP: a hosted graph is an MCP tool (official MCP TypeScript SDK client): listed with
// its library's input schema, called, a node's exception and an interrupt as tool errors.
func TestHostedMCP(t *testing.T) { hostedSurface(t, "mcp") }

// TestHostedA2A: a hosted graph is an A2A agent (official A2A JS client): message/send,
// message/stream, an interrupt as input-required resumed by the next message on the task.
func TestHostedA2A(t *testing.T) { hostedSurface(t, "a2a") }

// TestHostedCrons: a thread cron on a hosted factory graph runs it on its schedule with the
// cron's config (official LangGraph JS SDK).
func TestHostedCrons(t *testing.T) { hostedSurface(t, "crons") }

// TestHostedWebhooks: a hosted graph's run calls its webhook when it ends, with the run and its
// values (official LangGraph JS SDK).
func TestHostedWebhooks(t *testing.T) { hostedSurface(t, "webhooks") }
