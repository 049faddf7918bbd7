package cli

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/engine/tracing"
	"github.com/jetgraph/jetgraph/eventlog"
)

// traceOptions are the flags of the LLM tracing service.
type traceOptions struct {
	retention   time.Duration
	prices      string
	project     string
	noSelfTrace bool
}

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
	return platform.TracingConfig{PricesFile: t.prices, Service: tracing.Config{Version: version},
		Project: t.project, NoSelfTrace: t.noSelfTrace}
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
