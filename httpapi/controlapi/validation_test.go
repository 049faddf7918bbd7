package controlapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"

	"github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/controlplane/keys"
	"github.com/jetgraph/jetgraph/engine/controlplane/manifests"
	"github.com/jetgraph/jetgraph/engine/goldentest"
	"github.com/jetgraph/jetgraph/eventlog"
	"github.com/jetgraph/jetgraph/eventlog/eventlogtest"
	"github.com/jetgraph/jetgraph/httpapi"
	"github.com/jetgraph/jetgraph/httpapi/controlapi"
	"github.com/jetgraph/jetgraph/httpapi/httpapitest"
	"github.com/jetgraph/jetgraph/projections/deployments/deploymentstest"
)

// plane is the control plane's HTTP API wired as the server wires it (the compute_config check
// of the renderer, a pipeline publishing manifests to a real git repository), with the log to
// check that a refused request appended nothing.
type plane struct {
	*api
	log    *eventlog.Log
	gitops string // the bare GitOps repository of the test's listener
}

func newPlane(t *testing.T) *plane {
	t.Helper()
	l := eventlogtest.Open(t)
	view, proj := deploymentstest.Open(t, l)
	ks := keys.New(l, proj, view)
	admin, err := ks.EnsureAdmin(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	svc := controlplane.NewService(l, proj, view, nil, nil)
	svc.CheckComputeConfig(func(raw []byte, loc ...any) error {
		_, err := manifests.ParseComputeConfig(raw, loc...)
		return err
	})
	ctx, cancel := context.WithCancel(context.Background())
	pipe := controlplane.NewPipeline(l, proj, view, svc, controlplane.Ports{Publisher: &manifests.Publisher{}},
		controlplane.PipelineConfig{AckWait: 2 * time.Second, Workers: 1, Logger: slog.New(slog.DiscardHandler)})
	if err := pipe.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); pipe.Wait() })
	srv := httpapi.New(httpapi.Deps{Logger: slog.New(slog.DiscardHandler), ControlPlane: controlapi.New(svc, ks, l, nil)})
	ts := httpapitest.NewServerPassing(t, httpapi.OpenAPI(), srv.Handler(), controlapi.ProxyPrefix)
	gitops := t.TempDir()
	if _, err := git.PlainInit(gitops, true); err != nil {
		t.Fatal(err)
	}
	return &plane{api: &api{t: t, url: ts.URL, admin: admin, view: view}, log: l, gitops: gitops}
}

// lastSeq is the control stream's last sequence: unchanged by a refused command.
func (p *plane) lastSeq(t *testing.T) uint64 {
	t.Helper()
	seq, err := p.log.LastSeq(context.Background(), eventlog.ControlStream)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// refused sends a request that must be refused with 422 and append nothing, and returns the body
// (t is the test or subtest asking).
func (p *plane) refused(t *testing.T, method, path, body string) []byte {
	t.Helper()
	before := p.lastSeq(t)
	code, out := p.do(method, path, p.admin, "", body)
	if code != 422 {
		t.Fatalf("%s %s: %d %s, want 422", method, path, code, out)
	}
	if after := p.lastSeq(t); after != before {
		t.Errorf("%s %s was refused, yet the log grew from %d to %d", method, path, before, after)
	}
	return out
}

// deploymentBody is an external_container creation body on listener, merged with patch.
func deploymentBody(t *testing.T, name, listener, patch string) string {
	t.Helper()
	base := `{"name": "` + name + `", "source": "external_container",
		"source_config": {"listener_id": "` + listener + `", "listener_config": {"cluster_namespace": "agents"}},
		"source_revision_config": {"image_uri": "registry.example.com/agent:1"}, "secrets": [{"name": "OPENAI_API_KEY", "value": "sk-x"}]}`
	var b, pm map[string]any
	if err := json.Unmarshal([]byte(base), &b); err != nil {
		t.Fatal(err)
	}
	if patch != "" {
		if err := json.Unmarshal([]byte(patch), &pm); err != nil {
			t.Fatal(err)
		}
	}
	out, _ := json.Marshal(mergePatch(b, pm))
	return string(out)
}

func mergePatch(base, patch map[string]any) map[string]any {
	for k, v := range patch {
		if pv, ok := v.(map[string]any); ok {
			if bv, ok := base[k].(map[string]any); ok {
				base[k] = mergePatch(bv, pv)
				continue
			}
		}
		base[k] = v
	}
	return base
}

// specCases are resource_specs the cluster would refuse: each is refused by POST and PATCH
// /v2/deployments with one 422 listing every problem (testdata/validation/<name>.json).
var specCases = []struct{ name, spec string }{
	// the five the issue found accepted and refused at publish
	{"cpu-limit-below-request", `{"cpu": 4, "cpu_limit": 2}`},
	{"memory-limit-below-request", `{"memory_mb": 1024, "memory_limit_mb": 512, "queue_cpu": 1, "queue_cpu_limit": 0.5}`},
	{"min-above-max", `{"min_scale": 5, "max_scale": 2, "queue_min_scale": 4, "queue_max_scale": 3}`},
	{"autoscaler-from-zero", `{"min_scale": 0, "max_scale": 3}`},
	{"label-keys", `{"labels": {"bad key!": "v", "ok": "bad value!", "app.kubernetes.io/name": "mine", "example.com/": "x"}}`},
	// Kubernetes errors that answered 201 and failed later
	{"annotation-keys", `{"annotations": {"-x": "y", "jetgraph.dev/revision-id": "r", "example.com/owner": "ok"}}`},
	{"duplicate-container-names", `{"init_containers": [{"name": "setup", "image": "busybox"}],
		"sidecars": [{"name": "setup", "image": "envoy"}, {"name": "queue", "image": "x"}, {"name": "api-server", "image": "y"}]}`},
	// objects Kubernetes refuses that were committed as DEPLOYED
	{"mount-path-twice", `{"volumes": [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}],
		"volume_mounts": [{"name": "a", "mountPath": "/data"}, {"name": "b", "mountPath": "/data/"}],
		"sidecars": [{"name": "s", "image": "i", "volumeMounts": [{"name": "a", "mountPath": "/x"}, {"name": "a", "mountPath": "/x"}]}]}`},
	{"volume-with-two-sources", `{"volumes": [{"name": "v", "emptyDir": {}, "configMap": {"name": "c"}}, {"name": "w", "secret": {"secretName": "s"}, "persistentVolumeClaim": {"claimName": "p"}, "nfs": {"server": "n", "path": "/p"}}]}`},
	{"sidecar-restart-on-failure", `{"sidecars": [{"name": "s", "image": "i", "restartPolicy": "OnFailure"}, {"name": "t", "image": "i", "restartPolicy": "Never"}, {"name": "native", "image": "i", "restartPolicy": "Always"}]}`},
	{"init-container-restart-policy", `{"init_containers": [{"name": "a", "image": "i", "restartPolicy": "OnFailure"},
		{"name": "b", "image": "i", "livenessProbe": {"exec": {"command": ["true"]}}, "lifecycle": {"preStop": {"exec": {"command": ["x"]}}}},
		{"name": "c", "image": "i", "restartPolicy": "Always", "livenessProbe": {"exec": {"command": ["true"]}}}]}`},
	// bounds and types
	{"cpu-bounds", `{"cpu": 0.04, "cpu_limit": 16.5, "queue_cpu": 9, "cache_cpu_limit": 17, "db_cpu": 0}`},
	{"scale-bounds", `{"min_scale": -1, "max_scale": 3000000000, "memory_mb": 0, "queue_memory_limit_mb": -5}`},
	{"types-and-unknown-members", `{"cpus": 1, "memory_mb": "512", "min_scale": 1.5, "labels": {"a": 1}, "annotations": [],
		"sidecars": [{"name": "s", "image": 3, "mountpath": "/x", "env": [{"name": "A", "value": true}]}, "not-a-container"]}`},
	{"resources", `{"sidecars": [{"name": "s", "image": "i", "resources": {
		"limits": {"cpu": "lots", "memory": "64Mi", "gpu": "1", "example.com/fpga": "1"},
		"requests": {"memory": "128Mi", "example.com/gpu": "1", "example.com/fpga": "2", "ephemeral-storage": "-1Gi"}}}]}`},
	{"env", `{"sidecars": [{"name": "s", "image": "i",
		"env": [{"name": "1A"}, {"name": "B", "value": "x", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
			{"name": "C", "valueFrom": {"fieldRef": {"fieldPath": "spec.containers"}, "secretKeyRef": {"name": "s", "key": "k"}}},
			{"name": "D", "valueFrom": {"secretKeyRef": {"name": "Bad_Name"}}}, {"name": "E", "valueFrom": {"resourceFieldRef": {"resource": "limits.gpu"}}}],
		"envFrom": [{"configMapRef": {"name": "a"}, "secretRef": {"name": "b"}}, {"prefix": "1X"}]}]}`},
	{"ports", `{"sidecars": [{"name": "s", "image": "i", "ports": [{"containerPort": 8000}, {"name": "http", "containerPort": 9000},
		{"name": "metrics", "containerPort": 70000, "protocol": "HTTP"}, {"name": "metrics", "containerPort": 9100}, {"name": "Not_A_Port_Name_At_All", "containerPort": 1}]}]}`},
	{"volumes-and-mounts", `{"volumes": [{"name": "Bad_Name", "emptyDir": {}}, {"name": "c", "configMap": {}}, {"name": "c", "emptyDir": {"medium": "Disk"}},
			{"name": "n", "nfs": {"server": "nfs", "path": "relative"}}, {"name": "d", "downwardAPI": {"items": [{"path": "/abs"}]}}],
		"volume_mounts": [{"name": "missing", "mountPath": "/m"}, {"name": "c", "mountPath": "/c", "subPath": "../up", "subPathExpr": "$(X)"},
			{"name": "n", "mountPath": "/n", "mountPropagation": "Bidirectional"}, {"name": "n"}]}`},
	{"names-of-references", `{"service_account_name": "Not_A_Name", "image_pull_secrets": [{}, {"name": "UPPER"}]}`},
	{"containers", `{"init_containers": [{"name": "Init", "image": " busybox", "imagePullPolicy": "Sometimes", "terminationMessagePolicy": "Later"}],
		"sidecars": [{"name": "s", "securityContext": {"privileged": true, "allowPrivilegeEscalation": false, "runAsUser": -1}, "startupProbe": {"successThreshold": 2}}]}`},
	{"probes-hooks-and-claims", `{"sidecars": [{"name": "s", "image": "i",
		"livenessProbe": {"httpGet": {"port": 0}, "tcpSocket": {"port": "http"}, "periodSeconds": -1},
		"readinessProbe": {"tcpSocket": {"port": "Not_A_Port"}}, "startupProbe": {"grpc": {"port": 70000}},
		"lifecycle": {"preStop": {}, "postStart": {"httpGet": {"port": 99999}}},
		"resources": {"claims": [{"name": "gpu"}]}}]}`},
	{"memory-overflow", `{"memory_mb": 8796093022207, "queue_memory_limit_mb": 8796093022208, "db_memory_mb": 4398046511104}`},
	{"not-an-object", `[1, 2]`},
}

func TestDeploymentValidation(t *testing.T) {
	p := newPlane(t)
	var l controlplane.Listener
	// the spec's compute type: rendered like k8s
	p.want(201, "POST", "/v2/listeners", p.admin, `{"compute_type": "cluster", "compute_id": "prod",
		"compute_config": {"k8s_namespaces": ["agents", "batch"], "gitops": {"repo_url": "`+p.gitops+`"}}}`, &l)
	var base controlplane.Deployment
	p.want(201, "POST", "/v2/deployments", p.admin, deploymentBody(t, "base", l.ID, ""), &base)
	// once deployed, the pipeline appends nothing more: the log's end shows a refusal's effect
	if r := p.waitStatus(base.ID, *base.LatestRevisionID); r.Status != controlplane.RevisionDeployed {
		t.Fatalf("base deployment: %s", r.Status)
	}
	_, baseBody := p.do("GET", "/v2/deployments/"+base.ID, p.admin, "", "")

	for _, tc := range specCases {
		t.Run(tc.name, func(t *testing.T) {
			patch := `{"source_config": {"resource_spec": ` + tc.spec + `}}`
			created := p.refused(t, "POST", "/v2/deployments", deploymentBody(t, "refused", l.ID, patch))
			goldentest.Check(t, filepath.Join("testdata", "validation", tc.name+".json"), indent(t, created))
			patched := p.refused(t, "PATCH", "/v2/deployments/"+base.ID, patch)
			if !bytes.Equal(created, patched) {
				t.Errorf("PATCH answered otherwise than POST:\n%s\n%s", patched, created)
			}
			if code, out := p.do("GET", "/v2/deployments?name_contains=refused", p.admin, "", ""); code != 200 || !strings.Contains(string(out), `"resources":[]`) {
				t.Errorf("after the refused POST: %d %s, want no deployment named refused", code, out)
			}
			if _, now := p.do("GET", "/v2/deployments/"+base.ID, p.admin, "", ""); !bytes.Equal(now, baseBody) {
				t.Errorf("a refused PATCH changed the deployment:\n%s\n%s", now, baseBody)
			}
		})
	}

	// problems of the body and of its placement on the listener, in one answer
	for _, tc := range []struct{ name, body string }{
		{"namespace-not-allowed", deploymentBody(t, "placed", l.ID, `{"source_config": {"listener_config": {"cluster_namespace": "prod"}}}`)},
		{"every-problem-at-once", deploymentBody(t, "1bad", l.ID, `{"source_config": {"listener_config": {"cluster_namespace": "prod"},
			"resource_spec": {"cpu": 4, "cpu_limit": 2, "labels": {"bad key!": "v"}}}, "secrets": [{"name": "PORT", "value": "1"}]}`)},
		{"listener-not-found", deploymentBody(t, "lost", "6f1c6a56-8e0a-4c55-9d9f-7d6c4b0c7a01", `{"source_config": {"resource_spec": {"min_scale": 3, "max_scale": 1}}}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			goldentest.Check(t, filepath.Join("testdata", "validation", tc.name+".json"), indent(t, p.refused(t, "POST", "/v2/deployments", tc.body)))
		})
	}
	var list struct {
		Resources []controlplane.Deployment `json:"resources"`
	}
	p.want(200, "GET", "/v2/deployments", p.admin, "", &list)
	if len(list.Resources) != 1 {
		t.Errorf("%d deployments after the refusals, want the base one only", len(list.Resources))
	}
}

// TestValidSpecsDeploy checks that what the validator accepts, the pipeline renders and commits:
// each spec is created, reaches DEPLOYED and its manifests are in the GitOps repository.
func TestValidSpecsDeploy(t *testing.T) {
	p := newPlane(t)
	var l controlplane.Listener
	p.want(201, "POST", "/v2/listeners", p.admin, `{"compute_type": "cluster", "compute_id": "prod",
		"compute_config": {"k8s_namespaces": ["agents"], "gitops": {"repo_url": "`+p.gitops+`"}}}`, &l)
	full, err := os.ReadFile(filepath.Join("testdata", "validation", "full-spec.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i, spec := range []string{`{}`, `{"cpu": 0.05, "cpu_limit": 16.04, "memory_mb": 4.0}`, `{"min_scale": 2, "max_scale": 2}`,
		`{"queue_cpu": 1, "queue_cpu_limit": 1, "cpu": 3}`, string(full)} {
		var d controlplane.Deployment
		name := "valid-" + string(rune('a'+i))
		p.want(201, "POST", "/v2/deployments", p.admin, deploymentBody(t, name, l.ID, `{"source_config": {"resource_spec": `+spec+`}}`), &d)
		r := p.waitStatus(d.ID, *d.LatestRevisionID)
		if r.Status != controlplane.RevisionDeployed {
			code, log := p.do("GET", "/v2/deployments/"+d.ID+"/revisions/"+r.ID+"/logs", p.admin, "", "")
			t.Fatalf("%s: revision %s, want DEPLOYED; log (%d):\n%s", spec, r.Status, code, log)
		}
		// a PATCH with the same spec is accepted too, and makes a revision that deploys
		var patched controlplane.Deployment
		p.want(200, "PATCH", "/v2/deployments/"+d.ID, p.admin, `{"source_config": {"resource_spec": `+spec+`}}`, &patched)
		if r := p.waitStatus(d.ID, *patched.LatestRevisionID); r.Status != controlplane.RevisionDeployed {
			t.Fatalf("%s: patched revision %s, want DEPLOYED", spec, r.Status)
		}
	}
}

// waitStatus polls a revision until it ends (DEPLOYED or a failure).
func (p *plane) waitStatus(deployment, revision string) controlplane.Revision {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var r controlplane.Revision
		p.want(200, "GET", "/v2/deployments/"+deployment+"/revisions/"+revision, p.admin, "", &r)
		switch {
		case r.Status == controlplane.RevisionDeployed || strings.HasSuffix(string(r.Status), "FAILED"):
			return r
		case time.Now().After(deadline):
			p.t.Fatalf("revision %s still %s", revision, r.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestListenerValidation(t *testing.T) {
	p := newPlane(t)
	// a cluster listener's compute_config is checked as a k8s one's: never accepted, then unusable
	body := p.refused(t, "POST", "/v2/listeners", `{"compute_type": "cluster", "compute_id": "c", "compute_config": {"k8s_namespaces": ["Bad_NS"]}}`)
	goldentest.Check(t, filepath.Join("testdata", "validation", "cluster-listener.json"), indent(t, body))
	var l controlplane.Listener
	p.want(201, "POST", "/v2/listeners", p.admin, `{"compute_type": "cluster", "compute_id": "c",
		"compute_config": {"k8s_namespaces": ["agents", "batch"], "gitops": {"repo_url": "`+p.gitops+`"}}}`, &l)
	// k8s and cluster are one kind of compute: one listener per compute id
	p.want(409, "POST", "/v2/listeners", p.admin, `{"compute_type": "k8s", "compute_id": "c", "compute_config": {"gitops": {"repo_url": "/r"}}}`, nil)

	var d controlplane.Deployment
	p.want(201, "POST", "/v2/deployments", p.admin, deploymentBody(t, "in-batch", l.ID, `{"source_config": {"listener_config": {"cluster_namespace": "batch"}}}`), &d)
	var dflt controlplane.Deployment
	p.want(201, "POST", "/v2/deployments", p.admin, deploymentBody(t, "in-default", l.ID, `{"source_config": {"listener_config": null}}`), &dflt)
	// Both deployed first: their pipelines append to the log in the background, which would
	// hide whether the refused change below appended nothing.
	for _, dep := range []controlplane.Deployment{d, dflt} {
		p.waitStatus(dep.ID, *dep.LatestRevisionID)
	}
	// a change that would strand the first or move the second (in the listener's default
	// namespace, agents) is refused, naming them
	body = p.refused(t, "PATCH", "/v2/listeners/"+l.ID, `{"compute_config": {"k8s_namespaces": ["other", "agents"], "gitops": {"repo_url": "`+p.gitops+`"}}}`)
	for _, want := range []string{"in-batch", "no longer allows", "in-default", "would move it"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("PATCH listener: %s; want it to say %q", body, want)
		}
	}
	p.want(200, "PATCH", "/v2/listeners/"+l.ID, p.admin, `{"compute_config": {"k8s_namespaces": ["agents", "batch", "more"], "gitops": {"repo_url": "`+p.gitops+`"}}}`, nil)
	if r := p.waitStatus(d.ID, *d.LatestRevisionID); r.Status != controlplane.RevisionDeployed {
		t.Errorf("deployment on a cluster listener: %s, want DEPLOYED", r.Status)
	}
}

func indent(t *testing.T, body []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, body, "", "  "); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return append(out.Bytes(), '\n')
}
