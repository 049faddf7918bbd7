package supervise

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/jetgraph/jetgraph/eventlog"
)

// Namespaces are the data namespaces of deployments: a NATS account each, where a
// deployment's processes keep the usual streams, apart from every other deployment's and from
// the control plane's log.
type Namespaces interface {
	// Provision makes deploymentID's namespace, or finds it, and makes sure credsFile holds
	// credentials that admit its processes into it (and nowhere else); it returns the URL they
	// connect to. It is idempotent.
	Provision(ctx context.Context, deploymentID, credsFile string) (url string, err error)
	// Remove deletes the namespace's data and stops admitting its processes. It is idempotent.
	Remove(ctx context.Context, deploymentID, credsFile string) error
}

// account is the NATS account of a deployment.
func account(deploymentID string) string { return "deployment-" + deploymentID }

// EmbeddedAccounts are namespaces as accounts of the control plane's embedded NATS server
// (eventlog.Log opened with Config.Accounts, listening on loopback): credsFile is a user key,
// generated once, that the server admits into the deployment's account alone.
type EmbeddedAccounts struct{ Log *eventlog.Log }

// Provision adds the deployment's account, admitting the key in credsFile (generated on first
// use); after a restart it recovers the account's streams.
func (e EmbeddedAccounts) Provision(_ context.Context, deploymentID, credsFile string) (string, error) {
	pub, err := eventlog.UserKey(credsFile)
	if err != nil {
		return "", err
	}
	if err := e.Log.AddAccount(account(deploymentID), pub); err != nil {
		return "", err
	}
	return e.Log.ClientURL(), nil
}

// Remove deletes the account's streams and forgets its key; a deployment never provisioned in
// this data folder (no key) has nothing to delete.
func (e EmbeddedAccounts) Remove(ctx context.Context, deploymentID, credsFile string) error {
	if _, err := os.Stat(credsFile); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	pub, err := eventlog.UserKey(credsFile)
	if err != nil {
		return err
	}
	// Added again first: after a restart, its streams are known once the account is.
	if err := e.Log.AddAccount(account(deploymentID), pub); err != nil {
		return err
	}
	return e.Log.RemoveAccount(ctx, account(deploymentID), pub)
}

// ClusterAccounts are namespaces as accounts of a NATS cluster in operator mode
// (eventlog.Operator): the account is pushed to the cluster's resolver, and credsFile holds a
// user JWT signed by the account's key, which every process holding the operator key derives
// alike, so any process of the cluster runs any deployment.
type ClusterAccounts struct{ Operator *eventlog.Operator }

// Provision pushes the deployment's account to the cluster and mints its processes a user,
// once per credentials file.
func (c ClusterAccounts) Provision(ctx context.Context, deploymentID, credsFile string) (string, error) {
	if err := c.Operator.AddAccount(ctx, account(deploymentID)); err != nil {
		return "", err
	}
	if _, err := os.Stat(credsFile); errors.Is(err, fs.ErrNotExist) {
		creds, err := c.Operator.UserCreds(account(deploymentID), "jetgraph-deployment-"+deploymentID)
		if err != nil {
			return "", err
		}
		if err := writeFileAtomic(credsFile, creds); err != nil {
			return "", fmt.Errorf("deployment %s: credentials: %w", deploymentID, err)
		}
	} else if err != nil {
		return "", err
	}
	return c.Operator.URLs(), nil
}

// Remove cuts every user of the account off, wherever in the cluster it is connected, and
// deletes the account's streams.
func (c ClusterAccounts) Remove(ctx context.Context, deploymentID, _ string) error {
	return c.Operator.RemoveAccount(ctx, account(deploymentID))
}

// writeFileAtomic writes a file readable by its owner only (a key), whole or not at all.
func writeFileAtomic(path string, body []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
