package controlapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/keys"
	"github.com/jetgraph/jetgraph/httpapi/controlapi"
)

// TestCredentialSchemes checks the spec's three schemes over real HTTP: a key as a bearer token
// is the same key as X-Api-Key, X-Tenant-Id selects among the tenants the key may act for (a
// tenant key its own, the admin key any), a key naming another tenant is a 403 that says so,
// and a tenant header that is no UUID in its canonical form is a 422 located at the header.
func TestCredentialSchemes(t *testing.T) {
	a := newAPI(t)
	var d controlplane.Deployment
	a.want(201, "POST", "/v2/deployments", a.acme, createBody, &d)
	acmeTenant, rivalTenant := keys.TenantID("acme"), keys.TenantID("rival")
	bearer := func(key string) string { return "Bearer " + key }
	for _, c := range []struct {
		name   string
		header map[string]string
		want   int
		detail string // in the answer's detail
	}{
		{"x-api-key", map[string]string{"X-Api-Key": a.acme}, 200, ""},
		{"bearer", map[string]string{"Authorization": bearer(a.acme)}, 200, ""},
		{"bearer, scheme in lower case", map[string]string{"Authorization": "bearer " + a.acme}, 200, ""},
		{"bearer with spaces", map[string]string{"Authorization": "  Bearer   " + a.acme + " "}, 200, ""},
		{"x-api-key wins over authorization", map[string]string{"X-Api-Key": a.acme, "Authorization": bearer(a.rival)}, 200, ""},
		{"another tenant's bearer", map[string]string{"Authorization": bearer(a.rival)}, 404, "not found"},
		{"unknown bearer", map[string]string{"Authorization": bearer("jgk_unknown")}, 401, "Invalid API key"},
		{"empty bearer", map[string]string{"Authorization": "Bearer "}, 401, "Missing API key"},
		{"basic is no scheme of the control plane", map[string]string{"Authorization": "Basic " + a.acme}, 401, "Missing API key"},
		{"a bare token", map[string]string{"Authorization": a.acme}, 401, "Missing API key"},
		{"no credential", map[string]string{}, 401, "Missing API key"},
		{"own tenant", map[string]string{"Authorization": bearer(a.acme), "X-Tenant-Id": acmeTenant}, 200, ""},
		{"own tenant in upper case", map[string]string{"X-Api-Key": a.acme, "X-Tenant-Id": strings.ToUpper(acmeTenant)}, 200, ""},
		{"admin for acme", map[string]string{"Authorization": bearer(a.admin), "X-Tenant-Id": acmeTenant}, 200, ""},
		{"admin for acme, upper case", map[string]string{"X-Api-Key": a.admin, "X-Tenant-Id": strings.ToUpper(acmeTenant)}, 200, ""},
		{"admin for rival", map[string]string{"X-Api-Key": a.admin, "X-Tenant-Id": rivalTenant}, 404, "not found"},
		{"admin for itself", map[string]string{"Authorization": bearer(a.admin)}, 404, "not found"},
		{"acme for rival (bearer)", map[string]string{"Authorization": bearer(a.acme), "X-Tenant-Id": rivalTenant}, 403, "may not act for tenant " + rivalTenant},
		{"rival for acme", map[string]string{"X-Api-Key": a.rival, "X-Tenant-Id": acmeTenant}, 403, "may not act for tenant " + acmeTenant},
		{"a name for a tenant", map[string]string{"X-Api-Key": a.acme, "X-Tenant-Id": "acme"}, 422, "x-tenant-id"},
		{"a subject wildcard", map[string]string{"X-Api-Key": a.admin, "X-Tenant-Id": acmeTenant + ".>"}, 422, "x-tenant-id"},
		{"a uuid in braces", map[string]string{"Authorization": bearer(a.admin), "X-Tenant-Id": "{" + acmeTenant + "}"}, 422, "x-tenant-id"},
		{"a uuid urn", map[string]string{"X-Api-Key": a.admin, "X-Tenant-Id": "urn:uuid:" + acmeTenant}, 422, "x-tenant-id"},
		{"a uuid without dashes", map[string]string{"X-Api-Key": a.admin, "X-Tenant-Id": strings.ReplaceAll(acmeTenant, "-", "")}, 422, "x-tenant-id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := a.send("GET", "/v2/deployments/"+d.ID, c.header, "")
			if code != c.want || !strings.Contains(string(body), c.detail) {
				t.Fatalf("%d %s, want %d with %q", code, body, c.want, c.detail)
			}
			if code == 200 {
				var got controlplane.Deployment
				if err := json.Unmarshal(body, &got); err != nil || got.TenantID != acmeTenant {
					t.Errorf("answered %+v (%v)", got, err)
				}
			}
		})
	}
	// A deployment made with a bearer key is its tenant's, and another tenant's key sees none.
	code, body := a.send("POST", "/v2/deployments", map[string]string{"Authorization": bearer(a.admin), "X-Tenant-Id": rivalTenant},
		strings.Replace(createBody, "my-app", "bearer-app", 1))
	var made controlplane.Deployment
	if code != 201 || json.Unmarshal(body, &made) != nil || made.TenantID != rivalTenant {
		t.Fatalf("create with a bearer key for rival: %d %s", code, body)
	}
	if code, body := a.send("GET", "/v2/deployments/"+made.ID, map[string]string{"Authorization": bearer(a.acme)}, ""); code != 404 {
		t.Errorf("acme reads rival's deployment: %d %s", code, body)
	}
}

// TestBearerNotPassedOn checks what a deployment's runtime gets behind custom_url: a bearer
// token that was the control plane's key is dropped, while an Authorization header sent beside
// X-Api-Key is the runtime's own (its custom auth may read it) and goes on. The handler behind
// the routes answers the headers it was handed.
func TestBearerNotPassedOn(t *testing.T) {
	a := newAPIWithProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"authorization": r.Header.Get("Authorization")})
	}))
	var d controlplane.Deployment
	a.want(201, "POST", "/v2/deployments", a.acme, createBody, &d)
	for _, c := range []struct {
		name   string
		header map[string]string
		want   string
	}{
		{"the key as a bearer", map[string]string{"Authorization": "Bearer " + a.acme}, ""},
		{"the runtime's own token beside X-Api-Key", map[string]string{"X-Api-Key": a.acme, "Authorization": "Bearer user-token"}, "Bearer user-token"},
	} {
		code, body := a.send("GET", controlapi.ProxyPrefix+d.ID+"/ok", c.header, "")
		var got map[string]string
		if code != 200 || json.Unmarshal(body, &got) != nil || got["authorization"] != c.want {
			t.Errorf("%s: %d %s, want authorization %q", c.name, code, body, c.want)
		}
	}
}
