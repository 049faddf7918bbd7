package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/keys"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/projections"
	"github.com/jetgraph/jetgraph/projections/deployments"
)

// APIKeyEnv names the environment variable `jetgraph events deployment` reads the API key of
// the deployment's tenant from, when it asks the server that holds the data folder.
const APIKeyEnv = "JETGRAPH_API_KEY"

// keysCommand is `jetgraph keys`: the control plane's API keys.
func keysCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Create, list and revoke the control plane's API keys (server running or stopped)",
		Long: `Create, list and revoke the API keys of the deployment control plane (/v2, /v1).

A key belongs to a tenant, named here; its tenant_id is derived from the name. Keys are stored
hashed: 'keys create' prints the new key once, and nothing shows it again.

The commands write to the log directly: from --nats-url when given (a server's --nats-listen,
with --nats-creds); else from the embedded store in --data while no server holds it, or, while a
server holds it, through that server's embedded NATS (the address in <data>/serve.json, the key
<data>/` + eventlog.CredsFileName + `): it listens on loopback when the control plane is on, or with
--nats-listen. A key made or revoked while the server runs works at once.`,
	}
	var tenant string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a key for a tenant and print it (once)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withKeys(cmd.Context(), o, func(ctx context.Context, ks *keys.Service) error {
				key, rec, err := ks.Create(ctx, tenant, false, "")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(o.prog.Stdout, "key:       %s\nid:        %s\ntenant:    %s\ntenant_id: %s\n", key, rec.ID, rec.TenantName, rec.TenantID)
				return err
			})
		},
	}
	create.Flags().StringVar(&tenant, "tenant", "", "the tenant's name (required)")
	_ = create.MarkFlagRequired("tenant")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the keys: id, key prefix, tenant, admin, revoked, the deployment of a deployment's trace key",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withKeys(cmd.Context(), o, func(ctx context.Context, ks *keys.Service) error {
				all, err := ks.List(ctx)
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(o.prog.Stdout, 2, 4, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tPREFIX\tTENANT\tTENANT_ID\tADMIN\tREVOKED\tCREATED\tDEPLOYMENT")
				for _, k := range all {
					dep := k.DeploymentID
					if dep == "" {
						dep = "-"
					}
					fmt.Fprintf(w, "%s\t%s…\t%s\t%s\t%v\t%v\t%s\t%s\n", k.ID, k.Prefix, k.TenantName, k.TenantID, k.Admin, k.Revoked, k.CreatedAt.Format("2006-01-02T15:04:05Z"), dep)
				}
				return w.Flush()
			})
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke <id>",
		Short: "Revoke a key: it is refused from then on",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withKeys(cmd.Context(), o, func(ctx context.Context, ks *keys.Service) error {
				return ks.Revoke(ctx, args[0])
			})
		},
	}
	for _, c := range []*cobra.Command{create, list, revoke} {
		addLogFlags(c.Flags(), o)
		cmd.AddCommand(c)
	}
	return cmd
}

// withKeys runs f with the keys service on the log the flags name, its projection folded into
// a file of its own for the length of the command.
func withKeys(ctx context.Context, o *options, f func(context.Context, *keys.Service) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	open := withLog
	if o.natsURL == "" {
		data, err := existingData(o)
		if err != nil {
			return err
		}
		lock, err := lockData(data)
		switch {
		case errors.As(err, new(errDataInUse)):
			if open, err = runningServerLog(data, err); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			defer lock.release()
		}
	}
	return open(ctx, o, func(l *eventlog.Log) error {
		dir, err := os.MkdirTemp("", "jetgraph-keys-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		db, err := projections.OpenDB(filepath.Join(dir, "controlplane.db"), o.logger)
		if err != nil {
			return err
		}
		defer db.Close()
		view := deployments.New(db)
		proj := projections.NewProjector(db, l, eventlog.ControlStream, view)
		pctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = proj.Run(pctx) }()
		defer func() { cancel(); <-done }()
		return f(ctx, keys.New(l, proj, view))
	})
}

// runningServerWait bounds the connection to a running server's log.
const runningServerWait = 30 * time.Second

// runningServerLog opens the log of the server that holds data (inUse says so) through its
// embedded NATS server, which listens on loopback and admits the data folder's user key; the
// server's streams are used as they are. A server that does not listen is an error saying how
// to make it.
func runningServerLog(data string, inUse error) (func(context.Context, *options, func(*eventlog.Log) error) error, error) {
	info, err := runningServer(data)
	if err != nil {
		return nil, err
	}
	creds := eventlog.CredsFile(data)
	if info.NATSURL == "" {
		return nil, fmt.Errorf("%w: its NATS server does not listen (--no-control-plane without --nats-listen): stop it first, or serve with --nats-listen", inUse)
	}
	if _, err := os.Stat(creds); err != nil {
		return nil, fmt.Errorf("%w: its NATS key: %w", inUse, err)
	}
	return func(ctx context.Context, o *options, f func(*eventlog.Log) error) error {
		cfg := logConfig(o)
		cfg.Dir, cfg.URLs, cfg.Creds, cfg.Listen, cfg.Existing = "", info.NATSURL, creds, "", true
		octx, cancel := context.WithTimeout(ctx, runningServerWait)
		defer cancel()
		l, err := eventlog.Open(octx, cfg)
		if err != nil {
			return fmt.Errorf("the log of the running server (pid %d) at %s: %w", info.PID, info.NATSURL, err)
		}
		defer l.Close()
		return f(l)
	}, nil
}

// printDeploymentEvents prints a deployment's events as JSON lines, secret values masked: from
// the log when it can be read, else from the server that holds the data folder (GET
// /v2/deployments/<id>/events with the key of $JETGRAPH_API_KEY).
func printDeploymentEvents(ctx context.Context, o *options, id string, follow bool, w io.Writer) error {
	u, err := uuid.Parse(id)
	if err != nil {
		return fmt.Errorf("deployment %s: a deployment id is a UUID: %w", id, err)
	}
	id = u.String()
	agg := controlplane.DeploymentAggregate(id)
	fromLog := func(l *eventlog.Log) error {
		n := 0
		err := l.Tail(ctx, agg, follow, func(e eventlog.Event) error {
			n++
			line, err := json.Marshal(controlplane.MaskEvent(e))
			if err != nil {
				return err
			}
			_, err = w.Write(append(line, '\n'))
			return err
		})
		if err == nil && n == 0 {
			return fmt.Errorf("deployment %s: %w", id, errNoEvents)
		}
		return err
	}
	if o.natsURL != "" {
		return withLog(ctx, o, fromLog)
	}
	data, err := existingData(o)
	if err != nil {
		return err
	}
	lock, err := lockData(data)
	if errors.As(err, new(errDataInUse)) {
		return deploymentEventsFromServer(ctx, data, id, w)
	}
	if err != nil {
		return err
	}
	defer lock.release()
	return withLog(ctx, o, fromLog)
}

// deploymentEventsFromServer asks the server that holds data for a deployment's events.
func deploymentEventsFromServer(ctx context.Context, data, id string, w io.Writer) error {
	info, err := runningServer(data)
	if err != nil {
		return err
	}
	key := os.Getenv(APIKeyEnv)
	if key == "" {
		return fmt.Errorf("a server (pid %d) holds %s: set %s to an API key of the deployment's tenant to ask it", info.PID, data, APIKeyEnv)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+info.Addr+"/v2/deployments/"+id+"/events", nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Api-Key", key)
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
		if _, err := w.Write(append(sc.Bytes(), '\n')); err != nil {
			return err
		}
	}
	return sc.Err()
}
