package hosting

import (
	"testing"

	"github.com/jetgraph/jetgraph/engine/graph"
	"github.com/jetgraph/jetgraph/engine/graphs"
)

// The user's LangSmith settings win when one of their variables is set, in the config file's
// env or in jetgraph's; empty values are unset, as the libraries read them.
func TestUserTracing(t *testing.T) {
	for _, tt := range []struct {
		name      string
		configEnv map[string]string
		env       map[string]string
		want      string
	}{
		{"none", map[string]string{"VISIT_WORD": "visit", "LANGSMITH_PROJECT": "p"}, nil, ""},
		{"config key", map[string]string{"LANGSMITH_API_KEY": "k"}, nil, "LANGSMITH_API_KEY"},
		{"env tracing off", nil, map[string]string{"LANGSMITH_TRACING": "false"}, "LANGSMITH_TRACING"},
		{"old names", nil, map[string]string{"LANGCHAIN_TRACING_V2": "true"}, "LANGCHAIN_TRACING_V2"},
		{"endpoint", map[string]string{"LANGCHAIN_ENDPOINT": "http://x"}, nil, "LANGCHAIN_ENDPOINT"},
		{"empty", map[string]string{"LANGSMITH_API_KEY": ""}, map[string]string{"LANGSMITH_TRACING": ""}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := userTracing(tt.configEnv, func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("userTracing = %q, want %q", got, tt.want)
			}
		})
	}
}

// A run's trace headers come from its tracer through the sink; with no tracer, none.
func TestTraceHeaders(t *testing.T) {
	if h := traceHeaders(nil); h != nil {
		t.Errorf("no sink: %v", h)
	}
	if h := traceHeaders(func(graph.Event) {}); h != nil {
		t.Errorf("a sink without a tracer: %v", h)
	}
	tracer := func(e graph.Event) {
		if p, ok := e.Data.(*graphs.TraceParent); ok && e.Kind == graphs.TraceDelegate {
			p.DottedOrder, p.Project = "20260101T000000000000Zabc", "my project,1"
		}
	}
	h := traceHeaders(tracer)
	if h["langsmith-trace"] != "20260101T000000000000Zabc" || h["baggage"] != "langsmith-project=my%20project%2C1" {
		t.Errorf("headers %v", h)
	}
}

// A host's environment points its langsmith at jetgraph; the Python library sends its traces
// uncompressed over that loopback hop, the JavaScript one keeps its compression.
func TestTracingEnv(t *testing.T) {
	tr := &Tracing{URL: "http://127.0.0.1:8123/tracing", Key: "k"}
	for _, tt := range []struct {
		language     string
		uncompressed bool
	}{
		{graphs.LanguagePython, true},
		{graphs.LanguageTypeScript, false},
	} {
		env := map[string]string{}
		tr.tracingEnv(env, tt.language)
		if env["LANGSMITH_ENDPOINT"] != tr.URL || env["LANGSMITH_API_KEY"] != "k" {
			t.Errorf("%s: %v", tt.language, env)
		}
		if got := env["LANGSMITH_DISABLE_RUN_COMPRESSION"] == "true"; got != tt.uncompressed {
			t.Errorf("%s: compression disabled %v, want %v", tt.language, got, tt.uncompressed)
		}
	}
}
