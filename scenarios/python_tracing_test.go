package scenarios

import (
	"strings"
	"testing"
)

// TestPythonTracing drives the tracing service with the official Python langsmith client
// (scenarios/python/tracing.py) as its users run it: LANGSMITH_ENDPOINT, LANGSMITH_API_KEY and
// LANGSMITH_TRACING in the environment, nested @traceable functions (a chain, a streamed llm
// with its new_token event, a chat-completions llm, a tool and a failing one), flush(), then the
// same client's reads. Each transport the client has sends the same trace into its own project:
// zstd-compressed multipart (its default), uncompressed multipart, /runs/batch (a server without
// multipart), and one request per run (auto_batch_tracing=False). The default one then reads
// projects, feedback, threads and the v2 resources (tracing_reads.py). Last, the async side
// (tracing_async.py): async @traceable functions, run trees built by hand, the AsyncClient's reads;
// a control-plane key's tenant (tracing_tenant.py); and LangChain's tracer over the client, its
// serialized messages normalised (tracing_langchain.py).
func TestPythonTracing(t *testing.T) {
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	t.Setenv("JETGRAPH_ADMIN_KEY", scenarioAdminKey)
	data := t.TempDir()
	srv := startServer(t, data)
	tenantKey := keyPattern.FindString(jetgraph(t, false, "keys", "create", "--tenant", "py-tracing", "--data", data))
	if tenantKey == "" {
		t.Fatal("jetgraph keys create printed no key")
	}
	// A key of jetgraph's form that no tenant has.
	unknownKey := "jgk_" + strings.Repeat("A", 43)
	for _, tt := range []struct {
		mode   string
		script []string
		env    []string
	}{
		{"zstd", []string{"tracing.py", "zstd"}, []string{"LANGSMITH_DISABLE_RUN_COMPRESSION=false"}},
		{"plain", []string{"tracing.py", "plain"}, []string{"LANGSMITH_DISABLE_RUN_COMPRESSION=true"}},
		{"batch", []string{"tracing.py", "batch"}, []string{"LANGSMITH_DISABLE_RUN_COMPRESSION=false"}},
		{"direct", []string{"tracing.py", "direct"}, []string{"LANGSMITH_DISABLE_RUN_COMPRESSION=false"}},
		{"async", []string{"tracing_async.py"}, []string{"LANGSMITH_DISABLE_RUN_COMPRESSION=false"}},
		{"tenant", []string{"tracing_tenant.py", unknownKey}, []string{"LANGSMITH_DISABLE_RUN_COMPRESSION=false", "LANGSMITH_API_KEY=" + tenantKey}},
		{"langchain", []string{"tracing_langchain.py"}, []string{"LANGSMITH_DISABLE_RUN_COMPRESSION=false"}},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			// The mode's variables come last: of a variable given twice, the last is used.
			env := append([]string{
				"LANGSMITH_ENDPOINT=" + srv.URL + "/tracing",
				"LANGSMITH_API_KEY=anything",
				"LANGSMITH_TRACING=true",
			}, tt.env...)
			if got := lastLine(runPythonEnv(t, srv, env, tt.script[0], tt.script[1:]...)); got != "ok" {
				t.Fatalf("%v printed %q, want ok", tt.script, got)
			}
		})
	}
}
