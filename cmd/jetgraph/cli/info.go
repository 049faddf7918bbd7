package cli

import "github.com/jetgraph/jetgraph/engine/hosting"

// serverInfo is GET /info in the reference servers' shape, with jetgraph's own values: its
// version; the LangGraph library of each language whose graphs it hosts (langgraph_py_version,
// langgraph_js_version, which clients and Studio read to enable features); the flags Studio
// reads (langsmith is false: runs are traced into jetgraph, not to LangSmith, so Studio shows no
// LangSmith links; jetgraph has no LangSmith tracing replicas or sessions per run), plus
// jetgraph's own flags; and the host's kind.
func serverInfo(version string, hosts []*hosting.Host) map[string]any {
	info := map[string]any{
		"version": version,
		"flags": map[string]bool{"assistants": true, "crons": true, "langsmith": false,
			"langsmith_tracing_replicas": false, "langsmith_tracing_session_on_runs": false,
			"store": true, "tracing": true, "streaming": true},
		"host": map[string]any{"kind": "self-hosted", "project_id": nil, "host_revision_id": nil, "revision_id": nil, "tenant_id": nil},
	}
	for _, h := range hosts {
		lang, lib := h.Library()
		if lib == "" {
			continue // not started yet when the server started: not reported rather than guessed
		}
		switch lang {
		case "python":
			info["langgraph_py_version"] = lib
		case "typescript":
			info["langgraph_js_version"] = lib
		}
	}
	return info
}
