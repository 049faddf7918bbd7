package cli

import (
	"context"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/jetgraph/jetgraph/engine/controlplane/supervise"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/tracing"
	"github.com/jetgraph/jetgraph/engine/tracing/forward"
	"github.com/jetgraph/jetgraph/eventlog"
)

// traceOptions are the flags of the LLM tracing service.
type traceOptions struct {
	retention   time.Duration
	prices      string
	project     string
	noSelfTrace bool
	// forwardURL and forwardProject: see addTraceFlags.
	forwardURL     string
	forwardProject string
}

// TraceForwardKeyEnv names the environment variable holding the API key that --trace-forward-url
// is sent with (X-Api-Key). It is no flag, so that the key never shows in a process listing; the
// control plane gives it to the deployments' processes (supervise).
const TraceForwardKeyEnv = supervise.TraceForwardKeyEnv

// addTraceRetentionFlag adds the flag of the trace stream's retention, which every command that
// opens the log sets on the stream.
func addTraceRetentionFlag(f *pflag.FlagSet, t *traceOptions) {
	f.DurationVar(&t.retention, "trace-retention", eventlog.DefaultTraceRetention,
		"how long LLM traces (and their attachments) are kept: the trace stream's max age; 0 keeps them forever")
}

// addTraceFlags adds serve's tracing flags.
func addTraceFlags(f *pflag.FlagSet, t *traceOptions) {
	f.StringVar(&t.prices, "trace-prices", "",
		"JSON file of model prices (USD per token) that adds to or overrides the built-in ones, for trace costs")
	f.StringVar(&t.project, "trace-project", "default",
		"tracing project of jetgraph's own traces: every run it executes is traced there (root span id = run id)")
	f.BoolVar(&t.noSelfTrace, "no-self-trace", false, "do not trace the runs jetgraph executes")
	f.StringVar(&t.forwardURL, "trace-forward-url", "",
		"also send the default tenant's traces (jetgraph's own runs' among them) to this LangSmith-compatible tracing API, durably: "+
			"https://api.smith.langchain.com or http://<jetgraph>/tracing; the API key is read from "+TraceForwardKeyEnv)
	f.StringVar(&t.forwardProject, "trace-forward-project", "",
		"project of the forwarded runs at --trace-forward-url (default: each run's own project)")
}

// logRetention is the event log's TraceRetention for the flag: there, 0 is the default and a
// negative value is forever.
func (t traceOptions) logRetention() time.Duration {
	if t.retention <= 0 {
		return -1
	}
	return t.retention
}

// platform is the platform's tracing configuration.
func (t traceOptions) platform(version string) platform.TracingConfig {
	c := platform.TracingConfig{PricesFile: t.prices, Service: tracing.Config{Version: version},
		Project: t.project, NoSelfTrace: t.noSelfTrace}
	if t.forwardURL != "" {
		c.Forward = &forward.Config{URL: t.forwardURL, APIKey: os.Getenv(TraceForwardKeyEnv), Project: t.forwardProject}
	}
	return c
}

// registerTraceMetrics exposes the trace projector's progress and lag.
func registerTraceMetrics(reg *prometheus.Registry, p *platform.Platform) {
	applied := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "jetgraph_trace_projection_events_applied_total", Help: "Trace events folded into the trace projection.",
	})
	p.TraceProjector.OnApply = func(n int, _ time.Duration) { applied.Add(float64(n)) }
	lag := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "jetgraph_projection_lag_events", Help: "Events in the log not yet applied by the local projections.",
		ConstLabels: prometheus.Labels{"stream": eventlog.TraceStream},
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		last, err := p.Log.LastSeq(ctx, eventlog.TraceStream)
		if err != nil {
			return -1
		}
		return float64(last) - float64(p.TraceProjector.Applied())
	})
	reg.MustRegister(applied, lag, haltedGauge(eventlog.TraceStream, p.TraceProjector))
}
