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
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/platform"
	"github.com/jetgraph/jetgraph/eventlog"
)

func eventsCommand(o *options, stdout, stderr io.Writer) *cobra.Command {
	var follow bool
	var tenant string
	cmd := &cobra.Command{
		Use:   "events <kind> <id>",
		Short: "Print the events of one aggregate (thread, assistant, store) as JSON lines, in log order",
		Long: `Print the raw event log of one aggregate as JSON lines, in log order.

It reads the log directly: from --nats-url when given, or from the embedded store in --data. When
a jetgraph server holds that data folder, it asks that server instead (GET /events/<kind>/<id>).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			id, err := engine.AggregateID(args[0], args[1])
			if err != nil {
				return fmt.Errorf("%s %s: %w", args[0], args[1], err)
			}
			agg := eventlog.Aggregate{Kind: args[0], Tenant: tenant, ID: id}
			if err := agg.Validate(); err != nil {
				return err
			}
			return printEvents(ctx, o, agg, follow, stdout)
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events until interrupted")
	cmd.Flags().StringVar(&tenant, "tenant", engine.DefaultTenant, "tenant that owns the aggregate")
	return cmd
}

func printEvents(ctx context.Context, o *options, agg eventlog.Aggregate, follow bool, w io.Writer) error {
	enc := json.NewEncoder(w)
	emit := func(e eventlog.Event) error { return enc.Encode(e) }
	if o.natsURL != "" {
		return withLog(ctx, o, func(l *eventlog.Log) error { return l.Tail(ctx, agg, follow, emit) })
	}
	data, err := filepath.Abs(o.data)
	if err != nil {
		return err
	}
	lock, err := lockData(data)
	var inUse errDataInUse
	if errors.As(err, &inUse) {
		return tailFromServer(ctx, data, agg, follow, w)
	}
	if err != nil {
		return err
	}
	defer lock.release()
	return withLog(ctx, o, func(l *eventlog.Log) error { return l.Tail(ctx, agg, follow, emit) })
}

// withLog opens the log the flags name, quietly, for the length of f.
func withLog(ctx context.Context, o *options, f func(*eventlog.Log) error) error {
	lc, err := logConfig(o)
	if err != nil {
		return err
	}
	lc.Logger = discardLogger()
	l, err := eventlog.Open(ctx, lc)
	if err != nil {
		return err
	}
	defer l.Close()
	return f(l)
}

// tailFromServer asks the server that holds the data folder for the events.
func tailFromServer(ctx context.Context, data string, agg eventlog.Aggregate, follow bool, w io.Writer) error {
	raw, err := os.ReadFile(serveInfoPath(data))
	if err != nil {
		return fmt.Errorf("data folder %s is locked by another process, and it left no serve.json: %w", data, err)
	}
	var info serveInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return fmt.Errorf("%s: %w", serveInfoPath(data), err)
	}
	u := fmt.Sprintf("http://%s/events/%s/%s", info.Addr, url.PathEscape(agg.Kind), url.PathEscape(agg.ID))
	if follow {
		u += "?follow=true"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("asking the running server (pid %d) at %s: %w", info.PID, info.Addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("server at %s answered %s: %s", info.Addr, resp.Status, body)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if _, err := fmt.Fprintln(w, sc.Text()); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return sc.Err()
}

func projectionsCommand(o *options, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "projections", Short: "Manage the bbolt projections"}
	cmd.AddCommand(&cobra.Command{
		Use:   "rebuild",
		Short: "Drop the projection file's contents and rebuild them by replaying the log",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := newLogger(o, stderr)
			if err != nil {
				return err
			}
			data, err := filepath.Abs(o.data)
			if err != nil {
				return err
			}
			lock, err := lockData(data)
			if err != nil {
				return fmt.Errorf("%w; stop the server first", err)
			}
			defer lock.release()
			return rebuild(cmd.Context(), o, data, logger)
		},
	})
	return cmd
}

func rebuild(ctx context.Context, o *options, data string, logger interface {
	Info(string, ...any)
}) error {
	if ctx == nil {
		ctx = context.Background()
	}
	lc, err := logConfig(o)
	if err != nil {
		return err
	}
	start := time.Now()
	p, err := platform.Open(ctx, platform.Config{Data: data, Log: lc}, nil)
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
