package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jetgraph/jetgraph/engine/controlplane/supervise"
	"github.com/jetgraph/jetgraph/eventlog"
)

// TestRevisionRunners checks the control plane's wiring of the builder and the deployer: the
// embedded server listens on loopback with accounts, a deployment's namespace is provisioned
// (its key file readable by its owner only), custom_url is under the server's URL.
func TestRevisionRunners(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	cfg := withDeploymentNamespaces(eventlog.Config{Dir: data})
	if !cfg.Accounts || cfg.Listen != "127.0.0.1:-1" || !cfg.JetgraphListener {
		t.Fatalf("config %+v", cfg)
	}
	if c := withDeploymentNamespaces(eventlog.Config{Dir: data, Listen: "127.0.0.1:4222"}); !c.Accounts || c.JetgraphListener {
		t.Errorf("--nats-listen's listener is for other programs too: %+v", c)
	}
	if c := withDeploymentNamespaces(eventlog.Config{URLs: "nats://x:4222"}); c.Accounts || c.Listen != "" {
		t.Errorf("an external cluster's config changed: %+v", c)
	}
	l, err := eventlog.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	b, s, err := revisionRunners(ctx, l, supervise.EmbeddedAccounts{Log: l}, data, "http://localhost:8123")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if b.Objects == nil || b.Jetgraph == "" {
		t.Errorf("builder %+v", b)
	}
	if err := s.Provision(ctx, "tenant", "d1"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(data, "deployments", "d1", eventlog.CredsFileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the deployment's key file: %v %v", fi, err)
	}
	if got := s.CustomURL("d1"); got != "http://localhost:8123/deployments/d1" {
		t.Errorf("custom_url %s", got)
	}
}
