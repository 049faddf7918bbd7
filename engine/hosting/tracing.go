package hosting

import (
	"net/url"
	"strings"

	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// Tracing says where the hosts send the traces of their graphs' model calls: jetgraph's own
// tracing API, which the TypeScript host's tracer, and in the Python host the langsmith library
// that LangChain's chat models trace through (a dependency of langchain-core), post to as the
// langsmith clients post to LangSmith.
type Tracing struct {
	// URL is jetgraph's tracing API as the hosts reach it (http://127.0.0.1:8123/tracing):
	// their LANGSMITH_ENDPOINT.
	URL string
	// Key is the API key the hosts send (LANGSMITH_API_KEY). It is never logged.
	Key string
}

// userTracingVars are the variables by which a user configures LangSmith tracing (turns it on
// or off, or says where traces go), in the names of both libraries' generations. One of them
// set, in jetgraph's environment or the config file's env, means the user's settings win.
var userTracingVars = []string{
	"LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING",
	"LANGSMITH_ENDPOINT", "LANGCHAIN_ENDPOINT", "LANGSMITH_RUNS_ENDPOINTS",
	"LANGSMITH_API_KEY", "LANGCHAIN_API_KEY",
}

// userTracing names the first variable of userTracingVars that is set (not empty) in the
// config file's env or else in jetgraph's environment (getenv); "" when the user configured no
// LangSmith tracing.
func userTracing(configEnv map[string]string, getenv func(string) string) string {
	for _, name := range userTracingVars {
		if configEnv[name] != "" || getenv(name) != "" {
			return name
		}
	}
	return ""
}

// tracingEnv is the environment that points a host's langsmith library at jetgraph. Tracing
// is not turned on for the whole process (no LANGSMITH_TRACING): each run turns it on for
// itself, under the run's trace (see traceParent), so that nothing else a host does is traced
// on its own.
func (t *Tracing) tracingEnv(env map[string]string, language string) {
	env["LANGSMITH_ENDPOINT"], env["LANGSMITH_API_KEY"] = t.URL, t.Key
	// The traces go to this process over loopback: the Python library's compression costs both
	// sides CPU for no bandwidth saved (7.30 -> 6.77 and 7.47 -> 6.50 ms of CPU a traced run
	// without it). The JavaScript library's uncompressed path sends smaller batches, which cost
	// more (11.47 -> 14.93 ms): it keeps its compression.
	if language == graphs.LanguagePython {
		env["LANGSMITH_DISABLE_RUN_COMPRESSION"] = "true"
	}
}

// traceHeaders asks the run's tracer (through the run's sink) where the host's spans of a run
// go, and returns them as the distributed-tracing headers of the langsmith libraries
// (langsmith-trace: the parent's dotted_order; baggage: its project), which the hosts hand to
// RunTree.from_headers / RunTree.fromHeaders. The tracer then leaves the run's steps to the
// host. Nil when nothing traces the run.
func traceHeaders(sink graph.Sink) map[string]string {
	if sink == nil {
		return nil
	}
	p := &graphs.TraceParent{}
	sink(graph.Event{Kind: graphs.TraceDelegate, Data: p})
	if p.DottedOrder == "" {
		return nil
	}
	// Baggage values are percent-encoded (the libraries unquote them); a space is %20, not +.
	project := strings.ReplaceAll(url.QueryEscape(p.Project), "+", "%20")
	return map[string]string{"langsmith-trace": p.DottedOrder, "baggage": "langsmith-project=" + project}
}
