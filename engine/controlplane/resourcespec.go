package controlplane

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"

	corev1 "k8s.io/api/core/v1"

	"github.com/jetgraph/jetgraph/engine"
)

// ResourceSpec is a deployment's source_config.resource_spec. Every field is optional; the
// Kubernetes-shaped members use the official types, so what the user wrote is what the cluster
// gets. The orchestrator_*, executor_*, cache_* and db_* members are accepted and not rendered:
// a jetgraph runtime keeps its state in NATS, with no cache or database deployment of its own.
//
// It lives here, not with the renderer (manifests), so that the command that accepts a
// resource_spec and the renderer that turns it into objects run the same checks: the renderer
// cannot find a problem the command let through. The price is that the control plane's
// packages link k8s.io/api/core/v1 (about 1.5 s more per test binary; the server binary
// already linked it for the renderer).
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

// The bounds of the spec's values. Scales become int32 replica counts; memory becomes bytes in
// an int64, and a request at most half of that, so that its default limit (twice) does too.
const (
	minCPU      = 0.1
	maxCPU      = 8
	maxCPULimit = 16
	maxScale    = math.MaxInt32
	maxMemoryMB = math.MaxInt64 >> 20
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

// ParseResourceSpec decodes and checks a resource_spec: every problem is reported at once, each
// with its loc under prefix (e.g. "body", "source_config", "resource_spec"), so that the API
// refuses a spec before a revision is created and the renderer never meets one the cluster
// would refuse. A null or empty input is the empty spec.
func ParseResourceSpec(raw []byte, prefix ...any) (ResourceSpec, error) {
	var v engine.Violations
	rs, _ := checkResourceSpec(&v, raw, prefix)
	return rs, v.Err("controlplane.resource_spec")
}

// checkResourceSpec is ParseResourceSpec adding to v; it also returns the spec as stored (what
// the user wrote, CPU rounded and the spec's defaults applied).
func checkResourceSpec(v *engine.Violations, raw []byte, prefix []any) (ResourceSpec, json.RawMessage) {
	var rs ResourceSpec
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return rs, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil || dec.More() {
		v.Add("json_invalid", "resource_spec is not valid JSON", prefix...)
		return rs, nil
	}
	var mine engine.Violations
	s := &shape{v: &mine}
	fitted := s.conform(doc, reflect.TypeFor[ResourceSpec](), prefix)
	if fitted == nil {
		*v = append(*v, mine...)
		return rs, nil
	}
	clean, _ := json.Marshal(fitted)
	if err := json.Unmarshal(clean, &rs); err != nil { // conform let through what does not decode
		mine.Add("value_error", "not a valid resource_spec: "+err.Error(), prefix...)
		*v = append(*v, mine...)
		return rs, nil
	}
	var rules engine.Violations
	rs.check(&rules, prefix)
	for _, f := range rules {
		if !s.reported(f.Loc) {
			mine = append(mine, f)
		}
	}
	*v = append(*v, mine...)
	return rs, rs.stored(fitted.(map[string]any))
}

// stored is doc with the numbers of the spec's defaults: what GET shows.
func (s ResourceSpec) stored(doc map[string]any) json.RawMessage {
	d := reflect.ValueOf(s.withDefaults())
	t := d.Type()
	for i := range t.NumField() {
		f := d.Field(i)
		if f.Kind() != reflect.Pointer || f.IsNil() || f.Elem().Kind() == reflect.String {
			continue
		}
		doc[jsonName(t.Field(i))] = f.Elem().Interface()
	}
	raw, _ := json.Marshal(doc)
	return raw
}

func jsonName(f reflect.StructField) string {
	name, _, _ := bytes.Cut([]byte(f.Tag.Get("json")), []byte(","))
	return string(name)
}

// round1 rounds a CPU value to one decimal, as the spec says.
func round1(x float64) float64 { return math.Round(x*10) / 10 }

func ptr[T any](v T) *T { return &v }

// cpuValues are the spec's CPU values, with the request each limit defaults to twice of ("" for
// none) and the upper bound.
func (s *ResourceSpec) cpuValues() []struct {
	name, request string
	p             **float64
	max           float64
} {
	type f = struct {
		name, request string
		p             **float64
		max           float64
	}
	inf := math.Inf(1)
	return []f{
		{"cpu", "", &s.CPU, maxCPU}, {"cpu_limit", "cpu", &s.CPULimit, maxCPULimit},
		{"queue_cpu", "", &s.QueueCPU, maxCPU}, {"queue_cpu_limit", "queue_cpu", &s.QueueCPULimit, maxCPULimit},
		{"cache_cpu", "", &s.CacheCPU, maxCPU}, {"cache_cpu_limit", "cache_cpu", &s.CacheCPULimit, maxCPULimit},
		{"db_cpu", "", &s.DBCPU, inf}, {"db_cpu_limit", "db_cpu", &s.DBCPULimit, inf},
		{"orchestrator_cpu", "", &s.OrchestratorCPU, inf}, {"orchestrator_cpu_limit", "", &s.OrchestratorCPULimit, inf},
		{"executor_cpu", "", &s.ExecutorCPU, inf}, {"executor_cpu_limit", "", &s.ExecutorCPULimit, inf},
	}
}

// intValues are the spec's integer values, with their request and bounds.
func (s *ResourceSpec) intValues() []struct {
	name, request string
	p             **int
	min, max      int
} {
	type f = struct {
		name, request string
		p             **int
		min, max      int
	}
	return []f{
		{"min_scale", "", &s.MinScale, 0, maxScale}, {"max_scale", "", &s.MaxScale, 1, maxScale},
		{"memory_mb", "", &s.MemoryMB, 1, maxMemoryMB / 2}, {"memory_limit_mb", "memory_mb", &s.MemoryLimitMB, 1, maxMemoryMB},
		{"queue_min_scale", "", &s.QueueMinScale, 0, maxScale}, {"queue_max_scale", "", &s.QueueMaxScale, 1, maxScale},
		{"queue_memory_mb", "", &s.QueueMemoryMB, 1, maxMemoryMB / 2}, {"queue_memory_limit_mb", "queue_memory_mb", &s.QueueMemoryLimitMB, 1, maxMemoryMB},
		{"cache_memory_mb", "", &s.CacheMemoryMB, 0, maxMemoryMB},
		{"db_memory_mb", "", &s.DBMemoryMB, 0, maxMemoryMB / 2}, {"db_memory_limit_mb", "db_memory_mb", &s.DBMemoryLimitMB, 0, maxMemoryMB},
		{"db_storage_gi", "", &s.DBStorageGi, 0, math.MaxInt32}, {"db_max_connections", "", &s.DBMaxConnections, 0, math.MaxInt32},
		{"orchestrator_memory_mb", "", &s.OrchestratorMemoryMB, 0, maxMemoryMB}, {"orchestrator_memory_limit_mb", "", &s.OrchestratorMemoryLimitMB, 0, maxMemoryMB},
		{"orchestrator_min_scale", "", &s.OrchestratorMinScale, 0, maxScale}, {"orchestrator_max_scale", "", &s.OrchestratorMaxScale, 0, maxScale},
		{"executor_memory_mb", "", &s.ExecutorMemoryMB, 0, maxMemoryMB}, {"executor_memory_limit_mb", "", &s.ExecutorMemoryLimitMB, 0, maxMemoryMB},
	}
}

// queueDefaults are the queue's values that default to the API server's.
func (s *ResourceSpec) queueDefaults() {
	for _, d := range []struct{ to, from **int }{{&s.QueueMinScale, &s.MinScale}, {&s.QueueMaxScale, &s.MaxScale}, {&s.QueueMemoryMB, &s.MemoryMB}} {
		if *d.to == nil {
			*d.to = *d.from
		}
	}
	if s.QueueCPU == nil {
		s.QueueCPU = s.CPU
	}
}

// withDefaults applies the spec's defaults: CPU rounded to one decimal, the queue's values
// default to the API server's, and a limit left unset is twice its request.
func (s ResourceSpec) withDefaults() ResourceSpec {
	for _, f := range s.cpuValues() {
		if *f.p != nil {
			*f.p = ptr(round1(**f.p))
		}
	}
	s.queueDefaults()
	byName := map[string]**float64{}
	for _, f := range s.cpuValues() {
		byName[f.name] = f.p
		if r := byName[f.request]; f.request != "" && *f.p == nil && *r != nil {
			*f.p = ptr(round1(2 * **r))
		}
	}
	ints := map[string]**int{}
	for _, f := range s.intValues() {
		ints[f.name] = f.p
		if r := ints[f.request]; f.request != "" && *f.p == nil && *r != nil {
			*f.p = ptr(2 * **r)
		}
	}
	return s
}

// Sizes are the API server's and the queue's sizes, the spec's defaults applied.
func (s ResourceSpec) Sizes() Sizes {
	d := s.withDefaults()
	return Sizes{
		API:   Pod{MinScale: d.MinScale, MaxScale: d.MaxScale, CPU: d.CPU, CPULimit: d.CPULimit, MemoryMB: d.MemoryMB, MemoryLimitMB: d.MemoryLimitMB},
		Queue: Pod{MinScale: d.QueueMinScale, MaxScale: d.QueueMaxScale, CPU: d.QueueCPU, CPULimit: d.QueueCPULimit, MemoryMB: d.QueueMemoryMB, MemoryLimitMB: d.QueueMemoryLimitMB},
	}
}

// check applies every rule to a decoded spec.
func (s *ResourceSpec) check(v *engine.Violations, prefix []any) {
	n := len(*v)
	for _, f := range s.cpuValues() {
		switch p := *f.p; {
		case p == nil:
		case round1(*p) < minCPU:
			v.Add("greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %g", minCPU), at(prefix, f.name)...)
		case round1(*p) > f.max:
			v.Add("less_than_equal", fmt.Sprintf("Input should be less than or equal to %g", f.max), at(prefix, f.name)...)
		}
	}
	for _, f := range s.intValues() {
		switch p := *f.p; {
		case p == nil:
		case *p < f.min:
			v.Add("greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %d", f.min), at(prefix, f.name)...)
		case *p > f.max:
			v.Add("less_than_equal", fmt.Sprintf("Input should be less than or equal to %d", f.max), at(prefix, f.name)...)
		}
	}
	if len(*v) == n { // the sizes compare values already found out of bounds otherwise
		s.checkSizes(v, prefix)
	}
	s.checkPod(v, prefix)
}

// checkSizes refuses sizes the cluster would refuse once the defaults are applied. A queue value
// inherited from the API server's is not reported again at the queue's name.
func (s *ResourceSpec) checkSizes(v *engine.Violations, prefix []any) {
	sizes := s.Sizes()
	for _, p := range []struct {
		prefix string
		pod    Pod
		given  func(...any) bool
	}{
		{"", sizes.API, func(...any) bool { return true }},
		{"queue_", sizes.Queue, func(ps ...any) bool {
			for _, p := range ps {
				if !reflect.ValueOf(p).IsNil() {
					return true
				}
			}
			return false
		}},
	} {
		pod, pre := p.pod, p.prefix
		if pod.CPU != nil && pod.CPULimit != nil && *pod.CPULimit < *pod.CPU && p.given(s.QueueCPU, s.QueueCPULimit) {
			v.Add("value_error", fmt.Sprintf("%scpu_limit %g is below the request %scpu %g: Kubernetes refuses a limit under its request", pre, *pod.CPULimit, pre, *pod.CPU), at(prefix, pre+"cpu_limit")...)
		}
		if pod.MemoryMB != nil && pod.MemoryLimitMB != nil && *pod.MemoryLimitMB < *pod.MemoryMB && p.given(s.QueueMemoryMB, s.QueueMemoryLimitMB) {
			v.Add("value_error", fmt.Sprintf("%smemory_limit_mb %d is below the request %smemory_mb %d: Kubernetes refuses a limit under its request", pre, *pod.MemoryLimitMB, pre, *pod.MemoryMB), at(prefix, pre+"memory_limit_mb")...)
		}
		if pod.MaxScale == nil || pod.MinScale == nil || !p.given(s.QueueMinScale, s.QueueMaxScale) {
			continue
		}
		if *pod.MinScale > *pod.MaxScale {
			v.Add("value_error", fmt.Sprintf("%smin_scale %d is above %smax_scale %d", pre, *pod.MinScale, pre, *pod.MaxScale), at(prefix, pre+"min_scale")...)
		} else if *pod.MinScale == 0 && *pod.MaxScale > 0 {
			v.Add("value_error", fmt.Sprintf("%smin_scale must be at least 1 with a %smax_scale: a HorizontalPodAutoscaler does not scale to zero", pre, pre), at(prefix, pre+"min_scale")...)
		}
	}
}
