package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/assistants"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/eventlog"
)

func eventsCommand(o *options) *cobra.Command {
	var follow bool
	var tenant string
	var filter eventFilter
	cmd := &cobra.Command{
		Use:   "events <kind> <id>",
		Short: "Print the events of one aggregate (thread, assistant, cron, store, deployment) as JSON lines, in log order",
		Long: `Print the raw event log of one aggregate as JSON lines, in log order.

kind is thread, assistant, cron, store or deployment; secret values are masked as the API masks them. An assistant is named by its id or, as in the API, by the id
of a graph (its system assistant). An id without events is an error.

It reads the log directly: from --nats-url when given, or from the embedded store in --data (which
must exist). When a jetgraph server holds that data folder, it asks that server instead
(GET /events/<kind>/<id>).

--since N prints only the events after stream sequence N (the "seq" of the last event seen), and
--type only the events of these types (checkpoint, writes, run_created, …).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if args[0] == "deployment" { // the control plane's: secrets masked (controlplane_cli.go)
				return printDeploymentEvents(ctx, o, args[1], follow, o.prog.Stdout)
			}
			id := args[1]
			if args[0] == "assistant" && uuid.Validate(id) != nil {
				id = assistants.SystemID(id) // a graph id names its system assistant, as in the API
			}
			id, err := engine.AggregateID(args[0], id)
			if err != nil {
				return fmt.Errorf("%s %s: %w", args[0], args[1], err)
			}
			agg := eventlog.Aggregate{Kind: args[0], Tenant: tenant, ID: id}
			if err := agg.Validate(); err != nil {
				return err
			}
			err = printEvents(ctx, o, agg, filter, follow, o.prog.Stdout)
			if errors.Is(err, errNoEvents) {
				return fmt.Errorf("%s %s: %w", args[0], args[1], err)
			}
			return err
		},
	}
	addLogFlags(cmd.Flags(), o)
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events until interrupted")
	cmd.Flags().StringVar(&tenant, "tenant", engine.DefaultTenant, "tenant that owns the aggregate")
	cmd.Flags().Uint64Var(&filter.since, "since", 0, "print only the events after this stream sequence (an event's seq)")
	cmd.Flags().StringSliceVar(&filter.types, "type", nil, "print only events of these types (repeat or comma-separate)")
	return cmd
}

// eventFilter narrows what `jetgraph events` prints.
type eventFilter struct {
	since uint64   // only after this stream sequence
	types []string // only these types; all when empty
}

// keeps reports whether the filter lets e through (its sequence is handled by the reader).
func (f eventFilter) keeps(typ string) bool {
	return len(f.types) == 0 || slices.Contains(f.types, typ)
}

// query is the filter as GET /events's query string.
func (f eventFilter) query(follow bool) url.Values {
	q := url.Values{}
	if follow {
		q.Set("follow", "true")
	}
	if f.since > 0 {
		q.Set("since", strconv.FormatUint(f.since, 10))
	}
	for _, t := range f.types {
		q.Add("type", t)
	}
	return q
}

// errNoEvents is an aggregate without events: an id that names nothing.
var errNoEvents = errors.New("no events: no such id in this log")

// tailFunc hands the events of one aggregate the filter keeps to emit as JSON lines (see
// eventlog.Log.TailFrom).
type tailFunc func(f eventFilter, follow bool, emit func(line []byte) error) error

// printEvents writes the events of agg to w, as JSON lines; an aggregate without events is
// errNoEvents, before any wait for new ones.
func printEvents(ctx context.Context, o *options, agg eventlog.Aggregate, f eventFilter, follow bool, w io.Writer) error {
	return withEvents(ctx, o, agg, func(tail tailFunc) error {
		errFound := errors.New("found")
		filtered := f.since > 0 || len(f.types) > 0
		if follow || filtered { // an unknown id is refused, not followed nor filtered to nothing
			switch err := tail(eventFilter{}, false, func([]byte) error { return errFound }); {
			case err == nil:
				return errNoEvents
			case err != errFound:
				return err
			}
		}
		n := 0
		err := tail(f, follow, func(line []byte) error {
			n++
			_, err := w.Write(append(line, '\n'))
			return err
		})
		if err == nil && n == 0 && !filtered {
			return errNoEvents
		}
		return err
	})
}

// withEvents calls f with the events of agg: read from the log the flags name or, when a server
// holds the data folder, from that server.
func withEvents(ctx context.Context, o *options, agg eventlog.Aggregate, f func(tailFunc) error) error {
	fromLog := func(l *eventlog.Log) error {
		return f(func(filter eventFilter, follow bool, emit func([]byte) error) error {
			return l.TailFrom(ctx, agg, filter.since+1, follow, func(e eventlog.Event) error {
				if !filter.keeps(e.Type) {
					return nil
				}
				e.Data = engine.MaskEventData(e.Aggregate.Kind, e.Type, e.Data) // as the API shows it
				line, err := json.Marshal(e)
				if err != nil {
					return err
				}
				return emit(line)
			})
		})
	}
	if o.natsURL != "" {
		return withLog(ctx, o, fromLog)
	}
	data, err := existingData(o)
	if err != nil {
		return err
	}
	lock, err := lockData(data)
	var inUse errDataInUse
	if errors.As(err, &inUse) {
		return f(func(filter eventFilter, follow bool, emit func([]byte) error) error {
			return tailFromServer(ctx, data, agg, filter, follow, emit)
		})
	}
	if err != nil {
		return err
	}
	defer lock.release()
	return withLog(ctx, o, fromLog)
}

// existingData is the absolute path of --data, which must be a folder jetgraph has served: a
// command that reads the embedded log never makes an empty one out of a typo.
func existingData(o *options) (string, error) {
	data, err := filepath.Abs(o.data)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(data); err != nil {
		return "", fmt.Errorf("data folder %s does not exist (--data names the folder serve used)", data)
	}
	if _, err := os.Stat(filepath.Join(data, lockFile)); err != nil {
		return "", fmt.Errorf("data folder %s holds no jetgraph data (--data names the folder serve used)", data)
	}
	return data, nil
}

// withLog opens the log the flags name for the length of f.
func withLog(ctx context.Context, o *options, f func(*eventlog.Log) error) error {
	l, err := eventlog.Open(ctx, logConfig(o))
	if err != nil {
		return err
	}
	defer l.Close()
	return f(l)
}

// runningServer reads what the server holding the data folder wrote of itself (serve.json).
func runningServer(data string) (serveInfo, error) {
	var info serveInfo
	raw, err := os.ReadFile(serveInfoPath(data))
	if err != nil {
		return info, fmt.Errorf("data folder %s is locked by another process, and it left no serve.json: %w", data, err)
	}
	if err := json.Unmarshal(raw, &info); err != nil {
		return info, fmt.Errorf("%s: %w", serveInfoPath(data), err)
	}
	return info, nil
}

// tailFromServer asks the server that holds the data folder for the events.
func tailFromServer(ctx context.Context, data string, agg eventlog.Aggregate, f eventFilter, follow bool, emit func([]byte) error) error {
	info, err := runningServer(data)
	if err != nil {
		return err
	}
	u := fmt.Sprintf("http://%s/events/%s/%s?%s", info.Addr, url.PathEscape(agg.Kind), url.PathEscape(agg.ID), f.query(follow).Encode())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("asking the running server (pid %d) at %s: %w", info.PID, info.Addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return errNoEvents
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("server at %s answered %s: %s", info.Addr, resp.Status, body)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if err := emit(sc.Bytes()); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return sc.Err()
}

func projectionsCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "projections", Short: "Manage the bbolt projections"}
	rebuildCmd := &cobra.Command{
		Use:   "rebuild",
		Short: "Drop the projection file's contents and rebuild them by replaying the log (server stopped)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := existingData(o)
			if o.natsURL != "" { // the log is elsewhere: a new data folder gets its projection file
				data, err = filepath.Abs(o.data)
			}
			if err != nil {
				return err
			}
			lock, err := lockData(data)
			if err != nil {
				return fmt.Errorf("%w; stop the server first", err)
			}
			defer lock.release()
			return rebuild(cmd.Context(), o, data, o.logger)
		},
	}
	addLogFlags(rebuildCmd.Flags(), o)
	cmd.AddCommand(rebuildCmd)
	return cmd
}

func rebuild(ctx context.Context, o *options, data string, logger interface {
	Info(string, ...any)
}) error {
	if ctx == nil {
		ctx = context.Background()
	}
	start := time.Now()
	p, err := platform.Open(ctx, platform.Config{Data: data, Log: logConfig(o), Logger: o.logger}, nil)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := p.Runtime.Reset(); err != nil {
		return fmt.Errorf("reset projections: %w", err)
	}
	if p.TraceProjector != nil {
		if err := p.TraceProjector.Reset(); err != nil {
			return fmt.Errorf("reset trace projections: %w", err)
		}
	}
	if err := p.Start(ctx); err != nil {
		return err
	}
	if p.TraceProjector != nil {
		// Start waits for the runtime's projections only; a rebuild waits for the traces too.
		if err := p.TraceProjector.CatchUp(ctx); err != nil {
			return fmt.Errorf("rebuild trace projections: %w", err)
		}
	}
	logger.Info("projections rebuilt", "file", platform.DBPath(data),
		"events", p.Runtime.Applied(), "duration", time.Since(start).Round(time.Millisecond))
	return nil
}
