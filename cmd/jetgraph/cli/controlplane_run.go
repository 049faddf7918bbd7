package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jetgraph/jetgraph/engine/controlplane/build"
	"github.com/jetgraph/jetgraph/engine/controlplane/supervise"
	"github.com/jetgraph/jetgraph/eventlog"
)

// RevisionsBucket is the object store bucket of the programs built from deployments' Go
// modules.
const RevisionsBucket = "JG_REVISIONS"

// withDeploymentNamespaces is the log configuration a control plane needs: deployments' data
// namespaces are accounts of the embedded server, which their processes reach on loopback
// (a random port unless --nats-listen chooses one), authenticated. A listener of its own is
// for jetgraph processes only (with --sync always they wait for the store's sync rounds, and
// other NATS clients are refused); --nats-listen's is for other programs too.
func withDeploymentNamespaces(c eventlog.Config) eventlog.Config {
	if c.URLs == "" {
		c.Accounts = true
		if c.Listen == "" {
			c.Listen, c.JetgraphListener = "127.0.0.1:-1", true
		}
	}
	return c
}

// jetgraphBinary is the jetgraph program that checks and serves config revisions: this one
// (tests, whose program is a test binary, give a built jetgraph).
var jetgraphBinary = os.Executable

// revisionRunners builds and deploys the control plane's revisions (controlplane.Builder and
// controlplane.Deployer) for the log l (opened with withDeploymentNamespaces when embedded) of
// data folder data, the deployments' data namespaces made by ns; baseURL is the server's URL,
// the base of the deployments' custom_url. The caller closes the supervisor when it stops (the
// processes stop; Deploy starts them again).
func revisionRunners(ctx context.Context, l *eventlog.Log, ns supervise.Namespaces, data, baseURL string) (*build.Builder, *supervise.Supervisor, error) {
	exe, err := jetgraphBinary()
	if err != nil {
		return nil, nil, fmt.Errorf("deployments: %w", err)
	}
	objs, err := l.OpenObjects(ctx, RevisionsBucket, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("deployments: %w", err)
	}
	dir := filepath.Join(data, "deployments")
	// A built LangGraph project lives in its revision's folder of the supervisor's (removed with
	// the deployment); the dependencies its revisions share are cached beside.
	b := &build.Builder{Dir: filepath.Join(dir, ".builds"), Jetgraph: exe, Objects: objs, Projects: dir,
		Cache: filepath.Join(dir, ".cache")}
	s := &supervise.Supervisor{Dir: dir, Jetgraph: exe, NATS: ns, Objects: objs, Projects: b, BaseURL: baseURL}
	return b, s, nil
}
