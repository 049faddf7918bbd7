package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/jetgraph/jetgraph/engine/replay"
)

func exportCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "export", Short: "Write a thread as one self-contained file (.jgx) on stdout"}
	thread := &cobra.Command{
		Use:   "thread <thread_id>",
		Short: "Export a thread: its runs, checkpoints, writes and the model and tool outputs in them",
		Long: `Write one thread as a self-contained JSON file on stdout (jetgraph export thread <id> > thread.jgx):
its events in log order (runs, attempts, checkpoints, pending writes; every model and tool output
is in the writes, by node and step) and its metadata. 'jetgraph import' loads it into another
jetgraph, 'jetgraph replay --file' shows it.

It reads the log as 'jetgraph events' does: directly, or through the server holding --data.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			id, events, err := threadEvents(ctx, o, args[0])
			if err != nil {
				return err
			}
			f, err := replay.NewFile(id, events)
			if err != nil {
				return fmt.Errorf("export %s: %w", args[0], err)
			}
			return json.NewEncoder(o.prog.Stdout).Encode(f)
		},
	}
	addLogFlags(thread.Flags(), o)
	cmd.AddCommand(thread)
	return cmd
}

func importCommand(o *options) *cobra.Command {
	var keepID bool
	var serverURL string
	cmd := &cobra.Command{
		Use:   "import <file.jgx>",
		Short: "Load an exported thread into a running jetgraph (POST /threads/import)",
		Long: `Load a thread written by 'jetgraph export thread' into the jetgraph holding --data (or at
--url): its metadata, checkpoints and pending writes, under a new thread id (--keep-id: the
file's). Its state, history and forks work as on the original; its runs are not made again
('jetgraph replay --file' shows them). Prints the new thread.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := readFile(args[0])
			if err != nil {
				return err
			}
			base, err := serverBase(o, serverURL)
			if err != nil {
				return err
			}
			u := base + "/threads/import"
			if keepID {
				u += "?keep_id=true"
			}
			out, err := postJSON(cmd.Context(), u, f)
			if err != nil {
				return fmt.Errorf("import %s: %w", args[0], err)
			}
			_, err = o.prog.Stdout.Write(append(out, '\n'))
			return err
		},
	}
	cmd.Flags().BoolVar(&keepID, "keep-id", false, "keep the file's thread id (another jetgraph's)")
	addServerFlags(cmd.Flags(), o, &serverURL)
	return cmd
}

// readFile reads and checks an export file.
func readFile(path string) (*replay.File, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f replay.File
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("%s is not a jetgraph export: %w", path, err)
	}
	if err := f.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &f, nil
}
