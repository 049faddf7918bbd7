package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func forkCommand(o *options) *cobra.Command {
	var step int
	var checkpoint, update, asNode, serverURL string
	cmd := &cobra.Command{
		Use:   "fork <thread_id>",
		Short: "Make a new thread from a step of another (POST /threads/{id}/fork), optionally updating its state",
		Long: `Make a new thread whose history is the given thread's up to a step (--step N, on the
branch of its newest checkpoint, or --checkpoint <id>), with --update '<values JSON>' written on
it as node --as-node. The new thread's metadata names where it came from (forked_from); it is
printed as JSON. Run it again from there with POST /threads/<new id>/runs.

It asks the server holding --data (its serve.json), or the one at --url.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := map[string]any{}
			switch {
			case cmd.Flags().Changed("step") == (checkpoint != ""):
				return fmt.Errorf("fork: give --step or --checkpoint")
			case checkpoint != "":
				body["checkpoint_id"] = checkpoint
			default:
				body["step"] = step
			}
			if update != "" {
				var v any
				if err := json.Unmarshal([]byte(update), &v); err != nil {
					return fmt.Errorf("fork: --update is not JSON: %w", err)
				}
				body["values"] = v
			}
			if asNode != "" {
				body["as_node"] = asNode
			}
			base, err := serverBase(o, serverURL)
			if err != nil {
				return err
			}
			out, err := postJSON(cmd.Context(), base+"/threads/"+url.PathEscape(args[0])+"/fork", body)
			if err != nil {
				return fmt.Errorf("fork %s: %w", args[0], err)
			}
			_, err = o.prog.Stdout.Write(append(out, '\n'))
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&step, "step", 0, "the step forked (a checkpoint's metadata.step; -1 is the input)")
	f.StringVar(&checkpoint, "checkpoint", "", "the checkpoint forked, instead of --step")
	f.StringVar(&update, "update", "", "a state update (JSON values) written on the forked step")
	f.StringVar(&asNode, "as-node", "", "the node the update is written as")
	addServerFlags(f, o, &serverURL)
	return cmd
}

// addServerFlags adds the flags of a command that asks a running server: --url, or --data to
// find the server holding that folder.
func addServerFlags(f *pflag.FlagSet, o *options, serverURL *string) {
	f.StringVar(&o.data, "data", ".jetgraph", "data folder of the running server to ask (its serve.json names it)")
	f.StringVar(serverURL, "url", "", "the jetgraph server to ask, instead of the one holding --data")
}

// serverBase is the base URL of the server a command asks: --url, or the one serving --data.
func serverBase(o *options, serverURL string) (string, error) {
	if serverURL != "" {
		return strings.TrimSuffix(serverURL, "/"), nil
	}
	data, err := existingData(o)
	if err != nil {
		return "", err
	}
	lock, err := lockData(data)
	if err == nil {
		lock.release()
		return "", fmt.Errorf("no server holds data folder %s: start jetgraph serve on it, or give --url", data)
	}
	info, err := runningServer(data)
	if err != nil {
		return "", err
	}
	return "http://" + info.Addr, nil
}

// postJSON posts body and returns the answer, an error carrying the server's detail unless 2xx.
func postJSON(ctx context.Context, u string, body any) ([]byte, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("server answered %s: %s", resp.Status, bytes.TrimSpace(out))
	}
	return out, nil
}
