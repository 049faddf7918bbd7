package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jetgraph/jetgraph/engine/graphs"
	"github.com/jetgraph/jetgraph/engine/hosting"

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
and tool it names must exist in this program (jetgraph, or your own program built on cli.Main),
and every Python graph (./path/file.py:attr) must load: its host is started with --python (or
the Python found as serve finds it) and loads it with the project's langgraph. langgraph.json's
env (an object or a .env file), dependencies, store.index, checkpointer.ttl and http are checked
as serve reads them, and http.app (your custom routes) must load in its host too.
It prints the ids of the graphs it would serve, one a line; an invalid file is an error naming
the key and the reason. The control plane builds a revision with it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.config == "" {
				return fmt.Errorf("config check: --config is required")
			}
			proj, err := servedProject(o)
			if err != nil {
				return err
			}
			reg := proj.Graphs
			// store.index as serve makes it: an embeddings server without its key is named here.
			if _, err := (storeOptions{keyEnv: "OPENAI_API_KEY"}).index(proj, o.config); err != nil {
				return err
			}
			if err := checkHosted(cmd.Context(), o, reg, proj.HTTP, proj.Auth); err != nil {
				return err
			}
			_, err = fmt.Fprintln(o.prog.Stdout, strings.Join(reg.IDs(), "\n"))
			return err
		},
	}
	check.Flags().StringVar(&o.config, "config", "", "the graph.json to check")
	check.Flags().StringVar(&o.python, "python", "", "the Python that loads the config's Python graphs (default: as serve finds it)")
	check.Flags().StringVar(&o.node, "node", "", "the Node that loads the config's TypeScript graphs (default: node on PATH)")
	cmd.AddCommand(check)
	return cmd
}

// checkHosted loads the hosted graphs of reg, and the custom routes of http.app, in their
// hosts, as serve would, and reports every graph (and the app) that does not load with the
// reason its host gave.
func checkHosted(ctx context.Context, o *options, reg *graphs.Registry, httpConfig *graphs.HTTPConfig, auth *graphs.AuthConfig) error {
	var appCode *graphs.Code
	if httpConfig != nil {
		appCode = httpConfig.App
	}
	hosts, app, userAuth, err := hosting.AttachProject(reg, appCode, auth, hosting.Options{Python: o.python, Node: o.node, Logger: o.logger})
	if err != nil {
		return err
	}
	var errs []error
	started := true
	for _, h := range hosts {
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := h.WaitReady(wctx)
		cancel()
		if err != nil {
			errs, started = append(errs, h.Health()), false
		}
		for id, st := range h.Graphs() {
			if !st.OK {
				errs = append(errs, fmt.Errorf("%s: graphs.%s: %s", o.config, id, st.Error))
			}
		}
	}
	if app != nil && started {
		if err := app.Err(); err != nil {
			errs = append(errs, fmt.Errorf("%s: http.app: %w", o.config, err))
		}
	}
	if userAuth != nil && started {
		if err := userAuth.WaitLoaded(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: auth.path: %w", o.config, err))
		}
	}
	for _, h := range hosts {
		h.Close()
	}
	return errors.Join(errs...)
}
