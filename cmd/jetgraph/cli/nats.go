package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/jetgraph/jetgraph/eventlog"
)

// natsCommand is `jetgraph nats`: helpers for running jetgraph on a NATS cluster of its own.
func natsCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "nats",
		Short: "Set up a NATS server in operator mode for jetgraph (deployments on a cluster)",
	}
	var listen string
	initCmd := &cobra.Command{
		Use:   "init DIR",
		Short: "Write an operator, its accounts and credentials, and a nats-server configuration into DIR",
		Long: `Write into DIR what a NATS server in operator mode needs to host jetgraph and its deployments:
an operator with a signing key, the system account, an account for jetgraph's own log, a
user's credentials for each, and server.conf, which trusts the operator, resolves accounts with
the NATS-based resolver (so that jetgraph can push each deployment's account at run time) and
runs JetStream. Keys and credentials are readable by their owner only; a DIR that holds a
server.conf already is left alone.

This is the development stand-in for a production cluster in operator mode (set up with nsc
the same way): start the server with the configuration, then jetgraph with the flags printed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			setup, err := eventlog.InitOperator(args[0], listen)
			if err != nil {
				return err
			}
			f := func(name string) string { return filepath.Join(setup.Dir, name) }
			_, err = fmt.Fprintf(o.prog.Stdout, `NATS operator setup written to %s

Start the server (from jetgraph's repository, or with any nats-server 2.12+ binary):
    go run github.com/nats-io/nats-server/v2 -c %s

Then jetgraph on it, as many processes as you like (each with its own --data and --addr):
    jetgraph serve --nats-url nats://%s --nats-creds %s \
      --nats-operator-key %s --nats-system-creds %s
`, setup.Dir, f(eventlog.OperatorConfigFile), setup.Listen, f(eventlog.JetgraphCredsFile),
				f(eventlog.OperatorSigningKeyFile), f(eventlog.SystemCredsFile))
			return err
		},
	}
	initCmd.Flags().StringVar(&listen, "listen", "127.0.0.1:4222", "host:port the server listens on for clients")
	cmd.AddCommand(initCmd)
	return cmd
}
