package controlplane

import (
	"bytes"
	"errors"
	"testing"

	"github.com/jetgraph/jetgraph/engine"
)

// FuzzResourceSpec checks the validator on any input: it never panics, a refusal is an Invalid
// error whose every loc is under the prefix, and what it accepts is stored in a form it accepts
// again unchanged (GET, then the same spec in a PATCH, makes the same revision).
func FuzzResourceSpec(f *testing.F) {
	for _, s := range []string{`{}`, `{"cpu": 4, "cpu_limit": 2}`, `{"cpu": 0.05, "memory_mb": 4.0, "labels": {"a": "b"}}`,
		`{"volumes": [{"name": "a", "emptyDir": {}}], "volume_mounts": [{"name": "a", "mountPath": "/a"}]}`,
		`{"sidecars": [{"name": "s", "image": "i", "restartPolicy": "Always", "resources": {"limits": {"cpu": "1"}}, "env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}]}`,
		`{"init_containers": [{"name": "i", "image": "x", "ports": [{"containerPort": 70000}]}], "min_scale": 1e400}`, `[1]`, `"x"`, `{"cpus": 1}`} {
		f.Add([]byte(s))
	}
	prefix := []any{"body", "source_config", "resource_spec"}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v engine.Violations
		_, stored := checkResourceSpec(&v, raw, prefix)
		if len(v) > 0 {
			err := v.Err("fuzz")
			var e *engine.Error
			if !engine.Is(engine.Invalid, err) || !errors.As(err, &e) {
				t.Fatalf("error %v", err)
			}
			for _, fe := range e.Fields {
				if len(fe.Loc) < len(prefix) || fe.Loc[2] != "resource_spec" || fe.Msg == "" || fe.Type == "" {
					t.Fatalf("violation %+v", fe)
				}
			}
			return
		}
		if stored == nil {
			return // null or empty
		}
		var again engine.Violations
		_, restored := checkResourceSpec(&again, stored, prefix)
		if len(again) > 0 || !bytes.Equal(restored, stored) {
			t.Fatalf("stored %s parses to %s, %v", stored, restored, again)
		}
	})
}
