package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/hosting"
	"github.com/jetgraph/jetgraph/engine/replay"
	"github.com/jetgraph/jetgraph/eventlog"
)

func replayCommand(o *options) *cobra.Command {
	var asJSON bool
	var step int
	var threadID, runID, file, graphID string
	var showFile bool
	show := func(cmd *cobra.Command, thread, run string) error {
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		f := replay.Filter{RunID: run}
		if cmd.Flags().Changed("step") {
			f.Step = &step
		}
		var t *replay.Thread
		var err error
		if file != "" {
			var f *replay.File
			if f, err = readFile(file); err == nil {
				t, err = replay.Read(f.ThreadID, f.Events)
			}
		} else {
			t, err = readThread(ctx, o, thread)
		}
		if err != nil {
			return err
		}
		if t, err = t.Apply(f); err != nil {
			return err
		}
		if file == "" {
			tc, err := openTracedCalls(ctx, o)
			if err != nil {
				return err
			}
			if tc != nil {
				err = t.JoinTraces(ctx, tc)
				tc.closer()
				if err != nil {
					return err
				}
			}
		}
		if asJSON {
			enc := json.NewEncoder(o.prog.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(t)
		}
		return replay.Text(o.prog.Stdout, t)
	}
	cmd := &cobra.Command{
		Use:   "replay [--file thread.jgx]",
		Short: "Show what a run or a thread did, super-step by super-step, from its log",
		Long: `Show each super-step of a thread's runs from the event log: the nodes that ran and
their writes, the state diff against the previous checkpoint, what runs next, the model calls
(model, tokens, and from the run's trace their latency, time to first token and cost) and tool calls (arguments, results) of the step, interrupts, errors, timing,
and which process and attempt ran it (a takeover shows as attempt 2 on another process).

It reads the log as 'jetgraph events' does: directly, or through the server holding --data.

With --file (an export: 'jetgraph export thread'), it re-executes the recorded runs offline
with this binary's graphs (the built-in ones, or --config's; --graph: another graph id), in
memory, and compares every super-step with the record: the nodes that ran and what each wrote.
It reports the first divergence and exits non-zero on one, so recorded threads work as
regression tests. --show shows the file's steps instead. A Python or TypeScript graph of
--config re-executes in its host, started as serve starts it (--python, --node); its steps,
which record no writes, are compared by what each changed in the state. Its model calls are
made by your graph's own model (a Go graph's are answered from the recording).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return cmd.Help()
			}
			if showFile {
				return show(cmd, "", runID)
			}
			return rerun(cmd.Context(), o, file, graphID, asJSON)
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "re-execute the runs of an export file (.jgx) and report the first divergence")
	cmd.Flags().BoolVar(&showFile, "show", false, "with --file: show the file's steps instead of re-executing them")
	cmd.Flags().StringVar(&graphID, "graph", "", "with --file: re-execute with this graph instead of the recorded one")
	cmd.Flags().StringVar(&o.config, "config", "", "with --file: the graph.json whose graphs re-execute the runs")
	cmd.Flags().StringVar(&o.python, "python", "", "with --file: the Python that runs the config's Python graphs (default: as serve finds it)")
	cmd.Flags().StringVar(&o.node, "node", "", "with --file: the Node that runs the config's TypeScript graphs (default: node on PATH)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of text")
	cmd.Flags().IntVar(&step, "step", 0, "show only this step (a checkpoint's metadata.step)")
	cmd.Flags().StringVar(&runID, "run", "", "show only this run")
	flags := func(c *cobra.Command) {
		addLogFlags(c.Flags(), o)
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of text")
		c.Flags().IntVar(&step, "step", 0, "show only this step (a checkpoint's metadata.step)")
		c.Flags().StringVar(&o.trace.prices, "trace-prices", "",
			"without a server holding --data: JSON file of model prices for the model calls' costs (as serve's)")
	}
	threadCmd := &cobra.Command{
		Use:   "thread <thread_id>",
		Short: "Show every run of a thread (--run: one of them)",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return show(cmd, args[0], runID) },
	}
	flags(threadCmd)
	threadCmd.Flags().StringVar(&runID, "run", "", "show only this run")
	runCmd := &cobra.Command{
		Use:   "run <run_id> [--thread <thread_id>]",
		Short: "Show one run",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			thread := threadID
			if thread == "" {
				var err error
				if thread, err = runThread(cmd.Context(), o, args[0]); err != nil {
					return err
				}
			}
			return show(cmd, thread, args[0])
		},
	}
	flags(runCmd)
	runCmd.Flags().StringVar(&threadID, "thread", "", "the thread the run ran on (default: looked up by the run's id)")
	cmd.AddCommand(threadCmd, runCmd)
	return cmd
}

// errDiverged is a re-execution that differs from the record (the report says where).
var errDiverged = errors.New("the re-execution diverged from the record")

// rerun re-executes an export's runs with the graphs this binary serves and reports.
func rerun(ctx context.Context, o *options, file, graphID string, asJSON bool) error {
	f, err := readFile(file)
	if err != nil {
		return err
	}
	t, err := replay.Read(f.ThreadID, f.Events)
	if err != nil {
		return err
	}
	reg, err := servedGraphs(o)
	if err != nil {
		return err
	}
	// A hosted graph re-executes in its host, started as serve starts it, stopped after.
	hosts, err := hosting.Attach(reg, hosting.Options{Python: o.python, Node: o.node, Logger: o.logger})
	if err != nil {
		return err
	}
	defer func() {
		for _, h := range hosts {
			h.Close()
		}
	}()
	rep, err := replay.Rerun(ctx, t, reg.Runnable, graphID)
	if err != nil {
		return err
	}
	if asJSON {
		if err := json.NewEncoder(o.prog.Stdout).Encode(rep); err != nil {
			return err
		}
	} else if rep.Divergence == nil {
		fmt.Fprintf(o.prog.Stdout, "replayed %d run(s), %d step(s): no divergence\n", rep.Runs, rep.Steps)
	} else {
		fmt.Fprintf(o.prog.Stdout, "replayed %d run(s), %d step(s) alike, then a divergence:\n%s\n", rep.Runs, rep.Steps, rep.Divergence)
	}
	if rep.Divergence != nil {
		return errDiverged
	}
	return nil
}

// readThread reads a thread's events, from the log or the server holding --data, as a replay.
func readThread(ctx context.Context, o *options, threadID string) (*replay.Thread, error) {
	id, events, err := threadEvents(ctx, o, threadID)
	if err != nil {
		return nil, err
	}
	return replay.Read(id, events)
}

// threadEvents reads a thread's events from the log or the server holding --data.
func threadEvents(ctx context.Context, o *options, threadID string) (string, []eventlog.Event, error) {
	id, err := engine.AggregateID("thread", threadID)
	if err != nil {
		return "", nil, fmt.Errorf("thread %s: %w", threadID, err)
	}
	agg := eventlog.Aggregate{Kind: "thread", Tenant: engine.DefaultTenant, ID: id}
	var events []eventlog.Event
	err = withEvents(ctx, o, agg, func(tail tailFunc) error {
		return tail(eventFilter{}, false, func(line []byte) error {
			var e eventlog.Event
			if err := json.Unmarshal(line, &e); err != nil {
				return err
			}
			events = append(events, e)
			return nil
		})
	})
	if err == nil && len(events) == 0 {
		err = errNoEvents
	}
	if errors.Is(err, errNoEvents) {
		return "", nil, fmt.Errorf("thread %s: %w", threadID, err)
	}
	return id, events, err
}
