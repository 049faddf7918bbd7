// Package cli is the jetgraph command line: serve (the platform), events, projections rebuild,
// bench and version. cmd/jetgraph calls Main with the example graphs; a program of one's own calls
// it with its own graphs to run them on the jetgraph runtime.
package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/eventlog"
)

// version is set at build time with -ldflags "-X github.com/jetgraph/jetgraph/cmd/jetgraph/cli.version=..."; otherwise read from the
// module's build info.
var version = ""

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.1.0-dev"
}

// options are the flags shared by every command.
type options struct {
	addr        string
	data        string
	config      string
	natsURL     string
	natsListen  string
	natsCreds   string
	corsOrigins string
	replicas    int
	sync        string
	logFormat   string
	logLevel    string
	graphs      string
	gracePeriod string
	workers     int
	runTimeout  time.Duration
	leaseTTL    time.Duration
	ackWait     time.Duration
	// streamRetention is how long run output stays on the output bus (eventlog.Config.OutputRetention).
	streamRetention time.Duration

	pprof            bool
	dev              bool
	webhooksDisabled bool
	webhookFields    string
	trace            traceOptions
}

// Main runs the jetgraph command line on os.Args and exits with its status.
func Main() {
	if err := rootCommand(os.Stdout, os.Stderr).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "jetgraph:", err)
		os.Exit(1)
	}
}

func rootCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &options{}
	root := &cobra.Command{
		Use:   "jetgraph",
		Short: "A self-hostable agent platform, event-sourced on NATS JetStream",
		Long: `jetgraph serves a LangGraph-compatible API (assistants, threads, store) from one binary.
Every change is an event on NATS JetStream; bbolt projections answer reads.

Without a subcommand it runs 'serve'. Every flag can also be set from the environment as
JETGRAPH_<FLAG> with dashes as underscores (JETGRAPH_ADDR, JETGRAPH_NATS_URL, ...); a flag on the
command line wins over the environment.`,
		Version:       buildVersion(),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tuneGC()
			return serve(cmd.Context(), o, stderr)
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	f := root.PersistentFlags()
	f.StringVar(&o.addr, "addr", "localhost:8123", "HTTP address to serve on (host:port)")
	f.StringVar(&o.data, "data", ".jetgraph", "data folder: the projection file and the embedded NATS store")
	f.StringVar(&o.config, "config", "", "graph.json that says which graphs to serve (default: the example graphs and a react agent)")
	f.StringVar(&o.natsURL, "nats-url", "", "NATS servers to use instead of the embedded one (comma-separated URLs)")
	f.StringVar(&o.natsListen, "nats-listen", "", "expose the embedded NATS server on host:port (e.g. for the nats CLI or a second jetgraph); it admits only the holder of <data>/"+eventlog.CredsFileName)
	f.StringVar(&o.natsCreds, "nats-creds", "", "credentials for --nats-url: a NATS .creds file, or the user key a listening embedded server wrote (<data>/"+eventlog.CredsFileName+")")
	f.StringVar(&o.corsOrigins, "cors-origins", "", "browser origins allowed to call the API besides loopback ones, comma-separated ('*': every origin)")
	f.IntVar(&o.replicas, "nats-replicas", 1, "replicas of each JetStream stream: 1, or 3 on a cluster")
	f.StringVar(&o.sync, "sync", "interval", "embedded server fsync policy: 'interval' (every 2 minutes) or 'always' (every write)")
	f.StringVar(&o.logFormat, "log-format", "text", "log format on stderr: text or json")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.StringVar(&o.graphs, "graphs", "", "serve only these of the available graphs: comma-separated graph ids, 'examples' for every example graph (default: all)")
	f.StringVar(&o.gracePeriod, "grace-period", "3m", "how long shutdown lets requests and runs in flight finish; runs still going are then left to another process")
	f.IntVar(&o.workers, "workers", 10, "threads this process runs at once")
	f.DurationVar(&o.runTimeout, "run-timeout", 0, "time limit of a run (0: none); a run over it fails with TimeoutError")
	f.DurationVar(&o.leaseTTL, "lease-ttl", runs.DefaultLeaseTTL, "how long a thread's lease outlives a worker that stopped renewing it (renewed every third of it)")
	f.DurationVar(&o.ackWait, "dispatch-ack-wait", runs.DefaultAckWait, "how long a picked-up run waits for its worker before another process may take it (acknowledged in progress every third of it)")
	f.DurationVar(&o.streamRetention, "stream-retention", 2*time.Minute, "how long a run's streamed events are kept for clients to join or resume them (Last-Event-ID)")
	f.BoolVar(&o.pprof, "pprof", false, "serve Go's profiler at /debug/pprof/ (for operators; never expose it publicly)")
	f.BoolVar(&o.dev, "dev", false, "development conveniences of the reference dev server: POST /internal/truncate empties the data (never in production)")
	f.BoolVar(&o.webhooksDisabled, "webhooks-disabled", false, "never call run webhooks")
	f.StringVar(&o.webhookFields, "webhook-fields", "", "run fields sent to webhooks, comma-separated (default: all)")
	addTraceFlags(f, &o.trace)

	serveCmd := &cobra.Command{
		Use:   "serve",
		Short: "Start the platform (the default command)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tuneGC()
			return serve(cmd.Context(), o, stderr)
		},
	}
	root.AddCommand(serveCmd, eventsCommand(o, stdout, stderr), projectionsCommand(o, stderr), benchCommand(stdout))
	cobra.OnInitialize(func() { applyEnv(root.PersistentFlags()) })
	return root
}

// serveGCPercent is the garbage collector's target of a serving process, unless GOGC says
// otherwise. The server allocates fast (every event is encoded, stored and folded) over a live
// heap of tens of megabytes: at Go's default of 100 the collector took about a tenth of its CPU
// under load. Three times the live heap buys most of that back.
const serveGCPercent = 300

// tuneGC sets the collector's target for serving, unless GOGC is set.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(serveGCPercent)
	}
}

// applyEnv sets every flag not given on the command line from JETGRAPH_<NAME>.
func applyEnv(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			return
		}
		name := "JETGRAPH_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(name); ok {
			_ = f.Value.Set(v)
		}
	})
}

// newLogger builds the slog logger the flags ask for, writing to w.
func newLogger(o *options, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", o.logLevel, err)
	}
	hopts := &slog.HandlerOptions{Level: level}
	switch o.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, hopts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, hopts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", o.logFormat)
}
