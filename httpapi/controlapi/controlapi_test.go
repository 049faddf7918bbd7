package controlapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/keys"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/controlapi"
	"github.com/jetgraph/jetgraph/httpapi/httpapitest"
	"github.com/jetgraph/jetgraph/projections/deployments"
	"github.com/jetgraph/jetgraph/projections/deployments/deploymentstest"
)

// api is the control plane's HTTP API on a real log and projection, checked against the
// OpenAPI document, with an admin key and the keys of two tenants.
type api struct {
	t                  *testing.T
	url                string
	admin, acme, rival string
	view               *deployments.View // what the projection holds, secrets in clear
}

func newAPI(t *testing.T) *api {
	t.Helper()
	return newAPIWithProxy(t, nil)
}

// newAPIWithProxy is newAPI with proxy serving the deployments' custom_url.
func newAPIWithProxy(t *testing.T, proxy http.Handler) *api {
	t.Helper()
	l := eventlogtest.Open(t)
	view, proj := deploymentstest.Open(t, l)
	ks := keys.New(l, proj, view)
	ctx := context.Background()
	admin, err := ks.EnsureAdmin(ctx, "")
	if err != nil || admin == "" {
		t.Fatalf("admin key %q: %v", admin, err)
	}
	if again, err := ks.EnsureAdmin(ctx, ""); err != nil || again != "" {
		t.Fatalf("a second start made another admin key: %q %v", again, err)
	}
	acme, _, err := ks.Create(ctx, "acme", false, "")
	if err != nil {
		t.Fatal(err)
	}
	rival, _, err := ks.Create(ctx, "rival", false, "")
	if err != nil {
		t.Fatal(err)
	}
	svc := controlplane.NewService(l, proj, view, nil, nil)
	srv := httpapi.New(httpapi.Deps{Logger: slog.New(slog.DiscardHandler), ControlPlane: controlapi.New(svc, ks, l, proxy)})
	// custom_url passes the runtime's API on (under ProxyPrefix): it is no operation of the
	// document, so only those exchanges go unchecked.
	ts := httpapitest.NewServerPassing(t, httpapi.OpenAPI(), srv.Handler(), controlapi.ProxyPrefix)
	return &api{t: t, url: ts.URL, admin: admin, acme: acme, rival: rival, view: view}
}

// send sends a request with exactly the headers given and returns the status and body.
func (a *api) send(method, path string, header map[string]string, body string) (int, []byte) {
	a.t.Helper()
	req, err := http.NewRequest(method, a.url+path, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// do sends a request with key (and tenant, when not empty) and returns the status and body.
func (a *api) do(method, path, key, tenant, body string) (int, []byte) {
	a.t.Helper()
	header := map[string]string{}
	if key != "" {
		header["X-Api-Key"] = key
	}
	if tenant != "" {
		header["X-Tenant-Id"] = tenant
	}
	return a.send(method, path, header, body)
}

func (a *api) want(status int, method, path, key, body string, v any) {
	a.t.Helper()
	code, out := a.do(method, path, key, "", body)
	if code != status {
		a.t.Fatalf("%s %s: %d %s, want %d", method, path, code, out, status)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			a.t.Fatalf("%s %s: %v: %s", method, path, err, out)
		}
	}
}

const createBody = `{"name": "my-app", "source": "git_host", "source_config": {"repo_url": "https://example.com/r.git", "deployment_type": "dev"},
	"source_revision_config": {"repo_ref": "main"}, "secrets": [{"name": "OPENAI_API_KEY", "value": "sk-very-secret"}]}`

func TestAuthAndTenants(t *testing.T) {
	a := newAPI(t)
	for _, key := range []string{"", "jgk_unknown"} {
		code, body := a.do("GET", "/v2/deployments", key, "", "")
		if code != 401 || !bytes.Contains(body, []byte(`"detail"`)) {
			t.Errorf("key %q: %d %s, want 401 with a detail", key, code, body)
		}
	}
	if code, _ := a.do("GET", "/v1/integrations/git_host/install", "", "", ""); code != 401 {
		t.Errorf("/v1 without a key: %d", code)
	}
	var d controlplane.Deployment
	a.want(201, "POST", "/v2/deployments", a.acme, createBody, &d)
	if d.TenantID != keys.TenantID("acme") || d.Status != controlplane.DeploymentAwaitingDatabase || d.LatestRevisionID == nil || d.ActiveRevisionID != nil {
		t.Errorf("created %+v", d)
	}
	if d.Secrets[0].Value != controlplane.SecretMask {
		t.Errorf("secret answered in clear: %+v", d.Secrets)
	}
	var nf map[string]string
	a.want(404, "GET", "/v2/deployments/"+d.ID, a.rival, "", &nf)
	if nf["detail"] != "Deployment ID "+d.ID+" not found." {
		t.Errorf("404 detail %q", nf["detail"])
	}
	a.want(404, "PATCH", "/v2/deployments/"+d.ID, a.rival, `{"secrets": []}`, nil)
	a.want(404, "DELETE", "/v2/deployments/"+d.ID, a.rival, "", nil)
	a.want(404, "GET", "/v2/deployments/"+d.ID+"/revisions", a.rival, "", nil)
	// The admin key acts for any tenant it names; a tenant's key only for its own.
	if code, body := a.do("GET", "/v2/deployments/"+d.ID, a.admin, d.TenantID, ""); code != 200 {
		t.Errorf("admin for acme: %d %s", code, body)
	}
	if code, _ := a.do("GET", "/v2/deployments/"+d.ID, a.rival, d.TenantID, ""); code != 403 {
		t.Errorf("rival naming acme's tenant: %d, want 403", code)
	}
	if code, _ := a.do("GET", "/v2/deployments/"+d.ID, a.acme, d.TenantID, ""); code != 200 {
		t.Errorf("acme naming its own tenant: %d", code)
	}
	// The same name in another tenant is no conflict; in the same tenant it is.
	a.want(201, "POST", "/v2/deployments", a.rival, createBody, nil)
	a.want(409, "POST", "/v2/deployments", a.acme, createBody, nil)
	var events bytes.Buffer
	code, body := a.do("GET", "/v2/deployments/"+d.ID+"/events", a.acme, "", "")
	events.Write(body)
	if code != 200 || strings.Count(events.String(), "\n") != 3 || strings.Contains(events.String(), "sk-very-secret") {
		t.Errorf("events %d:\n%s", code, events.String())
	}
}

func TestDeploymentsAPI(t *testing.T) {
	a := newAPI(t)
	var d controlplane.Deployment
	a.want(201, "POST", "/v2/deployments", a.acme, createBody, &d)
	for _, name := range []string{"other-1", "other-2"} {
		a.want(201, "POST", "/v2/deployments", a.acme, strings.Replace(createBody, "my-app", name, 1), nil)
	}
	var page struct {
		Resources []controlplane.Deployment `json:"resources"`
		Offset    int                       `json:"offset"`
	}
	a.want(200, "GET", "/v2/deployments?limit=2", a.acme, "", &page)
	if len(page.Resources) != 2 || page.Offset != 2 || page.Resources[0].Name != "other-2" {
		t.Errorf("first page %+v", page)
	}
	a.want(200, "GET", "/v2/deployments?limit=2&offset=2", a.acme, "", &page)
	if len(page.Resources) != 1 || page.Offset != 3 || page.Resources[0].ID != d.ID {
		t.Errorf("second page %+v", page)
	}
	a.want(200, "GET", "/v2/deployments?name_contains=OTHER&deployment_type=dev&status=AWAITING_DATABASE,READY", a.acme, "", &page)
	if len(page.Resources) != 2 {
		t.Errorf("filtered %+v", page)
	}
	a.want(200, "GET", "/v2/deployments?deployment_ids="+d.ID, a.acme, "", &page)
	if len(page.Resources) != 1 || page.Resources[0].ID != d.ID {
		t.Errorf("by id %+v", page)
	}
	var bad struct {
		Detail []struct {
			Loc []any `json:"loc"`
		} `json:"detail"`
	}
	a.want(422, "GET", "/v2/deployments?limit=0&offset=-1&status=GONE&deployment_ids=x", a.acme, "", &bad)
	if len(bad.Detail) != 4 {
		t.Errorf("every violation of the query: %+v", bad)
	}
	a.want(422, "GET", "/v2/deployments/not-a-uuid", a.acme, "", &bad)
	if len(bad.Detail) != 1 || bad.Detail[0].Loc[0] != "path" || bad.Detail[0].Loc[1] != "deployment_id" {
		t.Errorf("path id: %+v", bad)
	}
	a.want(422, "PATCH", "/v2/deployments/"+d.ID, a.acme, `{"name": "renamed", "source_config": {"repo_url": "/else"}}`, &bad)
	if len(bad.Detail) != 2 {
		t.Errorf("immutable fields: %+v", bad)
	}

	first := *d.LatestRevisionID
	a.want(200, "PATCH", "/v2/deployments/"+d.ID, a.acme, `{"source_revision_config": {"repo_ref": "dev"}, "source_config": {"build_on_push": true}}`, &d)
	if *d.LatestRevisionID == first || *d.SourceRevisionConfig.RepoRef != "dev" || !*d.SourceConfig.BuildOnPush {
		t.Errorf("patched %+v", d)
	}
	var revs struct {
		Resources []controlplane.Revision `json:"resources"`
		Offset    int                     `json:"offset"`
	}
	a.want(200, "GET", "/v2/deployments/"+d.ID+"/revisions", a.acme, "", &revs)
	if len(revs.Resources) != 2 || revs.Resources[0].ID != *d.LatestRevisionID || revs.Resources[1].ID != first {
		t.Errorf("revisions %+v", revs)
	}
	a.want(200, "GET", "/v2/deployments/"+d.ID+"/revisions?status=QUEUED", a.acme, "", &revs)
	if len(revs.Resources) != 2 {
		t.Errorf("queued revisions %+v", revs)
	}
	var r controlplane.Revision
	a.want(200, "GET", "/v2/deployments/"+d.ID+"/revisions/"+first, a.acme, "", &r)
	if r.Status != controlplane.RevisionQueued || *r.SourceRevisionConfig.RepoRef != "main" || len(r.StatusHistory) != 2 {
		t.Errorf("revision %+v", r)
	}
	a.want(200, "GET", "/v2/deployments/"+d.ID+"/revisions/"+first+"/logs", a.acme, "", nil)
	a.want(404, "GET", "/v2/deployments/"+d.ID+"/revisions/"+d.TenantID, a.acme, "", nil)
	a.want(400, "POST", "/v2/deployments/"+d.ID+"/revisions/"+first+"/redeploy", a.acme, "", nil)
	a.want(422, "POST", "/v2/deployments/"+d.ID+"/revisions/x/redeploy", a.acme, "", nil)

	a.want(204, "DELETE", "/v2/deployments/"+d.ID, a.acme, "", nil)
	a.want(200, "GET", "/v2/deployments/"+d.ID, a.acme, "", &d)
	if d.Status != controlplane.DeploymentAwaitingDelete {
		t.Errorf("status after DELETE: %s", d.Status)
	}
	a.want(400, "PATCH", "/v2/deployments/"+d.ID, a.acme, `{"secrets": []}`, nil)
}

func TestListenersAndIntegrations(t *testing.T) {
	a := newAPI(t)
	var l controlplane.Listener
	a.want(201, "POST", "/v2/listeners", a.acme, `{"compute_type": "k8s", "compute_id": "prod", "compute_config": {"gitops_repo": "/srv/gitops"}}`, &l)
	a.want(409, "POST", "/v2/listeners", a.acme, `{"compute_type": "k8s", "compute_id": "prod"}`, nil)
	a.want(201, "POST", "/v2/listeners", a.rival, `{"compute_type": "k8s", "compute_id": "prod"}`, nil)
	a.want(422, "POST", "/v2/listeners", a.acme, `{"compute_type": "ecs"}`, nil)
	var nf map[string]string
	a.want(404, "GET", "/v2/listeners/"+l.ID, a.rival, "", &nf)
	if nf["detail"] != "Listener ID "+l.ID+" not found." {
		t.Errorf("404 detail %q", nf["detail"])
	}
	a.want(200, "PATCH", "/v2/listeners/"+l.ID, a.acme, `{"compute_id": "prod-2"}`, &l)
	if l.ComputeID != "prod-2" || l.ComputeConfig["gitops_repo"] != "/srv/gitops" {
		t.Errorf("patched %+v", l)
	}
	var page struct {
		Resources []controlplane.Listener `json:"resources"`
	}
	a.want(200, "GET", "/v2/listeners", a.acme, "", &page)
	if len(page.Resources) != 1 {
		t.Errorf("listeners %+v", page)
	}
	// An external_container deployment names a listener of its tenant.
	ext := `{"name": "ext", "source": "external_container", "source_config": {"listener_id": "` + l.ID + `"},
		"source_revision_config": {"image_uri": "registry/app:1"}, "secrets": []}`
	a.want(422, "POST", "/v2/deployments", a.rival, ext, nil)
	a.want(201, "POST", "/v2/deployments", a.acme, ext, nil)
	a.want(409, "DELETE", "/v2/listeners/"+l.ID, a.acme, "", nil)

	var integrations []controlplane.Integration
	a.want(200, "GET", "/v1/integrations/git_host/install", a.acme, "", &integrations)
	if len(integrations) != 1 || integrations[0].ID != controlplane.GitIntegration.ID {
		t.Errorf("integrations %+v", integrations)
	}
}
