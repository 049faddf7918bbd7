package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// configCommand is `jetgraph config`: what a graph.json may be checked with before it is served.
func configCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check a graph.json",
		Args:  cobra.NoArgs,
	}
	check := &cobra.Command{
		Use:   "check",
		Short: "Check the graph.json --config names as serve would load it, and print the graphs it serves",
		Long: `Check the graph.json --config names as serve would load it: every graph, template, model
and tool it names must exist in this program (jetgraph, or your own program built on cli.Main).
It prints the ids of the graphs it would serve, one a line; an invalid file is an error naming
the key and the reason. The control plane builds a revision with it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.config == "" {
				return fmt.Errorf("config check: --config is required")
			}
			reg, err := servedGraphs(o)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(o.prog.Stdout, strings.Join(reg.IDs(), "\n"))
			return err
		},
	}
	check.Flags().StringVar(&o.config, "config", "", "the graph.json to check")
	cmd.AddCommand(check)
	return cmd
}
