package manifests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/jetgraph/jetgraph/engine"
)

// ResourceSpec is a deployment's source_config.resource_spec. Every field is optional; the
// Kubernetes-shaped members use the official types, so what the user wrote is what the cluster
// gets. The orchestrator_*, executor_*, cache_* and db_* members are accepted and not rendered:
// a jetgraph runtime keeps its state in NATS, with no cache or database deployment of its own.
type ResourceSpec struct {
	MinScale           *int     `json:"min_scale"`
	MaxScale           *int     `json:"max_scale"`
	CPU                *float64 `json:"cpu"`
	CPULimit           *float64 `json:"cpu_limit"`
	MemoryMB           *int     `json:"memory_mb"`
	MemoryLimitMB      *int     `json:"memory_limit_mb"`
	QueueMinScale      *int     `json:"queue_min_scale"`
	QueueMaxScale      *int     `json:"queue_max_scale"`
	QueueCPU           *float64 `json:"queue_cpu"`
	QueueCPULimit      *float64 `json:"queue_cpu_limit"`
	QueueMemoryMB      *int     `json:"queue_memory_mb"`
	QueueMemoryLimitMB *int     `json:"queue_memory_limit_mb"`

	OrchestratorCPU           *float64 `json:"orchestrator_cpu"`
	OrchestratorCPULimit      *float64 `json:"orchestrator_cpu_limit"`
	OrchestratorMemoryMB      *int     `json:"orchestrator_memory_mb"`
	OrchestratorMemoryLimitMB *int     `json:"orchestrator_memory_limit_mb"`
	OrchestratorMinScale      *int     `json:"orchestrator_min_scale"`
	OrchestratorMaxScale      *int     `json:"orchestrator_max_scale"`
	ExecutorCPU               *float64 `json:"executor_cpu"`
	ExecutorCPULimit          *float64 `json:"executor_cpu_limit"`
	ExecutorMemoryMB          *int     `json:"executor_memory_mb"`
	ExecutorMemoryLimitMB     *int     `json:"executor_memory_limit_mb"`
	CacheCPU                  *float64 `json:"cache_cpu"`
	CacheCPULimit             *float64 `json:"cache_cpu_limit"`
	CacheMemoryMB             *int     `json:"cache_memory_mb"`
	DBCPU                     *float64 `json:"db_cpu"`
	DBCPULimit                *float64 `json:"db_cpu_limit"`
	DBMemoryMB                *int     `json:"db_memory_mb"`
	DBMemoryLimitMB           *int     `json:"db_memory_limit_mb"`
	DBStorageGi               *int     `json:"db_storage_gi"`
	DBMaxConnections          *int     `json:"db_max_connections"`

	Labels             map[string]string             `json:"labels"`
	Annotations        map[string]string             `json:"annotations"`
	ServiceAccountName *string                       `json:"service_account_name"`
	ImagePullSecrets   []corev1.LocalObjectReference `json:"image_pull_secrets"`
	Volumes            []corev1.Volume               `json:"volumes"`
	VolumeMounts       []corev1.VolumeMount          `json:"volume_mounts"`
	InitContainers     []corev1.Container            `json:"init_containers"`
	Sidecars           []corev1.Container            `json:"sidecars"`
}

// CPU bounds of the spec, in cores per replica.
const (
	minCPU      = 0.1
	maxCPU      = 8
	maxCPULimit = 16
)

// Pod is the resolved size of one of the rendered Deployments: every default applied, CPU
// rounded. A nil member is not set (Kubernetes' own default applies).
type Pod struct {
	MinScale, MaxScale      *int
	CPU, CPULimit           *float64
	MemoryMB, MemoryLimitMB *int
}

// Sizes are the API server's and the queue's resolved sizes.
type Sizes struct {
	API, Queue Pod
}

// Parse decodes and checks a resource_spec: every problem is reported at once, each with its loc
// under prefix (e.g. "body", "source_config", "resource_spec"), so the API can refuse a spec
// before a revision is created and the renderer never meets one the cluster would refuse. A null
// or empty input is the empty spec.
func Parse(raw []byte, prefix ...any) (ResourceSpec, error) {
	const op = "manifests.parse"
	var s ResourceSpec
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return s, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		var v engine.Violations
		v.Add("value_error", "not a valid resource_spec: "+err.Error(), prefix...)
		return s, v.Err(op)
	}
	var v engine.Violations
	s.check(&v, prefix)
	return s, v.Err(op)
}

// at extends a loc prefix.
func at(prefix []any, more ...any) []any {
	return append(append([]any{}, prefix...), more...)
}

func (s *ResourceSpec) check(v *engine.Violations, prefix []any) {
	cpu := func(name string, p *float64, hi float64) {
		if p == nil {
			return
		}
		if *p < minCPU {
			v.Add("greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %g", minCPU), at(prefix, name)...)
		} else if *p > hi {
			v.Add("less_than_equal", fmt.Sprintf("Input should be less than or equal to %g", hi), at(prefix, name)...)
		}
	}
	cpu("cpu", s.CPU, maxCPU)
	cpu("cpu_limit", s.CPULimit, maxCPULimit)
	cpu("queue_cpu", s.QueueCPU, maxCPU)
	cpu("queue_cpu_limit", s.QueueCPULimit, maxCPULimit)
	cpu("cache_cpu", s.CacheCPU, maxCPU)
	cpu("cache_cpu_limit", s.CacheCPULimit, maxCPULimit)
	positive := func(name string, p *int, min int) {
		if p != nil && *p < min {
			v.Add("greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %d", min), at(prefix, name)...)
		}
	}
	for _, f := range []struct {
		name string
		p    *int
		min  int
	}{
		{"min_scale", s.MinScale, 0}, {"max_scale", s.MaxScale, 1},
		{"queue_min_scale", s.QueueMinScale, 0}, {"queue_max_scale", s.QueueMaxScale, 1},
		{"memory_mb", s.MemoryMB, 1}, {"memory_limit_mb", s.MemoryLimitMB, 1},
		{"queue_memory_mb", s.QueueMemoryMB, 1}, {"queue_memory_limit_mb", s.QueueMemoryLimitMB, 1},
	} {
		positive(f.name, f.p, f.min)
	}
	if len(*v) == 0 { // the sizes below compare values already found out of bounds otherwise
		s.checkSizes(v, prefix)
	}
	s.checkPod(v, prefix)
}

// checkSizes refuses sizes the cluster would refuse once the defaults are applied.
func (s *ResourceSpec) checkSizes(v *engine.Violations, prefix []any) {
	sizes := s.Sizes()
	for _, p := range []struct {
		prefix string
		pod    Pod
	}{{"", sizes.API}, {"queue_", sizes.Queue}} {
		if p.pod.CPU != nil && p.pod.CPULimit != nil && *p.pod.CPULimit < *p.pod.CPU {
			v.Add("value_error", fmt.Sprintf("%scpu_limit %g is below the request %scpu %g: Kubernetes refuses a limit under its request", p.prefix, *p.pod.CPULimit, p.prefix, *p.pod.CPU), at(prefix, p.prefix+"cpu_limit")...)
		}
		if p.pod.MemoryMB != nil && p.pod.MemoryLimitMB != nil && *p.pod.MemoryLimitMB < *p.pod.MemoryMB {
			v.Add("value_error", fmt.Sprintf("%smemory_limit_mb %d is below the request %smemory_mb %d: Kubernetes refuses a limit under its request", p.prefix, *p.pod.MemoryLimitMB, p.prefix, *p.pod.MemoryMB), at(prefix, p.prefix+"memory_limit_mb")...)
		}
		if p.pod.MaxScale != nil {
			if p.pod.MinScale != nil && *p.pod.MinScale > *p.pod.MaxScale {
				v.Add("value_error", fmt.Sprintf("%smin_scale is above %smax_scale", p.prefix, p.prefix), at(prefix, p.prefix+"min_scale")...)
			} else if p.pod.MinScale != nil && *p.pod.MinScale == 0 && *p.pod.MaxScale > 0 {
				v.Add("value_error", fmt.Sprintf("%smin_scale must be at least 1 with %smax_scale: a HorizontalPodAutoscaler does not scale to zero", p.prefix, p.prefix), at(prefix, p.prefix+"min_scale")...)
			}
		}
	}
}

// round1 rounds a CPU value to one decimal, as the spec says.
func round1(x float64) float64 { return math.Round(x*10) / 10 }

// Sizes applies the spec's defaults: a limit left unset is twice its request, and the queue's
// values default to the API server's (its limit to twice its own request when that is given).
func (s ResourceSpec) Sizes() Sizes {
	roundp := func(p *float64) *float64 {
		if p == nil {
			return nil
		}
		r := round1(*p)
		return &r
	}
	api := Pod{MinScale: s.MinScale, MaxScale: s.MaxScale, CPU: roundp(s.CPU), CPULimit: roundp(s.CPULimit), MemoryMB: s.MemoryMB, MemoryLimitMB: s.MemoryLimitMB}
	if api.CPULimit == nil && api.CPU != nil {
		api.CPULimit = ptr(round1(2 * *api.CPU))
	}
	if api.MemoryLimitMB == nil && api.MemoryMB != nil {
		api.MemoryLimitMB = ptr(2 * *api.MemoryMB)
	}
	queue := Pod{MinScale: s.QueueMinScale, MaxScale: s.QueueMaxScale, CPU: roundp(s.QueueCPU), CPULimit: roundp(s.QueueCPULimit), MemoryMB: s.QueueMemoryMB, MemoryLimitMB: s.QueueMemoryLimitMB}
	if queue.MinScale == nil {
		queue.MinScale = api.MinScale
	}
	if queue.MaxScale == nil {
		queue.MaxScale = api.MaxScale
	}
	switch {
	case queue.CPULimit != nil:
	case queue.CPU != nil:
		queue.CPULimit = ptr(round1(2 * *queue.CPU))
	default:
		queue.CPULimit = api.CPULimit
	}
	if queue.CPU == nil {
		queue.CPU = api.CPU
	}
	switch {
	case queue.MemoryLimitMB != nil:
	case queue.MemoryMB != nil:
		queue.MemoryLimitMB = ptr(2 * *queue.MemoryMB)
	default:
		queue.MemoryLimitMB = api.MemoryLimitMB
	}
	if queue.MemoryMB == nil {
		queue.MemoryMB = api.MemoryMB
	}
	return Sizes{API: api, Queue: queue}
}

func ptr[T any](v T) *T { return &v }

// cIdentifier is an environment variable name a shell can use.
var cIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkPod checks the Kubernetes-shaped members against the rules the cluster applies, so that a
// manifest committed to the GitOps repository is one the cluster accepts.
func (s *ResourceSpec) checkPod(v *engine.Violations, prefix []any) {
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) { // violations in a stable order
		val := s.Labels[k]
		for _, msg := range validation.IsQualifiedName(k) {
			v.Add("value_error", fmt.Sprintf("label key %q: %s", k, msg), at(prefix, "labels", k)...)
		}
		for _, msg := range validation.IsValidLabelValue(val) {
			v.Add("value_error", fmt.Sprintf("label value %q: %s", val, msg), at(prefix, "labels", k)...)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Annotations)) {
		for _, msg := range validation.IsQualifiedName(k) {
			v.Add("value_error", fmt.Sprintf("annotation key %q: %s", k, msg), at(prefix, "annotations", k)...)
		}
	}
	if s.ServiceAccountName != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*s.ServiceAccountName) {
			v.Add("value_error", msg, at(prefix, "service_account_name")...)
		}
	}
	for i, r := range s.ImagePullSecrets {
		if r.Name == "" {
			v.Add("missing", "Field required", at(prefix, "image_pull_secrets", i, "name")...)
		}
	}
	volumes := map[string]bool{}
	for i, vol := range s.Volumes {
		dnsLabel(v, vol.Name, at(prefix, "volumes", i, "name"))
		if volumes[vol.Name] {
			v.Add("value_error", fmt.Sprintf("volume name %q is used twice", vol.Name), at(prefix, "volumes", i, "name")...)
		}
		volumes[vol.Name] = true
	}
	mounts(v, s.VolumeMounts, volumes, at(prefix, "volume_mounts"))
	names := map[string]bool{apiContainer: true, queueContainer: true}
	for _, group := range []struct {
		field string
		list  []corev1.Container
	}{{"init_containers", s.InitContainers}, {"sidecars", s.Sidecars}} {
		for i, c := range group.list {
			loc := at(prefix, group.field, i)
			dnsLabel(v, c.Name, at(loc, "name"))
			if names[c.Name] {
				v.Add("value_error", fmt.Sprintf("container name %q is used twice in the pod (%s and %s are jetgraph's)", c.Name, apiContainer, queueContainer), at(loc, "name")...)
			}
			names[c.Name] = true
			if c.Image == "" {
				v.Add("missing", "Field required", at(loc, "image")...)
			}
			switch c.ImagePullPolicy {
			case "", corev1.PullAlways, corev1.PullNever, corev1.PullIfNotPresent:
			default:
				v.Add("enum", "Input should be 'Always', 'Never' or 'IfNotPresent'", at(loc, "imagePullPolicy")...)
			}
			if c.RestartPolicy != nil {
				switch *c.RestartPolicy {
				case corev1.ContainerRestartPolicyAlways, corev1.ContainerRestartPolicyOnFailure:
				default:
					v.Add("enum", "Input should be 'Always' or 'OnFailure'", at(loc, "restartPolicy")...)
				}
				if group.field == "init_containers" {
					v.Add("value_error", "restartPolicy is for sidecars: an init container runs to completion", at(loc, "restartPolicy")...)
				}
			}
			for j, e := range c.Env {
				if !cIdentifier.MatchString(e.Name) {
					v.Add("value_error", fmt.Sprintf("env name %q is not a C identifier", e.Name), at(loc, "env", j, "name")...)
				}
				if e.Value != "" && e.ValueFrom != nil {
					v.Add("value_error", "valueFrom cannot be used with a non-empty value", at(loc, "env", j, "valueFrom")...)
				}
			}
			mounts(v, c.VolumeMounts, volumes, at(loc, "volumeMounts"))
		}
	}
}

// mounts checks that every mount names a volume of the pod and has a path.
func mounts(v *engine.Violations, list []corev1.VolumeMount, volumes map[string]bool, loc []any) {
	for i, m := range list {
		if !volumes[m.Name] {
			v.Add("value_error", fmt.Sprintf("volume mount %q names no volume of resource_spec.volumes", m.Name), at(loc, i, "name")...)
		}
		if m.MountPath == "" {
			v.Add("missing", "Field required", at(loc, i, "mountPath")...)
		}
	}
}

// dnsLabel reports a name that is not an RFC 1123 label.
func dnsLabel(v *engine.Violations, name string, loc []any) {
	if name == "" {
		v.Add("missing", "Field required", loc...)
		return
	}
	for _, msg := range validation.IsDNS1123Label(name) {
		v.Add("value_error", fmt.Sprintf("%q: %s", name, msg), loc...)
	}
}
