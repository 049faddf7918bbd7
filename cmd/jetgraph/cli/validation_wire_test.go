package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
)

// TestServeValidatesDeploymentsOnce checks, on the served binary's wiring, that a listener of the
// spec's compute type cluster is checked and served like a k8s one, and that a deployment the
// cluster would refuse is a 422 listing every problem (its placement on the listener included),
// while a valid one is published to the GitOps repository.
func TestServeValidatesDeploymentsOnce(t *testing.T) {
	s, admin, repo := serveWithGitOps(t)

	if code, v := call(t, "POST", s.url+"/v2/listeners", admin, `{"compute_type": "cluster", "compute_id": "prod", "compute_config": {}}`); code != 422 {
		t.Errorf("cluster listener without a GitOps repository: %d %v, want 422", code, v)
	}
	code, l := call(t, "POST", s.url+"/v2/listeners", admin, `{"compute_type": "cluster", "compute_id": "prod",
		"compute_config": {"k8s_namespaces": ["agents"], "gitops": {"repo_url": "`+repo+`"}}}`)
	if code != 201 {
		t.Fatalf("cluster listener: %d %v", code, l)
	}
	body := func(name, sourceConfig string) string {
		return `{"name": "` + name + `", "source": "external_container", "source_config": {"listener_id": "` + l["id"].(string) + `"` + sourceConfig + `},
			"source_revision_config": {"image_uri": "registry/bot:1"}, "secrets": []}`
	}
	code, v := call(t, "POST", s.url+"/v2/deployments", admin, body("refused", `, "listener_config": {"cluster_namespace": "prod"},
		"resource_spec": {"cpu": 4, "cpu_limit": 2, "sidecars": [{"name": "s", "image": "i", "restartPolicy": "OnFailure"}]}`))
	detail, _ := json.Marshal(v["detail"])
	for _, want := range []string{`["body","source_config","resource_spec","cpu_limit"]`, `["body","source_config","resource_spec","sidecars",0,"restartPolicy"]`,
		`["body","source_config","listener_config","cluster_namespace"]`} {
		if code != 422 || !strings.Contains(string(detail), want) {
			t.Errorf("invalid deployment: %d %s, want 422 at %s", code, detail, want)
		}
	}
	code, d := call(t, "POST", s.url+"/v2/deployments", admin, body("support-bot", `, "resource_spec": {"cpu": 1, "sidecars": [{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}]}`))
	if code != 201 {
		t.Fatalf("valid deployment: %d %v", code, d)
	}
	waitFor(t, "the manifests in the GitOps repository", func() bool {
		return strings.Contains(strings.Join(gitopsFiles(t, repo), ","), "support-bot/")
	})
}

// serveWithGitOps starts serve with a known admin key, and makes an empty bare repository for
// a listener's GitOps.
func serveWithGitOps(t *testing.T) (s *serving, admin, repo string) {
	t.Helper()
	admin = "wire-admin-key-0123456789abcdef"
	t.Setenv(AdminKeyEnv, admin)
	repo = t.TempDir()
	if _, err := git.PlainInit(repo, true); err != nil {
		t.Fatal(err)
	}
	return startServe(t, Program{}, t.TempDir()), admin, repo
}
