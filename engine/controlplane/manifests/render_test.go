package manifests

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/jetgraph/jetgraph/engine/controlplane"
	"github.com/jetgraph/jetgraph/engine/goldentest"
)

// fullSpec sets every field of resource_spec.
const fullSpec = `{
  "min_scale": 2, "max_scale": 6, "cpu": 0.54, "cpu_limit": 1.96, "memory_mb": 512, "memory_limit_mb": 2048,
  "queue_min_scale": 1, "queue_max_scale": 4, "queue_cpu": 0.25, "queue_cpu_limit": 1, "queue_memory_mb": 256, "queue_memory_limit_mb": 1024,
  "orchestrator_cpu": 1, "orchestrator_cpu_limit": 2, "orchestrator_memory_mb": 1, "orchestrator_memory_limit_mb": 2, "orchestrator_min_scale": 1, "orchestrator_max_scale": 1,
  "executor_cpu": 1, "executor_cpu_limit": 2, "executor_memory_mb": 1, "executor_memory_limit_mb": 2,
  "cache_cpu": 0.5, "cache_cpu_limit": 1, "cache_memory_mb": 256,
  "db_cpu": 1, "db_cpu_limit": 2, "db_memory_mb": 1024, "db_memory_limit_mb": 2048, "db_storage_gi": 10, "db_max_connections": 100,
  "labels": {"team": "agents", "example.com/tier": "gold"},
  "annotations": {"example.com/owner": "ops@example.com"},
  "service_account_name": "agent-runner",
  "image_pull_secrets": [{"name": "registry-creds"}],
  "volumes": [
    {"name": "config", "configMap": {"name": "agent-config"}},
    {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}},
    {"name": "data", "persistentVolumeClaim": {"claimName": "agent-data", "readOnly": true}}
  ],
  "volume_mounts": [
    {"name": "config", "mountPath": "/etc/agent", "readOnly": true},
    {"name": "scratch", "mountPath": "/scratch", "subPath": "tmp"}
  ],
  "init_containers": [
    {"name": "migrate", "image": "example.com/migrate:1", "command": ["/migrate"], "args": ["--up"],
     "env": [{"name": "MODE", "value": "up"}, {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
     "volumeMounts": [{"name": "data", "mountPath": "/data"}]}
  ],
  "sidecars": [
    {"name": "proxy", "image": "example.com/proxy:2", "restartPolicy": "Always", "imagePullPolicy": "IfNotPresent",
     "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
     "securityContext": {"runAsNonRoot": true}},
    {"name": "logs", "image": "example.com/logs:3", "workingDir": "/var/log",
     "envFrom": [{"configMapRef": {"name": "log-settings"}}]}
  ]
}`

func manifestSpec(name string, rs string, secrets ...controlplane.Secret) controlplane.ManifestSpec {
	return controlplane.ManifestSpec{
		Tenant:         "7c1d5b3e-2f8a-4b6c-9d0e-1f2a3b4c5d6e",
		DeploymentID:   "0b9f6c2a-8d4e-4f1a-b3c5-7e9d1a2b3c4d",
		DeploymentName: name,
		RevisionID:     "5e4d3c2b-1a09-4876-b543-210fedcba987",
		ImageURI:       "registry.example.com/agents/support:1.4.2",
		Secrets:        secrets,
		ResourceSpec:   []byte(rs),
		Namespace:      "agents",
	}
}

func TestRenderGolden(t *testing.T) {
	key := controlplane.Secret{Name: "OPENAI_API_KEY", Value: "sk-test-not-a-real-key"}
	for _, tc := range []struct {
		name string
		spec controlplane.ManifestSpec
		opt  Options
	}{
		{"minimal", manifestSpec("support-bot", `null`), Options{Namespace: "default"}},
		{"full", manifestSpec("support-bot", fullSpec, key, controlplane.Secret{Name: "DB_PASSWORD", Value: "hunter2"}), Options{Namespace: "agents"}},
		// limits left unset are twice their request; the queue takes the API server's values
		{"defaults", manifestSpec("Support-Bot", `{"cpu": 0.26, "memory_mb": 300, "min_scale": 1, "max_scale": 3}`), Options{Namespace: "agents"}},
		// the queue's limit defaults to twice its own request when that is given
		{"queue-defaults", manifestSpec("support-bot", `{"cpu": 1, "cpu_limit": 4, "queue_cpu": 0.5, "memory_mb": 100, "queue_min_scale": 3}`), Options{Namespace: "agents"}},
		{"external-secrets", manifestSpec("support-bot", `{}`, key), Options{Namespace: "agents", ExternalSecrets: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := Parse(tc.spec.ResourceSpec)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Render(tc.spec, rs, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join("testdata", tc.name)
			var names []string
			for _, f := range b.Files {
				names = append(names, f.Name)
				goldentest.Check(t, filepath.Join(dir, f.Name), f.Data)
				readsBack(t, f)
			}
			notes := strings.Join(b.Notes, "\n")
			goldentest.Check(t, filepath.Join(dir, "notes.txt"), []byte(notes+"\n"))
			// no golden file is left over from a file Render no longer writes
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var have []string
			for _, e := range entries {
				if e.Name() != "notes.txt" {
					have = append(have, e.Name())
				}
			}
			sort.Strings(names)
			if strings.Join(have, ",") != strings.Join(names, ",") {
				t.Errorf("rendered %v; testdata/%s holds %v", names, tc.name, have)
			}
		})
	}
}

// readsBack decodes a rendered file strictly into the Kubernetes type its kind names: every
// field written is one the cluster knows.
func readsBack(t *testing.T, f File) {
	t.Helper()
	var head struct{ APIVersion, Kind string }
	if err := yaml.Unmarshal(f.Data, &head); err != nil {
		t.Fatalf("%s: %v", f.Name, err)
	}
	var obj any
	switch head.APIVersion + " " + head.Kind {
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "v1 Secret":
		obj = &corev1.Secret{}
	case "autoscaling/v2 HorizontalPodAutoscaler":
		obj = &autoscalingv2.HorizontalPodAutoscaler{}
	case "kustomize.config.k8s.io/v1beta1 Kustomization":
		obj = &kustomization{}
	default:
		t.Fatalf("%s: unexpected %s %s", f.Name, head.APIVersion, head.Kind)
	}
	if err := yaml.UnmarshalStrict(f.Data, obj); err != nil {
		t.Errorf("%s does not read back as %s: %v", f.Name, head.Kind, err)
	}
}

// TestSecretsNeverInDeployments: the Deployments take the secrets from the Secret by envFrom;
// their values appear in no Deployment.
func TestSecretsNeverInDeployments(t *testing.T) {
	spec := manifestSpec("bot", fullSpec, controlplane.Secret{Name: "TOKEN", Value: "s3cr3t-value"})
	rs, err := Parse(spec.ResourceSpec)
	if err != nil {
		t.Fatal(err)
	}
	for _, external := range []bool{false, true} {
		b, err := Render(spec, rs, Options{Namespace: "x", ExternalSecrets: external})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range b.Files {
			if !strings.HasSuffix(f.Name, ".deployment.yaml") {
				continue
			}
			if strings.Contains(string(f.Data), "s3cr3t") {
				t.Errorf("%s holds a secret value", f.Name)
			}
			var d appsv1.Deployment
			if err := yaml.UnmarshalStrict(f.Data, &d); err != nil {
				t.Fatalf("%s does not read back as a Deployment: %v", f.Name, err)
			}
			from := d.Spec.Template.Spec.Containers[0].EnvFrom
			if len(from) != 1 || from[0].SecretRef == nil || from[0].SecretRef.Name != "bot-secrets" {
				t.Errorf("%s: envFrom = %+v; want the Secret bot-secrets", f.Name, from)
			}
		}
	}
}

func TestName(t *testing.T) {
	long := strings.Repeat("agent-", 12)
	for _, tc := range []struct{ in, want string }{
		{"support-bot", "support-bot"},
		{"a1", "a1"},
		{"Support-Bot", "support-bot-"},
		{"bot_2", "bot-2-"},
		{"9lives", "d-9lives-"},
		{long, "agent-agent-agent-agent-agent-agent-agent-"},
	} {
		got := Name(tc.in)
		if got != tc.want && !(strings.HasSuffix(tc.want, "-") && strings.HasPrefix(got, tc.want) && len(got) == len(tc.want)+8) {
			t.Errorf("Name(%s) = %s; want %s", tc.in, got, tc.want)
		}
		if msgs := validation.IsDNS1035Label(got + "-api-server"); len(got) > 50 || len(msgs) > 0 {
			t.Errorf("Name(%s) = %s: %v", tc.in, got, msgs)
		}
	}
	for _, pair := range [][2]string{{long, long + "x"}, {"Bot", "bot"}, {"a_b", "a-b"}} {
		if Name(pair[0]) == Name(pair[1]) {
			t.Errorf("%s and %s share the name %s", pair[0], pair[1], Name(pair[0]))
		}
	}
}
