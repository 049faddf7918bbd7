package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/jetgraph/jetgraph/engine/controlplane/seal"
)

// secretsCommand is `jetgraph secrets`: the key that seals the deployments' secrets at rest.
func secretsCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secrets",
		Short: "Manage the key that encrypts the deployments' secrets at rest",
		Long: `The control plane encrypts every deployment secret's value (AES-256-GCM) before it is
appended to the log, so neither the stream's files nor controlplane.db hold it in clear text.
The keyring is ` + seal.KeyEnv + ` (base64 keys separated by commas, the current one first) when
set, else <data>/` + seal.KeyFileName + ` (one base64 key a line, the current one first; mode
0600, made on first start).`,
	}
	rotate := &cobra.Command{
		Use:   "rotate-key",
		Short: "Put a new key in front of <data>/" + seal.KeyFileName + " (restart the server to seal with it)",
		Long: `Adds a new random key in front of the data folder's key file. New secret values are sealed
with it once the server restarts; the older keys stay in the file, because the log keeps every
value they sealed and a redeploy of an older revision opens them. With ` + seal.KeyEnv + `, rotate
by putting a new key (openssl rand -base64 32) in front of its list instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if os.Getenv(seal.KeyEnv) != "" {
				return fmt.Errorf("%s is set: the keyring is the environment's; put a new key in front of its list", seal.KeyEnv)
			}
			data, err := filepath.Abs(o.data)
			if err != nil {
				return err
			}
			id, err := seal.Rotate(data)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(o.prog.Stdout, "new current key %s in %s; restart the server to seal with it\n", id, filepath.Join(data, seal.KeyFileName))
			return err
		},
	}
	rotate.Flags().StringVar(&o.data, "data", ".jetgraph", "data folder whose "+seal.KeyFileName+" is rotated")
	cmd.AddCommand(rotate)
	return cmd
}
