package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// CredsFileName is the file, in the data folder, holding the user key of an embedded server
// that listens (--nats-listen): the server admits only its holder, so a local process cannot
// read or write the log unasked. A second jetgraph passes it with --nats-creds, the nats CLI
// with --nkey.
const CredsFileName = "nats-user.nk"

// CredsFile is where the user key of the embedded server of data folder dir is kept.
func CredsFile(dir string) string { return filepath.Join(dir, CredsFileName) }

// listenerKey returns the user key pair of the embedded server of dir, generating it (a new
// file readable by its owner only) on first use and reusing it on every later start, so that the
// processes given it with --nats-creds connect again after a restart.
func listenerKey(dir string) (nkeys.KeyPair, error) { return userKey(CredsFile(dir)) }

// UserKey returns the public key of the user key kept in file path (a seed, the form
// --nats-creds takes), generating the file, readable by its owner only, on first use. The
// control plane gives each deployment's processes one, admitted into the deployment's account.
func UserKey(path string) (string, error) {
	kp, err := userKey(path)
	if err != nil {
		return "", err
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return "", fmt.Errorf("eventlog: NATS user key: %w", err)
	}
	return pub, nil
}

// userKey returns the user key pair kept in path, generating it on first use. A key file that
// group or others may read or write is refused, not fixed: it may have leaked, and whoever holds
// it may read and write the log.
func userKey(path string) (nkeys.KeyPair, error) {
	dir := filepath.Dir(path)
	seed, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return nil, fmt.Errorf("eventlog: generate the NATS user key: %w", err)
		}
		if seed, err = kp.Seed(); err != nil {
			return nil, fmt.Errorf("eventlog: generate the NATS user key: %w", err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("eventlog: NATS user key: %w", err)
		}
		if err := os.WriteFile(path, append(seed, '\n'), 0o600); err != nil {
			return nil, fmt.Errorf("eventlog: write the NATS user key: %w", err)
		}
		return kp, nil
	}
	if err != nil {
		return nil, fmt.Errorf("eventlog: read the NATS user key: %w", err)
	}
	if fi, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("eventlog: NATS user key: %w", err)
	} else if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("eventlog: NATS user key %s has mode %04o: others may have read it; "+
			"delete it (a new key is generated, and processes must be given it) or chmod 600 it if it did not leak", path, perm)
	}
	kp, err := nkeys.FromSeed(bytes.TrimSpace(seed))
	if err != nil {
		return nil, fmt.Errorf("eventlog: NATS user key %s: %w", path, err)
	}
	return kp, nil
}

// requireKey makes the embedded server admit only the holder of kp.
func requireKey(opts *server.Options, kp nkeys.KeyPair) error {
	pub, err := kp.PublicKey()
	if err != nil {
		return fmt.Errorf("eventlog: NATS user key: %w", err)
	}
	opts.Nkeys = []*server.NkeyUser{{Nkey: pub}}
	return nil
}

// keyOption authenticates a connection with kp.
func keyOption(kp nkeys.KeyPair) (nats.Option, error) {
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("eventlog: NATS user key: %w", err)
	}
	return nats.Nkey(pub, kp.Sign), nil
}

// credsOption authenticates a connection with the credentials in file: a NATS credentials file
// (user JWT and seed, as nsc writes them) or a user key seed (as an embedded server writes it).
func credsOption(file string) (nats.Option, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("eventlog: NATS credentials: %w", err)
	}
	if bytes.Contains(raw, []byte("BEGIN NATS USER JWT")) {
		return nats.UserCredentials(file), nil
	}
	opt, err := nats.NkeyOptionFromSeed(file)
	if err != nil {
		return nil, fmt.Errorf("eventlog: NATS credentials %s: %w", file, err)
	}
	return opt, nil
}
