package controlapi_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/keys"
)

// TestSecretsThatHold sends a deployment's secrets back as a GET shows them, masked, and checks
// what the projection then holds, and the latest revision's inputs (the environment its process
// gets): a masked value keeps the stored one, a value replaces it, a secret left out is removed,
// and a mask with nothing to keep is a 422 located at the value, before anything is appended.
func TestSecretsThatHold(t *testing.T) {
	a := newAPI(t)
	var d controlplane.Deployment
	a.want(201, "POST", "/v2/deployments", a.acme, strings.Replace(createBody, `"secrets": [`,
		`"secrets": [{"name": "DB_PASSWORD", "value": "pw-stored"}, {"name": "EXTRA_TOKEN", "value": "tok-stored"}, `, 1), &d)
	// stored is the deployment's secrets and its latest revision's, as the projection holds them.
	stored := func() ([]controlplane.Secret, []controlplane.Secret) {
		t.Helper()
		rec, ok, err := a.view.Deployment(keys.TenantID("acme"), d.ID)
		if err != nil || !ok {
			t.Fatalf("deployment %s: %v %v", d.ID, ok, err)
		}
		rev, ok, err := a.view.Revision(d.ID, *rec.LatestRevisionID)
		if err != nil || !ok {
			t.Fatalf("revision %v: %v %v", rec.LatestRevisionID, ok, err)
		}
		return rec.Secrets, rev.Inputs.Secrets
	}
	events := func() int {
		t.Helper()
		code, body := a.do("GET", "/v2/deployments/"+d.ID+"/events", a.acme, "", "")
		if code != 200 {
			t.Fatalf("events: %d %s", code, body)
		}
		return strings.Count(string(body), "\n")
	}
	type secrets = []controlplane.Secret
	for _, c := range []struct {
		name   string
		patch  func(shown secrets) secrets // the secrets sent, from those the GET shows
		want   secrets                     // what is stored after; nil: refused
		detail string                      // in the 422's detail
	}{
		{"the GET sent back keeps every value", func(shown secrets) secrets { return shown },
			secrets{{Name: "DB_PASSWORD", Value: "pw-stored"}, {Name: "EXTRA_TOKEN", Value: "tok-stored"}, {Name: "OPENAI_API_KEY", Value: "sk-very-secret"}}, ""},
		{"a new value replaces, a masked one is kept", func(shown secrets) secrets {
			shown[1].Value = "tok-new"
			return shown
		}, secrets{{Name: "DB_PASSWORD", Value: "pw-stored"}, {Name: "EXTRA_TOKEN", Value: "tok-new"}, {Name: "OPENAI_API_KEY", Value: "sk-very-secret"}}, ""},
		{"a secret left out is removed, a new one added", func(shown secrets) secrets {
			return append(slices.Delete(shown, 0, 1), controlplane.Secret{Name: "NEW_ONE", Value: "fresh"})
		}, secrets{{Name: "EXTRA_TOKEN", Value: "tok-new"}, {Name: "OPENAI_API_KEY", Value: "sk-very-secret"}, {Name: "NEW_ONE", Value: "fresh"}}, ""},
		{"a mask with nothing to keep is refused", func(shown secrets) secrets {
			return append(shown, controlplane.Secret{Name: "DB_PASSWORD", Value: controlplane.SecretMask},
				controlplane.Secret{Name: "GONE", Value: controlplane.SecretMask})
		}, nil, `"loc":["body","secrets",3,"value"]`},
		{"an empty list removes every secret", func(secrets) secrets { return secrets{} }, secrets{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var shown controlplane.Deployment
			a.want(200, "GET", "/v2/deployments/"+d.ID, a.acme, "", &shown)
			for _, s := range shown.Secrets {
				if s.Value != controlplane.SecretMask {
					t.Fatalf("GET shows %s in clear", s.Name)
				}
			}
			beforeDep, beforeRev := stored()
			before := events()
			body, _ := json.Marshal(map[string]any{"secrets": c.patch(shown.Secrets)})
			code, answer := a.do("PATCH", "/v2/deployments/"+d.ID, a.acme, "", string(body))
			dep, rev := stored()
			if c.want == nil {
				if code != 422 || !strings.Contains(string(answer), c.detail) || !strings.Contains(string(answer), "GONE has no value to keep") {
					t.Fatalf("PATCH: %d %s, want 422 with %s", code, answer, c.detail)
				}
				if events() != before || !slices.Equal(dep, beforeDep) || !slices.Equal(rev, beforeRev) {
					t.Errorf("a refused PATCH changed something: %d events, was %d; %v", events(), before, dep)
				}
				return
			}
			if code != 200 || strings.Contains(string(answer), "-stored") || strings.Contains(string(answer), "tok-new") {
				t.Fatalf("PATCH: %d %s", code, answer)
			}
			if !slices.Equal(dep, c.want) || !slices.Equal(rev, c.want) {
				t.Errorf("stored\n deployment %v\n revision   %v\nwant %v", dep, rev, c.want)
			}
		})
	}
	// A create holding the mask has nothing to keep either.
	code, answer := a.do("POST", "/v2/deployments", a.acme, "", strings.Replace(strings.Replace(createBody, "sk-very-secret", controlplane.SecretMask, 1), "my-app", "masked-app", 1))
	if code != 422 || !strings.Contains(string(answer), `"loc":["body","secrets",0,"value"]`) {
		t.Errorf("create with a masked secret: %d %s", code, answer)
	}
}
