// Package cli is the jetgraph command line: serve (the platform), events, projections rebuild,
// bench and version. cmd/jetgraph runs it with the example graphs; a program of one's own runs
// it with its own graphs and tools, and so serves them on the jetgraph runtime without a fork:
//
//	func main() {
//		reg := graphs.NewRegistry()
//		reg.MustRegister(graphs.Entry{ID: "greeter", Build: graphs.Static(greeter)}) // a *graph.Graph
//		cli.Main(cli.Program{Graphs: reg})
//	}
//
// The program then has every command and flag of jetgraph (see the README's "Command line").
package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/runs"
	"github.com/jetgraph/jetgraph/engine/webhooks"
	"github.com/jetgraph/jetgraph/eventlog"
)

// Program is a jetgraph command line around a set of graphs. The zero Program is jetgraph
// itself: the example graphs and a react agent.
type Program struct {
	// Graphs are what serve serves without --config; nil means graphs.Default() (the example
	// graphs and a react agent). --graphs narrows them. A graph.json given with --config
	// replaces them, and may name them (see graphs.Catalog).
	Graphs *graphs.Registry
	// Tools are Go tools the react agents of a graph.json may name besides the built-in ones.
	Tools []graphs.Tool
	// Version is what `version`, GET /info and the startup line report; empty means the version
	// of the jetgraph module the program was built with.
	Version string
	// Auth is the program's own auth handler, nil for none: who each request to the runtime API
	// is (401 without a credential it accepts) and what that user may do with threads, runs,
	// assistants, crons and the store (see engine.Authorizer; owners.Rules splits everything by
	// user). It is the Go twin of a langgraph.json's auth.path, and cannot go with it or with
	// --auth.
	Auth engine.AuthHandler
	// Stdout and Stderr default to the process's.
	Stdout, Stderr io.Writer
}

// Main runs p on the process's arguments and exits: with status 0 when the command succeeded,
// 1 after printing why it did not. Serve stops gracefully on SIGINT or SIGTERM.
func Main(p Program) {
	if err := p.Run(context.Background(), os.Args[1:]); err != nil {
		os.Exit(1)
	}
}

// Run runs the command args name (the arguments without the program's name) until it ends or
// ctx is cancelled, and prints its error, if any, on Stderr before returning it.
func (p Program) Run(ctx context.Context, args []string) error {
	if p.Stdout == nil {
		p.Stdout = os.Stdout
	}
	if p.Stderr == nil {
		p.Stderr = os.Stderr
	}
	if p.Version == "" {
		p.Version = moduleVersion()
	}
	o := &options{prog: p}
	root := rootCommand(o)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return nil
	}
	if o.logger != nil { // the command ran: its error goes through the logger the flags chose
		o.logger.Error(err.Error())
	} else { // the command line itself is wrong
		fmt.Fprintln(p.Stderr, root.Name()+":", err)
	}
	return err
}

// modulePath is the jetgraph module, whose version a program built on it reports.
const modulePath = "github.com/jetgraph/jetgraph"

// version is set at build time with
// -ldflags "-X github.com/jetgraph/jetgraph/cmd/jetgraph/cli.version=..."; otherwise it is read
// from the build info of the jetgraph module (the main module or a dependency).
var version = ""

// moduleVersion is the version of the jetgraph module this program was built with.
func moduleVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		mods := append([]*debug.Module{&bi.Main}, bi.Deps...)
		for _, m := range mods {
			if m.Path != modulePath {
				continue
			}
			if m.Replace != nil { // a program built on a checkout (a path) or a fork
				m = m.Replace
			}
			if m.Version != "" && m.Version != "(devel)" {
				return m.Version
			}
		}
	}
	return "0.1.0-dev"
}

// options are the flags, and what the root command prepared for its subcommands.
type options struct {
	prog   Program
	logger *slog.Logger // built from --log-format and --log-level before any command runs

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
	python      string // --python: the interpreter of Python graphs
	node        string // --node: the Node of TypeScript graphs
	hostPool    int    // --hosts: host processes per language
	keepEnv     string // --keep-env: variables the config file's env does not override
	gracePeriod time.Duration
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
	disableA2A       bool
	trace            traceOptions
	control          controlOptions
	store            storeOptions
	auth             authOptions
}

// envPrefix starts the environment twin of every flag: --nats-url is JETGRAPH_NATS_URL.
const envPrefix = "JETGRAPH_"

func rootCommand(o *options) *cobra.Command {
	stdout, stderr := o.prog.Stdout, o.prog.Stderr
	root := &cobra.Command{
		Use:   "jetgraph",
		Short: "A self-hostable agent platform, event-sourced on NATS JetStream",
		Long: `jetgraph serves a LangGraph-compatible API (assistants, threads, store) from one binary.
Every change is an event on NATS JetStream; bbolt projections answer reads.

Without a subcommand it runs 'serve', with serve's flags. Every flag can also be set from the
environment as JETGRAPH_<FLAG> with dashes as underscores (JETGRAPH_ADDR, JETGRAPH_NATS_URL, ...);
a flag on the command line wins over the environment.`,
		Version:       o.prog.Version,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyEnv(cmd.Flags()); err != nil {
				return err
			}
			logger, err := newLogger(o, stderr)
			if err != nil {
				return err
			}
			o.logger = logger
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return serve(cmd.Context(), o) },
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	pf := root.PersistentFlags()
	pf.Var(choice(&o.logFormat, "text", "text", "json"), "log-format", "log format on stderr: text or json")
	pf.Var(choice(&o.logLevel, "info", "debug", "info", "warn", "error"), "log-level", "log level: debug, info, warn or error")
	addServeFlags(root.Flags(), o)

	serveCmd := &cobra.Command{
		Use:   "serve",
		Short: "Start the platform (the default command)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return serve(cmd.Context(), o) },
	}
	addServeFlags(serveCmd.Flags(), o)
	root.AddCommand(serveCmd, eventsCommand(o), projectionsCommand(o), forkCommand(o), replayCommand(o), exportCommand(o), importCommand(o), benchCommand(stdout), versionCommand(o), configCommand(o), keysCommand(o), natsCommand(o), secretsCommand(o))
	return root
}

// addLogFlags adds the flags of every command that opens the event log.
func addLogFlags(f *pflag.FlagSet, o *options) {
	f.StringVar(&o.data, "data", ".jetgraph", "data folder: the projection file and the embedded NATS store")
	f.StringVar(&o.natsURL, "nats-url", "", "NATS servers to use instead of the embedded one (comma-separated URLs)")
	f.StringVar(&o.natsCreds, "nats-creds", "", "credentials for --nats-url: a NATS .creds file, or the user key a listening embedded server wrote (<data>/"+eventlog.CredsFileName+")")
	f.IntVar(&o.replicas, "nats-replicas", 1, "replicas of each JetStream stream: 1, or 3 on a cluster")
	f.Var(choice(&o.sync, "interval", "interval", "always"), "sync", "embedded server fsync policy: 'interval' (every 2 minutes) or 'always' (every write)")
	f.DurationVar(&o.streamRetention, "stream-retention", 2*time.Minute, "how long a run's streamed events are kept for clients to join or resume them (Last-Event-ID)")
	addTraceRetentionFlag(f, &o.trace)
}

// addServeFlags adds the flags of serve (and of the root command, which serves by default).
func addServeFlags(f *pflag.FlagSet, o *options) {
	addLogFlags(f, o)
	f.StringVar(&o.addr, "addr", "localhost:8123", "HTTP address to serve on (host:port)")
	f.StringVar(&o.config, "config", "", "graph.json that says which graphs to serve, instead of the built-in ones (default: the example graphs and a react agent)")
	f.StringVar(&o.natsListen, "nats-listen", "", "expose the embedded NATS server on host:port (e.g. for the nats CLI or a second jetgraph); it admits only the holder of <data>/"+eventlog.CredsFileName)
	f.StringVar(&o.corsOrigins, "cors-origins", "", "browser origins allowed to call the API besides loopback ones, comma-separated ('*': every origin)")
	f.StringVar(&o.graphs, "graphs", "", "serve only these of the available graphs: comma-separated graph ids, 'examples' for every example graph (default: all)")
	f.StringVar(&o.node, "node", "", "the Node (20 or newer) that runs the config's TypeScript graphs, with the project's @langchain/langgraph in node_modules beside the config (default: node on PATH)")
	f.StringVar(&o.keepEnv, "keep-env", "", "comma-separated names of variables whose value in jetgraph's environment wins over the config file's env (the control plane gives a deployment's secret names)")
	f.IntVar(&o.hostPool, "hosts", 1, "host processes that run the config's Python or TypeScript graphs, per language (a run goes to the least busy)")
	f.StringVar(&o.python, "python", "", "the Python that runs the config's Python graphs, with the project's langgraph installed (default: $VIRTUAL_ENV's, a .venv beside the config file, else python3 on PATH)")
	f.DurationVar(&o.gracePeriod, "grace-period", 3*time.Minute, "how long shutdown lets requests and runs in flight finish; runs still going are then left to another process")
	f.IntVar(&o.workers, "workers", 10, "threads this process runs at once")
	f.DurationVar(&o.runTimeout, "run-timeout", 0, "time limit of a run (0: none); a run over it fails with TimeoutError")
	f.DurationVar(&o.leaseTTL, "lease-ttl", runs.DefaultLeaseTTL, "how long a thread's lease outlives a worker that stopped renewing it (renewed every third of it)")
	f.DurationVar(&o.ackWait, "dispatch-ack-wait", runs.DefaultAckWait, "how long a picked-up run waits for its worker before another process may take it (acknowledged in progress every third of it)")
	f.BoolVar(&o.pprof, "pprof", false, "serve Go's profiler at /debug/pprof/ (for operators; never expose it publicly)")
	f.BoolVar(&o.dev, "dev", false, "development conveniences of the reference dev server: POST /internal/truncate empties the data (never in production)")
	f.BoolVar(&o.webhooksDisabled, "webhooks-disabled", false, "never call run webhooks")
	f.BoolVar(&o.disableA2A, "disable-a2a", false, "do not serve the A2A endpoint /a2a/{assistant_id} (answered 404)")
	f.Var(checked(&o.webhookFields, "", func(v string) error { _, err := webhooks.ParseFields(v); return err }),
		"webhook-fields", "run fields sent to webhooks, comma-separated (default: all)")
	addTraceFlags(f, &o.trace)
	addControlFlags(f, &o.control)
	addStoreFlags(f, &o.store)
	addAuthFlags(f, &o.auth)
}

// versionCommand is `jetgraph version`.
func versionCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, and the Go toolchain and platform it was built for",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(o.prog.Stdout, "%s %s (%s, %s/%s)\n", cmd.Root().Name(), o.prog.Version,
				runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}

// applyEnv sets every flag of fs not given on the command line from JETGRAPH_<NAME>; a value
// the flag refuses is an error naming the variable.
func applyEnv(fs *pflag.FlagSet) error {
	var errs []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			return
		}
		name := envPrefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(name); ok {
			if err := f.Value.Set(v); err != nil {
				errs = append(errs, fmt.Sprintf("%s=%q: %v", name, v, err))
			}
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("environment: %s", strings.Join(errs, "; "))
	}
	return nil
}

// checkedValue is a string flag whose value is checked where it is given, so that a wrong one
// is refused naming the flag or its variable.
type checkedValue struct {
	p     *string
	check func(string) error
}

// checked returns a flag value of p, set to def, that accepts what check accepts.
func checked(p *string, def string, check func(string) error) *checkedValue {
	*p = def
	return &checkedValue{p: p, check: check}
}

// choice is checked with a list of the accepted values.
func choice(p *string, def string, choices ...string) *checkedValue {
	return checked(p, def, func(v string) error {
		if !slices.Contains(choices, v) {
			return fmt.Errorf("must be %s, not %q", strings.Join(choices, " or "), v)
		}
		return nil
	})
}

func (c *checkedValue) String() string { return *c.p }
func (c *checkedValue) Type() string   { return "string" }
func (c *checkedValue) Set(v string) error {
	if err := c.check(v); err != nil {
		return err
	}
	*c.p = v
	return nil
}

// newLogger builds the slog logger the flags ask for, writing to w.
func newLogger(o *options, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %w", o.logLevel, err)
	}
	hopts := &slog.HandlerOptions{Level: level}
	if o.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, hopts)), nil
	}
	return slog.New(slog.NewTextHandler(w, hopts)), nil
}
