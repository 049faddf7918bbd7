package keys_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane/keys"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/projections/deployments/deploymentstest"
)

// TestDeploymentKeys checks a deployment's trace keys on a real log and projection: minted for
// the deployment's tenant (named after the tenant's other keys), valid for that deployment
// only, accepted by the tracing API's resolver but not by the control plane's Authenticate,
// and revoked with the deployment; and the resolver's answer for every other kind of key.
func TestDeploymentKeys(t *testing.T) {
	ctx := context.Background()
	l := eventlogtest.Open(t)
	view, proj := deploymentstest.Open(t, l)
	ks := keys.New(l, proj, view)
	acme, acmeRec, err := ks.Create(ctx, "acme", false, "")
	if err != nil {
		t.Fatal(err)
	}
	const admin = "an-admin-key-0123456789"
	if _, err := ks.EnsureAdmin(ctx, admin); err != nil {
		t.Fatal(err)
	}
	dep, err := ks.MintDeploymentKey(ctx, acmeRec.TenantID, "d1", "host:/a")
	if err != nil {
		t.Fatal(err)
	}
	other, err := ks.MintDeploymentKey(ctx, acmeRec.TenantID, "d2", "host:/a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ks.MintDeploymentKey(ctx, "", "d3", "host:/a"); !engine.Is(engine.Invalid, err) {
		t.Errorf("a key without a tenant: %v", err)
	}
	for _, c := range []struct {
		key, deployment string
		valid           bool
	}{{dep, "d1", true}, {dep, "d2", false}, {other, "d2", true}, {acme, "d1", false}, {"jgk_nothing", "d1", false}} {
		if ok, err := ks.DeploymentKeyValid(ctx, c.key, c.deployment); err != nil || ok != c.valid {
			t.Errorf("DeploymentKeyValid(%.8s…, %s) = %v %v, want %v", c.key, c.deployment, ok, err, c.valid)
		}
	}
	if _, err := ks.Authenticate(ctx, dep, ""); !engine.Is(engine.Unauthorized, err) {
		t.Errorf("a deployment key at the control plane API: %v, want unauthorized", err)
	}
	all, _ := ks.List(ctx)
	for _, k := range all {
		if k.DeploymentID == "d1" && (k.TenantName != "acme" || k.TenantID != acmeRec.TenantID) {
			t.Errorf("the deployment key's record: %+v", k)
		}
	}
	kept, err := ks.MintDeploymentKey(ctx, acmeRec.TenantID, "d2", "host:/a")
	if err != nil {
		t.Fatal(err)
	}
	// Another process of a cluster runs d2 with a key of its own: replacing this one's keeps it.
	otherProcess, err := ks.MintDeploymentKey(ctx, acmeRec.TenantID, "d2", "host:/b")
	if err != nil {
		t.Fatal(err)
	}
	if err := ks.RevokeDeploymentKeys(ctx, "d2", "host:/a", kept); err != nil {
		t.Fatal(err)
	}
	if ok, err := ks.DeploymentKeyValid(ctx, otherProcess, "d2"); err != nil || !ok {
		t.Errorf("another process's key of the deployment revoked with this one's: %v %v", ok, err)
	}
	if err := ks.RevokeDeploymentKeys(ctx, "d1", "", ""); err != nil {
		t.Fatal(err)
	}
	if err := ks.RevokeDeploymentKeys(ctx, "d1", "", ""); err != nil {
		t.Errorf("revoking again: %v", err)
	}
	adminTenant := keys.TenantID(keys.AdminTenant)
	for _, c := range []struct {
		name, key, header string
		tenant            string
		known             bool
		unauthorized      bool
		forbidden         bool // a valid key naming a tenant it may not act for
	}{
		{"a tenant's key", acme, "", acmeRec.TenantID, true, false, false},
		{"a deployment's key", kept, "", acmeRec.TenantID, true, false, false},
		{"a deployment's key revoked but the one kept", other, "", "", false, true, false},
		{"a revoked deployment key", dep, "", "", false, true, false},
		{"the admin key", admin, "", adminTenant, true, false, false},
		{"the admin key for another tenant", admin, acmeRec.TenantID, acmeRec.TenantID, true, false, false},
		{"a tenant's key for another tenant", acme, adminTenant, "", false, false, true},
		{"a tenant's key for its own tenant in upper case", acme, strings.ToUpper(acmeRec.TenantID), acmeRec.TenantID, true, false, false},
		{"an unknown key of jetgraph's form", "jgk_unknown", "", "", false, true, false},
		{"a single-user client's key", "anything", "", "", false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tenant, known, err := ks.ResolveKey(ctx, c.key, c.header)
			if tenant != c.tenant || known != c.known || engine.Is(engine.Unauthorized, err) != c.unauthorized ||
				engine.Is(engine.Forbidden, err) != c.forbidden || (err != nil) != (c.unauthorized || c.forbidden) {
				t.Errorf("ResolveKey = %q %v %v, want %q %v unauthorized %v forbidden %v", tenant, known, err, c.tenant, c.known, c.unauthorized, c.forbidden)
			}
		})
	}
}
