package scenarios

import "testing"

// runPythonScenario starts a server of its own and runs one script of scenarios/python with the
// pinned official Python SDK against it; the script prints ok last when every check held.
func runPythonScenario(t *testing.T, script string) {
	t.Helper()
	if testing.Short() {
		t.Skip("scenario test; skipped with -short")
	}
	srv := startServer(t, t.TempDir())
	if got := lastLine(runPython(t, srv, script)); got != "ok" {
		t.Fatalf("%s printed %q, want ok", script, got)
	}
}

// TestPythonSDKThreads drives assistants (versions, search, graph, schemas, subgraphs), threads
// (search, count, copy, prune, supersteps) and state and history (checkpoints, update_state,
// forks, a subgraph's task checkpoint) through the Python SDK's async client.
func TestPythonSDKThreads(t *testing.T) { runPythonScenario(t, "sdk_threads.py") }

// TestPythonSDKStreaming streams every mode through the Python SDK's sync client, resumes
// interrupts with Command, joins a run from its start and after an event id, and cancels runs
// (interrupt, rollback, many).
func TestPythonSDKStreaming(t *testing.T) { runPythonScenario(t, "sdk_streaming.py") }

// TestPythonSDKMultitask runs a second run on a busy thread with each multitask strategy
// (reject, interrupt, rollback, enqueue) through the Python SDK's async client.
func TestPythonSDKMultitask(t *testing.T) { runPythonScenario(t, "sdk_multitask.py") }

// TestPythonSDKCronsStore drives crons (they fire and make runs) and the store through the
// Python SDK's sync client.
func TestPythonSDKCronsStore(t *testing.T) { runPythonScenario(t, "sdk_crons_store.py") }

// TestPythonSDKReconnect cuts a run's stream inside an event (a proxy in the script): the Python
// SDK's async client must resume through the Location with Last-Event-ID and get every event
// once, the events a join of the run from its start gives.
func TestPythonSDKReconnect(t *testing.T) { runPythonScenario(t, "sdk_reconnect.py") }
