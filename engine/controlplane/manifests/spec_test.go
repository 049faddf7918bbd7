package manifests

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
)

// TestParseRefusesWhatTheClusterWould checks the renderer's entry to the control plane's
// validator (the whole table is httpapi/controlapi's TestDeploymentValidation).
func TestParseRefusesWhatTheClusterWould(t *testing.T) {
	prefix := []any{"body", "source_config", "resource_spec"}
	for _, tc := range []struct {
		name, spec string
		locs       []string // every violation, in order
	}{
		{"cpu bounds", `{"cpu": 0.04, "cpu_limit": 17, "queue_cpu": 9, "queue_cpu_limit": 0, "cache_cpu": 8.5, "cache_cpu_limit": 0.01}`,
			[]string{"cpu", "cpu_limit", "queue_cpu", "queue_cpu_limit", "cache_cpu", "cache_cpu_limit"}},
		{"counts", `{"min_scale": -1, "max_scale": 0, "memory_mb": 0, "queue_memory_limit_mb": -5}`,
			[]string{"min_scale", "max_scale", "memory_mb", "queue_memory_limit_mb"}},
		{"limit under request", `{"cpu": 2, "cpu_limit": 1, "memory_mb": 512, "memory_limit_mb": 256}`,
			[]string{"cpu_limit", "memory_limit_mb"}}, // the queue's limits default to twice its requests
		{"queue limit under its request", `{"queue_cpu": 2, "queue_cpu_limit": 1}`, []string{"queue_cpu_limit"}},
		{"min above max", `{"min_scale": 5, "max_scale": 2}`, []string{"min_scale"}}, // not again for the queue that inherits them
		{"hpa from zero", `{"min_scale": 0, "max_scale": 2, "queue_min_scale": 1}`, []string{"min_scale"}},
		{"labels and annotations", `{"labels": {"bad key!": "v", "ok": "bad value!"}, "annotations": {"-x": "y"}}`,
			[]string{"labels.bad key!", "labels.ok", "annotations.-x"}},
		{"service account", `{"service_account_name": "Not_A_Name"}`, []string{"service_account_name"}},
		{"pull secret without name", `{"image_pull_secrets": [{}]}`, []string{"image_pull_secrets.0.name"}},
		{"volumes", `{"volumes": [{"name": "a"}, {"name": "a"}, {"name": "B_c"}, {}], "volume_mounts": [{"name": "z", "mountPath": "/z"}, {"name": "a"}]}`,
			[]string{"volumes.1.name", "volumes.2.name", "volumes.3.name", "volume_mounts.0.name", "volume_mounts.1.mountPath"}},
		{"containers", `{"volumes": [{"name": "v"}], "init_containers": [{"name": "Init", "restartPolicy": "Always"}],
			"sidecars": [{"name": "queue", "image": "x", "imagePullPolicy": "Sometimes", "restartPolicy": "Never",
			  "env": [{"name": "1BAD", "value": "x"}, {"name": "OK", "value": "x", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
			  "volumeMounts": [{"name": "nope", "mountPath": "/n"}]}]}`,
			[]string{"init_containers.0.name", "init_containers.0.image", // restartPolicy Always: a sidecar, as in Kubernetes
				"sidecars.0.name", "sidecars.0.imagePullPolicy", "sidecars.0.env.0.name", "sidecars.0.env.1.valueFrom",
				"sidecars.0.volumeMounts.0.name", "sidecars.0.restartPolicy"}},
		{"unknown field", `{"cpus": 1}`, []string{"cpus"}},
		{"wrong type", `{"cpu": "one"}`, []string{"cpu"}},
		{"bad quantity", `{"sidecars": [{"name": "a", "image": "b", "resources": {"limits": {"cpu": "lots"}}}]}`, []string{"sidecars.0.resources.limits.cpu"}},
		{"not JSON", `{"cpu": `, []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.spec), prefix...)
			var e *engine.Error
			if !engine.Is(engine.Invalid, err) || !errors.As(err, &e) {
				t.Fatalf("Parse = %v; want an Invalid error", err)
			}
			var got []string
			for _, f := range e.Fields {
				if fmt.Sprint(f.Loc[:3]) != fmt.Sprint(prefix) {
					t.Errorf("loc %v does not start with %v", f.Loc, prefix)
				}
				var parts []string
				for _, p := range f.Loc[3:] {
					parts = append(parts, fmt.Sprint(p))
				}
				got = append(got, strings.Join(parts, "."))
			}
			if strings.Join(got, " ") != strings.Join(tc.locs, " ") {
				b, _ := json.MarshalIndent(e.Fields, "", " ")
				t.Errorf("violations at %q; want %q\n%s", got, tc.locs, b)
			}
		})
	}
}

func TestParseAcceptsValidSpecs(t *testing.T) {
	for _, spec := range []string{``, `null`, `{}`, fullSpec, `{"cpu": 8, "cpu_limit": 16, "min_scale": 0}`, `{"min_scale": 3, "max_scale": 3}`} {
		if _, err := Parse([]byte(spec)); err != nil {
			t.Errorf("Parse(%.40s) = %v", spec, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{fullSpec, `{}`, `{"cpu": 0.1}`, `{"volumes": [{"name": "a"}], "volume_mounts": [{"name": "a", "mountPath": "/a"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		rs, err := Parse(raw)
		if err != nil {
			if !engine.Is(engine.Invalid, err) {
				t.Fatalf("Parse error of kind %v: %v", engine.KindOf(err), err)
			}
			return
		}
		// whatever Parse accepts renders
		b, err := Render(manifestSpec("fuzz", string(raw)), rs, Options{Namespace: "ns"})
		if err != nil {
			t.Fatalf("Render of an accepted spec: %v", err)
		}
		for _, f := range b.Files {
			readsBack(t, f)
		}
	})
}
