package controlplane_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/jetgraph/jetgraph/engine"
	cp "github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/eventlog"
)

// TestPatchRetriesConflicts lands another writer's event on the deployment's subject between a
// PATCH's read and its append (a real version conflict on JetStream): an event of the system
// never fails the PATCH; a user's change is seen by the retry and judged by the rules.
func TestPatchRetriesConflicts(t *testing.T) {
	for _, c := range []struct {
		name string
		// land appends the other writer's event; n counts the PATCH's attempts from 1.
		land      func(t *testing.T, p *plane, other *cp.Service, d cp.Deployment, n int)
		wantErr   engine.Kind // 0: the PATCH succeeds
		appends   int         // the PATCH's appends (attempts that got as far)
		wantCheck func(t *testing.T, d cp.Deployment)
	}{
		{name: "a pipeline event", appends: 2,
			land: func(t *testing.T, p *plane, _ *cp.Service, d cp.Deployment, n int) {
				if n == 1 {
					appendEvent(t, p, d.ID, cp.RevisionLogged, cp.RevisionLogData{RevisionID: *d.LatestRevisionID, Text: "building\n"})
				}
			}},
		{name: "another user's PATCH is kept", appends: 2,
			land: func(t *testing.T, p *plane, other *cp.Service, d cp.Deployment, n int) {
				if n == 1 {
					if _, err := other.UpdateDeployment(p.ctx, d.ID, map[string]any{"source_config": map[string]any{"build_on_push": true}}); err != nil {
						t.Fatal(err)
					}
				}
			},
			wantCheck: func(t *testing.T, d cp.Deployment) {
				if d.SourceConfig.BuildOnPush == nil || !*d.SourceConfig.BuildOnPush {
					t.Errorf("the other PATCH's build_on_push was overwritten: %v", d.SourceConfig.BuildOnPush)
				}
			}},
		{name: "a DELETE meanwhile wins", appends: 1, wantErr: engine.BadRequest, // the retry is refused by the rule
			land: func(t *testing.T, p *plane, other *cp.Service, d cp.Deployment, n int) {
				if n == 1 {
					if err := other.DeleteDeployment(p.ctx, d.ID); err != nil {
						t.Fatal(err)
					}
				}
			}},
		{name: "conflicts without end are bounded", appends: 8, wantErr: engine.Conflict,
			land: func(t *testing.T, p *plane, _ *cp.Service, d cp.Deployment, n int) {
				appendEvent(t, p, d.ID, cp.RevisionLogged, cp.RevisionLogData{RevisionID: *d.LatestRevisionID, Text: "more\n"})
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := openPlane(t)
			other := cp.NewService(p.log, p.proj, p.view, nil, nil)
			d := p.create(t, "app", "main")
			n := 0
			cp.SetBeforeCommit(p.svc, func(string) {
				n++
				c.land(t, p, other, d, n)
			})
			got, err := p.svc.UpdateDeployment(p.ctx, d.ID, map[string]any{"source_revision_config": map[string]any{"repo_ref": "dev"}})
			if n != c.appends {
				t.Errorf("%d appends, want %d", n, c.appends)
			}
			if c.wantErr != 0 {
				if !engine.Is(c.wantErr, err) {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("PATCH failed on a conflict it should have retried: %v", err)
			}
			if *got.SourceRevisionConfig.RepoRef != "dev" || *got.LatestRevisionID == *d.LatestRevisionID {
				t.Errorf("the PATCH was not applied: ref %s, latest revision %s", *got.SourceRevisionConfig.RepoRef, *got.LatestRevisionID)
			}
			if revs, _, _ := p.svc.ListRevisions(p.ctx, d.ID, nil, 0, 20); len(revs) != 2 {
				t.Errorf("%d revisions, want 2: a retried PATCH makes one revision", len(revs))
			}
			if c.wantCheck != nil {
				c.wantCheck(t, got)
			}
		})
	}
}

// appendEvent appends an event to a deployment's subject, as the pipeline does (no expected
// version), and waits until it is folded.
func appendEvent(t *testing.T, p *plane, id, typ string, data any) {
	t.Helper()
	e, err := eventlog.New(cp.DeploymentAggregate(id), typ, data)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := p.log.Append(context.Background(), e, eventlog.Any)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.proj.WaitFor(context.Background(), seq); err != nil {
		t.Fatal(err)
	}
}

// TestCustomURLFollowsTheServer checks that a git_host deployment's custom_url is the server's
// current one in every answer (a server restarted behind another public URL), records stored
// with an older URL included, while an external_container's own custom_url is kept.
func TestCustomURLFollowsTheServer(t *testing.T) {
	p := openPlane(t)
	base := func(b string) func(string) string { return func(id string) string { return b + "/deployments/" + id } }
	first := cp.NewService(p.log, p.proj, p.view, nil, base("http://127.0.0.1:8123"))
	d, err := first.CreateDeployment(p.ctx, map[string]any{"name": "app", "source": "git_host",
		"source_config": map[string]any{"repo_url": "/repos/app"}, "source_revision_config": map[string]any{"repo_ref": "main"}, "secrets": []any{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := *d.SourceConfig.CustomURL; got != "http://127.0.0.1:8123/deployments/"+d.ID {
		t.Errorf("created: custom_url %s", got)
	}

	// Records of before this change stored their custom_url.
	tenant := engine.TenantFrom(p.ctx)
	stale, mine := "http://old-host:8123/deployments/x", "https://mine.example.com"
	legacy := cp.Deployment{ID: uuid.NewString(), TenantID: tenant, Name: "legacy", Source: cp.SourceGitHost,
		SourceConfig: cp.SourceConfig{CustomURL: &stale}, Secrets: []cp.Secret{}, Status: cp.DeploymentReady}
	appendEvent(t, p, legacy.ID, cp.DeploymentCreated, cp.DeploymentData{Deployment: legacy})
	external := cp.Deployment{ID: uuid.NewString(), TenantID: tenant, Name: "external", Source: cp.SourceExternalContainer,
		SourceConfig: cp.SourceConfig{CustomURL: &mine}, Secrets: []cp.Secret{}, Status: cp.DeploymentReady}
	appendEvent(t, p, external.ID, cp.DeploymentCreated, cp.DeploymentData{Deployment: external})

	for _, c := range []struct {
		name string
		urls func(string) string
		want func(id string) string // "" for none
	}{
		{"behind a proxy", base("https://agents.example.com/jg"), func(id string) string { return "https://agents.example.com/jg/deployments/" + id }},
		{"restarted on another port", base("http://127.0.0.1:9000"), func(id string) string { return "http://127.0.0.1:9000/deployments/" + id }},
		{"without a deployer", nil, func(string) string { return "" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc := cp.NewService(p.log, p.proj, p.view, nil, c.urls)
			check := func(what string, got cp.Deployment) {
				t.Helper()
				want := c.want(got.ID)
				if got.Source == cp.SourceExternalContainer {
					want = mine
				}
				if s := deref(got.SourceConfig.CustomURL); s != want {
					t.Errorf("%s %s: custom_url %q, want %q", what, got.Name, s, want)
				}
			}
			for _, id := range []string{d.ID, legacy.ID, external.ID} {
				got, err := svc.GetDeployment(p.ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				check("GET", got)
			}
			all, _, err := svc.ListDeployments(p.ctx, cp.DeploymentFilter{}, 0, 20)
			if err != nil || len(all) != 3 {
				t.Fatalf("list: %d %v", len(all), err)
			}
			for _, got := range all {
				check("list", got)
			}
			got, err := svc.UpdateDeployment(p.ctx, legacy.ID, map[string]any{"source_config": map[string]any{"build_on_push": false}})
			if err != nil {
				t.Fatal(err)
			}
			check("PATCH", got)
		})
	}
	var stored strings.Builder
	if err := p.log.Tail(context.Background(), cp.DeploymentAggregate(d.ID), false, func(e eventlog.Event) error {
		stored.Write(e.Data)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored.String(), "/deployments/"+d.ID) {
		t.Errorf("a git_host custom_url was stored: %s", stored.String())
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
