package controlplane

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
)

// gitBody is a valid git_host creation body; each case changes it with a JSON merge.
const gitBody = `{"name": "app", "source": "git_host", "source_config": {"repo_url": "/repo"},
	"source_revision_config": {"repo_ref": "main"}, "secrets": []}`

const extBody = `{"name": "app", "source": "external_container",
	"source_config": {"listener_id": "6f1c6a56-8e0a-4c55-9d9f-7d6c4b0c7a01"},
	"source_revision_config": {"image_uri": "registry/app:1"}, "secrets": []}`

// merge applies a JSON merge patch (RFC 7386) of patch to base.
func merge(base map[string]any, patch map[string]any) map[string]any {
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(base, k)
		case map[string]any:
			if bv, ok := base[k].(map[string]any); ok {
				base[k] = merge(bv, pv)
				continue
			}
			base[k] = pv
		default:
			base[k] = v
		}
	}
	return base
}

func decodeBody(t *testing.T, base, patch string) map[string]any {
	t.Helper()
	var b, p map[string]any
	if err := json.Unmarshal([]byte(base), &b); err != nil {
		t.Fatal(err)
	}
	if patch != "" {
		if err := json.Unmarshal([]byte(patch), &p); err != nil {
			t.Fatal(err)
		}
	}
	return merge(b, p)
}

// violations are an error's field errors as "loc.path:type", sorted.
func violations(err error) []string {
	var e *engine.Error
	if !errors.As(err, &e) {
		return nil
	}
	var out []string
	for _, f := range e.Fields {
		parts := make([]string, len(f.Loc))
		for i, l := range f.Loc {
			parts[i] = fmt.Sprint(l)
		}
		out = append(out, strings.Join(parts, ".")+":"+f.Type)
	}
	slices.Sort(out)
	return out
}

func TestParseCreate(t *testing.T) {
	rs := func(spec string) string { return `{"source_config": {"resource_spec": ` + spec + `}}` }
	tests := []struct {
		name, base, patch string
		want              []string // every violation, sorted; nil: valid
	}{
		{"git_host valid", gitBody, ``, nil},
		{"external_container valid", extBody, ``, nil},
		{"github is an alias of git_host", gitBody, `{"source": "github"}`, nil},
		{"every required field", `{}`, ``, []string{"body.name:missing", "body.secrets:missing", "body.source:missing",
			"body.source_config:missing", "body.source_revision_config:missing"}},
		{"name pattern", gitBody, `{"name": "1-app"}`, []string{"body.name:string_pattern_mismatch"}},
		{"name type", gitBody, `{"name": 3}`, []string{"body.name:string_type"}},
		{"source enum", gitBody, `{"source": "svn"}`, []string{"body.source:enum"}},
		{"internal_container refused", gitBody, `{"source": "internal_container"}`, []string{"body.source:value_error"}},
		{"git_host needs repo_url and repo_ref", gitBody, `{"source_config": {"repo_url": null}, "source_revision_config": {"repo_ref": null}}`,
			[]string{"body.source_config.repo_url:missing", "body.source_revision_config.repo_ref:missing"}},
		{"external needs listener_id and image_uri", extBody, `{"source_config": {"listener_id": null}, "source_revision_config": {"image_uri": null}}`,
			[]string{"body.source_config.listener_id:missing", "body.source_revision_config.image_uri:missing"}},
		{"git_host-only fields on external", extBody, `{"source_config": {"repo_url": "/r", "build_on_push": true, "deployment_type": "dev"}, "source_revision_config": {"repo_ref": "main"}}`,
			[]string{"body.source_config.build_on_push:value_error", "body.source_config.deployment_type:value_error",
				"body.source_config.repo_url:value_error", "body.source_revision_config.repo_ref:value_error"}},
		{"external-only fields on git_host", gitBody, `{"source_config": {"listener_id": "6f1c6a56-8e0a-4c55-9d9f-7d6c4b0c7a01", "custom_url": "http://x"}, "source_revision_config": {"image_uri": "i"}}`,
			[]string{"body.source_config.custom_url:value_error", "body.source_config.listener_id:value_error", "body.source_revision_config.image_uri:value_error"}},
		{"uuid fields", gitBody, `{"source_config": {"integration_id": "nope"}}`, []string{"body.source_config.integration_id:uuid_parsing"}},
		{"deployment_type enum", gitBody, `{"source_config": {"deployment_type": "huge"}}`, []string{"body.source_config.deployment_type:enum"}},
		{"build_on_push with a tag", gitBody, `{"source_config": {"build_on_push": true}, "source_revision_config": {"repo_ref": "refs/tags/v1"}}`,
			[]string{"body.source_config.build_on_push:value_error"}},
		{"build_on_push off with a tag", gitBody, `{"source_config": {"build_on_push": false}, "source_revision_config": {"repo_ref": "refs/tags/v1"}}`, nil},
		{"repo_commit_sha is read-only", gitBody, `{"source_revision_config": {"repo_commit_sha": "abc"}}`, []string{"body.source_revision_config.repo_commit_sha:value_error"}},
		{"graph_config_path stays inside", gitBody, `{"source_revision_config": {"graph_config_path": "../x.json"}}`, []string{"body.source_revision_config.graph_config_path:value_error"}},
		{"cluster_namespace DNS label", extBody, `{"source_config": {"listener_config": {"cluster_namespace": "Bad_NS"}}}`,
			[]string{"body.source_config.listener_config.cluster_namespace:string_pattern_mismatch"}},
		{"secret shape", gitBody, `{"secrets": [{"name": "A"}, 3, {"name": "1X", "value": "v"}]}`,
			[]string{"body.secrets.0.value:missing", "body.secrets.1:dict_type", "body.secrets.2.name:string_pattern_mismatch"}},
		{"reserved secret names", gitBody, `{"secrets": [{"name": "PORT", "value": "1"}, {"name": "JETGRAPH_X", "value": "1"}, {"name": "LANGSMITH_API_KEY", "value": "1"}, {"name": "POSTGRES_URI", "value": "1"}]}`,
			[]string{"body.secrets.0.name:value_error", "body.secrets.1.name:value_error", "body.secrets.2.name:value_error", "body.secrets.3.name:value_error"}},
		{"secret given twice", gitBody, `{"secrets": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]}`, []string{"body.secrets.1.name:value_error"}},
		{"an external_container's secrets fit a Kubernetes Secret", extBody, `{"secrets": [{"name": "BIG", "value": "` + strings.Repeat("x", 1<<20) + `"}]}`,
			[]string{"body.secrets:too_long"}},
		{"a git_host's secrets are no Kubernetes Secret", gitBody, `{"secrets": [{"name": "BIG", "value": "` + strings.Repeat("x", 1<<20) + `"}]}`, nil},
		{"secrets not a list", gitBody, `{"secrets": {}}`, []string{"body.secrets:list_type"}},
		{"cpu bounds", extBody, rs(`{"cpu": 0.04, "cpu_limit": 16.04, "queue_cpu": 8.1, "cache_cpu_limit": 17}`),
			[]string{"body.source_config.resource_spec.cache_cpu_limit:less_than_equal", "body.source_config.resource_spec.cpu:greater_than_equal",
				"body.source_config.resource_spec.queue_cpu:less_than_equal"}},
		{"cpu rounding keeps 0.05 in bounds", extBody, rs(`{"cpu": 0.05, "cpu_limit": 16.04}`), nil},
		{"numbers and integers", extBody, rs(`{"cpu": "1", "memory_mb": 1.5, "min_scale": -1}`),
			[]string{"body.source_config.resource_spec.cpu:float_type", "body.source_config.resource_spec.memory_mb:int_type",
				"body.source_config.resource_spec.min_scale:greater_than_equal"}},
		{"labels are strings", extBody, rs(`{"labels": {"a": 1}, "annotations": []}`),
			[]string{"body.source_config.resource_spec.annotations:dict_type", "body.source_config.resource_spec.labels.a:string_type"}},
		{"image pull secrets need a name", extBody, rs(`{"image_pull_secrets": [{}]}`), []string{"body.source_config.resource_spec.image_pull_secrets.0.name:missing"}},
		{"volumes: DNS labels, unique, sources are objects", extBody, rs(`{"volumes": [{"name": "data", "emptyDir": {}}, {"name": "data"}, {"name": "Bad"}, {"name": "x", "secret": "s"}]}`),
			[]string{"body.source_config.resource_spec.volumes.1.name:value_error", "body.source_config.resource_spec.volumes.2.name:string_pattern_mismatch",
				"body.source_config.resource_spec.volumes.3.secret:dict_type"}},
		{"mounts name a volume", extBody, rs(`{"volumes": [{"name": "data"}], "volume_mounts": [{"name": "data", "mountPath": "/d"}, {"name": "other", "mountPath": "/o"}, {"name": "data"}]}`),
			[]string{"body.source_config.resource_spec.volume_mounts.1.name:value_error", "body.source_config.resource_spec.volume_mounts.2.mountPath:missing"}},
		{"containers", extBody, rs(`{"volumes": [{"name": "v"}], "sidecars": [{"name": "Side", "imagePullPolicy": "Sometimes", "restartPolicy": "Never",
			"command": ["a", 1], "env": [{"name": "1A"}, {"name": "B", "value": "x", "valueFrom": {"secretKeyRef": {}}}, {"name": "C", "value": "", "valueFrom": {}}],
			"volumeMounts": [{"name": "w", "mountPath": "/w"}], "resources": {"limits": {"cpu": "lots"}}}], "init_containers": [{"name": "init", "image": "busybox"}]}`),
			[]string{"body.source_config.resource_spec.sidecars.0.command.1:string_type", "body.source_config.resource_spec.sidecars.0.env.0.name:string_pattern_mismatch",
				"body.source_config.resource_spec.sidecars.0.env.1.valueFrom.secretKeyRef.key:missing", "body.source_config.resource_spec.sidecars.0.env.1.valueFrom.secretKeyRef.name:missing",
				"body.source_config.resource_spec.sidecars.0.env.1.valueFrom:value_error", "body.source_config.resource_spec.sidecars.0.env.2.valueFrom:value_error", "body.source_config.resource_spec.sidecars.0.image:missing",
				"body.source_config.resource_spec.sidecars.0.imagePullPolicy:enum", "body.source_config.resource_spec.sidecars.0.name:string_pattern_mismatch",
				"body.source_config.resource_spec.sidecars.0.resources.limits.cpu:value_error", "body.source_config.resource_spec.sidecars.0.restartPolicy:enum",
				"body.source_config.resource_spec.sidecars.0.volumeMounts.0.name:value_error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCreate(decodeBody(t, tt.base, tt.patch))
			if got := violations(err); !slices.Equal(got, tt.want) {
				t.Errorf("violations:\n got %q\nwant %q (err %v)", got, tt.want, err)
			}
			if tt.want != nil && engine.KindOf(err) != engine.Invalid {
				t.Errorf("kind %v, want Invalid", engine.KindOf(err))
			}
		})
	}
}

func TestResourceSpecDefaults(t *testing.T) {
	tests := []struct{ spec, want string }{
		{`{"cpu": 1.04, "memory_mb": 512, "min_scale": 1, "max_scale": 3}`,
			`{"cpu":1,"cpu_limit":2,"max_scale":3,"memory_limit_mb":1024,"memory_mb":512,"min_scale":1,"queue_cpu":1,"queue_cpu_limit":2,"queue_max_scale":3,"queue_memory_limit_mb":1024,"queue_memory_mb":512,"queue_min_scale":1}`},
		{`{"cpu": 2, "cpu_limit": 3.06, "queue_cpu": 0.5, "cache_cpu": 0.25, "db_memory_mb": 100}`,
			`{"cache_cpu":0.3,"cache_cpu_limit":0.6,"cpu":2,"cpu_limit":3.1,"db_memory_limit_mb":200,"db_memory_mb":100,"queue_cpu":0.5,"queue_cpu_limit":1}`},
		{`{"labels": {"team": "a"}}`, `{"labels":{"team":"a"}}`},
		{`{"cpu": 1, "cpu_limit": 4, "memory_mb": 4.0}`,
			`{"cpu":1,"cpu_limit":4,"memory_limit_mb":8,"memory_mb":4,"queue_cpu":1,"queue_cpu_limit":2,"queue_memory_limit_mb":8,"queue_memory_mb":4}`},
	}
	for _, tt := range tests {
		var v engine.Violations
		_, got := checkResourceSpec(&v, []byte(tt.spec), []any{"rs"})
		if len(v) > 0 || string(got) != tt.want {
			t.Errorf("resourceSpec(%s)\n got %s (%v)\nwant %s", tt.spec, got, v, tt.want)
		}
	}
}

func TestParsePatch(t *testing.T) {
	cur, err := ParseCreate(decodeBody(t, gitBody, `{"source_config": {"deployment_type": "dev"}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, patch string
		revise      bool
		want        []string
	}{
		{"build_on_push alone makes no revision", `{"source_config": {"build_on_push": true}}`, false, nil},
		{"a new branch makes a revision", `{"source_revision_config": {"repo_ref": "dev"}}`, true, nil},
		{"secrets make a revision", `{"secrets": [{"name": "A", "value": "b"}]}`, true, nil},
		{"a mask with nothing to keep", `{"secrets": [{"name": "NOPE", "value": "********"}]}`, false, []string{"body.secrets.0.value:value_error"}},
		{"null fields change nothing", `{"secrets": null, "source_revision_config": {"repo_ref": null}}`, false, nil},
		{"the same immutable values are accepted", `{"name": "app", "source": "git_host", "source_config": {"repo_url": "/repo", "deployment_type": "dev"}}`, false, nil},
		{"immutable fields", `{"name": "other", "source": "external_container", "source_config": {"repo_url": "/else", "deployment_type": "prod", "integration_id": "6f1c6a56-8e0a-4c55-9d9f-7d6c4b0c7a01"}}`, false,
			[]string{"body.name:value_error", "body.source:value_error", "body.source_config.deployment_type:value_error",
				"body.source_config.integration_id:value_error", "body.source_config.repo_url:value_error"}},
		{"build_on_push with a new tag", `{"source_config": {"build_on_push": true}, "source_revision_config": {"repo_ref": "refs/tags/v2"}}`, false,
			[]string{"body.source_config.build_on_push:value_error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body map[string]any
			if err := json.Unmarshal([]byte(tt.patch), &body); err != nil {
				t.Fatal(err)
			}
			_, revise, err := ParsePatch(body, cur)
			if got := violations(err); !slices.Equal(got, tt.want) {
				t.Errorf("violations:\n got %q\nwant %q", got, tt.want)
			}
			if err == nil && revise != tt.revise {
				t.Errorf("new revision %v, want %v", revise, tt.revise)
			}
		})
	}
}

func TestParseListener(t *testing.T) {
	for _, tt := range []struct {
		body string
		want []string
	}{
		{`{"compute_type": "k8s", "compute_id": "prod-1", "compute_config": {"gitops_repo": "/repo"}}`, nil},
		{`{}`, []string{"body.compute_id:missing", "body.compute_type:missing"}},
		{`{"compute_type": "ecs", "compute_id": " ", "compute_config": []}`, []string{"body.compute_config:dict_type", "body.compute_id:string_too_short", "body.compute_type:enum"}},
	} {
		var body map[string]any
		if err := json.Unmarshal([]byte(tt.body), &body); err != nil {
			t.Fatal(err)
		}
		_, err := ParseListener(body, nil)
		if got := violations(err); !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.body, got, tt.want)
		}
	}
}
