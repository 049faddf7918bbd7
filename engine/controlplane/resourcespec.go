package controlplane

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"

	"github.com/jetgraph/jetgraph/engine"
)

// The bounds of the spec's CPU values, in cores.
const (
	minCPU      = 0.1
	maxCPU      = 8
	maxCPULimit = 16
)

// dnsLabel is a Kubernetes DNS label (RFC 1123): what volume and container names must be.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// cIdentifier is an environment variable name the way Kubernetes and shells take it.
var cIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checker collects every violation of one request body, each at its loc.
type checker struct {
	v engine.Violations
}

func (c *checker) add(typ, msg string, loc []any) { c.v.Add(typ, msg, loc...) }

func at(loc []any, more ...any) []any { return append(slices.Clip(loc), more...) }

// object returns m[key] as an object; absent or null is (nil, false) without a violation.
func (c *checker) object(m map[string]any, key string, loc []any) (map[string]any, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, false
	}
	o, ok := v.(map[string]any)
	if !ok {
		c.add("dict_type", "Input should be a valid dictionary", at(loc, key))
	}
	return o, ok
}

// str returns m[key] as a string; absent or null is ("", false) without a violation.
func (c *checker) str(m map[string]any, key string, loc []any) (string, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		c.add("string_type", "Input should be a valid string", at(loc, key))
	}
	return s, ok
}

// required reports key missing (absent or null) as a violation.
func (c *checker) required(m map[string]any, key string, loc []any) bool {
	if v, ok := m[key]; ok && v != nil {
		return true
	}
	c.add("missing", "Field required", at(loc, key))
	return false
}

func (c *checker) boolean(m map[string]any, key string, loc []any) (bool, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		c.add("bool_type", "Input should be a valid boolean", at(loc, key))
	}
	return b, ok
}

func (c *checker) number(m map[string]any, key string, loc []any) (float64, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, false
	}
	f, ok := v.(float64)
	if !ok {
		c.add("float_type", "Input should be a valid number", at(loc, key))
	}
	return f, ok
}

func (c *checker) integer(m map[string]any, key string, loc []any) (float64, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, false
	}
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		c.add("int_type", "Input should be a valid integer", at(loc, key))
		return 0, false
	}
	if f < 0 {
		c.add("greater_than_equal", "Input should be greater than or equal to 0", at(loc, key))
		return 0, false
	}
	return f, true
}

func (c *checker) list(m map[string]any, key string, loc []any) ([]any, bool) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, false
	}
	l, ok := v.([]any)
	if !ok {
		c.add("list_type", "Input should be a valid list", at(loc, key))
	}
	return l, ok
}

func (c *checker) stringMap(m map[string]any, key string, loc []any) {
	o, ok := c.object(m, key, loc)
	if !ok {
		return
	}
	for k, v := range o {
		if _, ok := v.(string); !ok {
			c.add("string_type", "Input should be a valid string", at(loc, key, k))
		}
	}
}

func (c *checker) stringList(m map[string]any, key string, loc []any) {
	l, _ := c.list(m, key, loc)
	for i, v := range l {
		if _, ok := v.(string); !ok {
			c.add("string_type", "Input should be a valid string", at(loc, key, i))
		}
	}
}

func (c *checker) enum(m map[string]any, key string, loc []any, values ...string) {
	if s, ok := c.str(m, key, loc); ok && !slices.Contains(values, s) {
		c.add("enum", "Input should be "+quoteList(values), at(loc, key))
	}
}

func (c *checker) dnsName(m map[string]any, key string, loc []any) (string, bool) {
	if !c.required(m, key, loc) {
		return "", false
	}
	s, ok := c.str(m, key, loc)
	if ok && (len(s) > 63 || !dnsLabel.MatchString(s)) {
		c.add("string_pattern_mismatch", "String should be a DNS label: lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters", at(loc, key))
		return s, false
	}
	return s, ok
}

func quoteList(values []string) string {
	out := ""
	for i, v := range values {
		switch {
		case i == 0:
		case i == len(values)-1:
			out += " or "
		default:
			out += ", "
		}
		out += "'" + v + "'"
	}
	return out
}

// cpuFields are the CPU values with their upper bound and the request a limit doubles.
var cpuFields = []struct {
	name, request string
	max           float64
}{
	{"cpu", "", maxCPU}, {"cpu_limit", "cpu", maxCPULimit},
	{"queue_cpu", "", maxCPU}, {"queue_cpu_limit", "queue_cpu", maxCPULimit},
	{"cache_cpu", "", maxCPU}, {"cache_cpu_limit", "cache_cpu", maxCPULimit},
	{"db_cpu", "", math.Inf(1)}, {"db_cpu_limit", "db_cpu", math.Inf(1)},
	{"orchestrator_cpu", "", math.Inf(1)}, {"orchestrator_cpu_limit", "", math.Inf(1)},
	{"executor_cpu", "", math.Inf(1)}, {"executor_cpu_limit", "", math.Inf(1)},
}

// intFields are the integer values; those with a request default to twice it.
var intFields = []struct{ name, request string }{
	{"min_scale", ""}, {"max_scale", ""}, {"memory_mb", ""}, {"memory_limit_mb", "memory_mb"},
	{"queue_min_scale", ""}, {"queue_max_scale", ""}, {"queue_memory_mb", ""},
	{"queue_memory_limit_mb", "queue_memory_mb"}, {"cache_memory_mb", ""},
	{"db_memory_mb", ""}, {"db_memory_limit_mb", "db_memory_mb"}, {"db_storage_gi", ""},
	{"db_max_connections", ""}, {"orchestrator_memory_mb", ""}, {"orchestrator_memory_limit_mb", ""},
	{"orchestrator_min_scale", ""}, {"orchestrator_max_scale", ""}, {"executor_memory_mb", ""},
	{"executor_memory_limit_mb", ""},
}

// queueDefaults are the queue's values that default to the API server's.
var queueDefaults = [][2]string{{"queue_min_scale", "min_scale"}, {"queue_max_scale", "max_scale"},
	{"queue_cpu", "cpu"}, {"queue_memory_mb", "memory_mb"}}

// resourceSpec checks a resource_spec and returns it normalised: CPU values rounded to one
// decimal, the queue's values defaulted to the API server's, each limit left unset twice its
// request. Unknown members are dropped.
func (c *checker) resourceSpec(rs map[string]any, loc []any) json.RawMessage {
	out := map[string]any{}
	for _, f := range cpuFields {
		v, ok := c.number(rs, f.name, loc)
		if !ok {
			continue
		}
		v = math.Round(v*10) / 10
		switch {
		case v < minCPU:
			c.add("greater_than_equal", "Input should be greater than or equal to 0.1", at(loc, f.name))
		case v > f.max:
			c.add("less_than_equal", "Input should be less than or equal to "+formatFloat(f.max), at(loc, f.name))
		}
		out[f.name] = v
	}
	for _, f := range intFields {
		if v, ok := c.integer(rs, f.name, loc); ok {
			out[f.name] = v
		}
	}
	for _, d := range queueDefaults {
		if _, ok := out[d[0]]; !ok {
			if v, ok := out[d[1]]; ok {
				out[d[0]] = v
			}
		}
	}
	for _, f := range cpuFields {
		if _, ok := out[f.name]; !ok && f.request != "" {
			if r, ok := out[f.request].(float64); ok {
				out[f.name] = math.Round(r*20) / 10
			}
		}
	}
	for _, f := range intFields {
		if _, ok := out[f.name]; !ok && f.request != "" {
			if r, ok := out[f.request].(float64); ok {
				out[f.name] = 2 * r
			}
		}
	}
	for _, k := range []string{"labels", "annotations"} {
		c.stringMap(rs, k, loc)
		copyPresent(out, rs, k)
	}
	c.str(rs, "service_account_name", loc)
	copyPresent(out, rs, "service_account_name")
	secrets, _ := c.list(rs, "image_pull_secrets", loc)
	for i, s := range secrets {
		l := at(loc, "image_pull_secrets", i)
		if o, ok := s.(map[string]any); !ok {
			c.add("dict_type", "Input should be a valid dictionary", l)
		} else if c.required(o, "name", l) {
			c.str(o, "name", l)
		}
	}
	copyPresent(out, rs, "image_pull_secrets")
	volumes := c.volumes(rs, loc)
	copyPresent(out, rs, "volumes")
	c.mounts(rs, "volume_mounts", loc, volumes)
	copyPresent(out, rs, "volume_mounts")
	for _, k := range []string{"init_containers", "sidecars"} {
		list, _ := c.list(rs, k, loc)
		for i, ct := range list {
			c.container(ct, at(loc, k, i), volumes)
		}
		copyPresent(out, rs, k)
	}
	raw, _ := json.Marshal(out)
	return raw
}

func copyPresent(out, in map[string]any, key string) {
	if v, ok := in[key]; ok && v != nil {
		out[key] = v
	}
}

func formatFloat(f float64) string {
	raw, _ := json.Marshal(f)
	return string(raw)
}

// volumeSources are the optional members of a Volume, each a free-form object or null.
var volumeSources = []string{"configMap", "secret", "emptyDir", "persistentVolumeClaim", "nfs", "projected", "downwardAPI", "csi"}

// volumes checks resource_spec.volumes and returns the names they define.
func (c *checker) volumes(rs map[string]any, loc []any) map[string]bool {
	names := map[string]bool{}
	list, _ := c.list(rs, "volumes", loc)
	for i, v := range list {
		l := at(loc, "volumes", i)
		o, ok := v.(map[string]any)
		if !ok {
			c.add("dict_type", "Input should be a valid dictionary", l)
			continue
		}
		if name, ok := c.dnsName(o, "name", l); ok {
			if names[name] {
				c.add("value_error", "Volume names must be unique within the pod: "+name+" is repeated", at(l, "name"))
			}
			names[name] = true
		}
		for _, k := range volumeSources {
			c.object(o, k, l)
		}
	}
	return names
}

// mounts checks a list of VolumeMount: each names one of volumes.
func (c *checker) mounts(m map[string]any, key string, loc []any, volumes map[string]bool) {
	list, _ := c.list(m, key, loc)
	for i, v := range list {
		l := at(loc, key, i)
		o, ok := v.(map[string]any)
		if !ok {
			c.add("dict_type", "Input should be a valid dictionary", l)
			continue
		}
		if c.required(o, "name", l) {
			if name, ok := c.str(o, "name", l); ok && !volumes[name] {
				c.add("value_error", "Volume mount names no volume of resource_spec.volumes: "+name, at(l, "name"))
			}
		}
		if c.required(o, "mountPath", l) {
			c.str(o, "mountPath", l)
		}
		for _, k := range []string{"subPath", "mountPropagation", "subPathExpr"} {
			c.str(o, k, l)
		}
		c.boolean(o, "readOnly", l)
	}
}

// container checks an init container or a sidecar.
func (c *checker) container(v any, loc []any, volumes map[string]bool) {
	o, ok := v.(map[string]any)
	if !ok {
		c.add("dict_type", "Input should be a valid dictionary", loc)
		return
	}
	c.dnsName(o, "name", loc)
	if c.required(o, "image", loc) {
		c.str(o, "image", loc)
	}
	c.enum(o, "imagePullPolicy", loc, "Always", "Never", "IfNotPresent")
	c.enum(o, "restartPolicy", loc, "Always", "OnFailure")
	c.stringList(o, "command", loc)
	c.stringList(o, "args", loc)
	c.str(o, "workingDir", loc)
	c.object(o, "securityContext", loc)
	envFrom, _ := c.list(o, "envFrom", loc)
	for i, e := range envFrom {
		if _, ok := e.(map[string]any); !ok {
			c.add("dict_type", "Input should be a valid dictionary", at(loc, "envFrom", i))
		}
	}
	if res, ok := c.object(o, "resources", loc); ok {
		c.stringMap(res, "limits", at(loc, "resources"))
		c.stringMap(res, "requests", at(loc, "resources"))
	}
	c.mounts(o, "volumeMounts", loc, volumes)
	env, _ := c.list(o, "env", loc)
	for i, e := range env {
		l := at(loc, "env", i)
		eo, ok := e.(map[string]any)
		if !ok {
			c.add("dict_type", "Input should be a valid dictionary", l)
			continue
		}
		if c.required(eo, "name", l) {
			if name, ok := c.str(eo, "name", l); ok && !cIdentifier.MatchString(name) {
				c.add("string_pattern_mismatch", "An environment variable name must be a C identifier (letters, digits and '_', not starting with a digit)", at(l, "name"))
			}
		}
		value, _ := c.str(eo, "value", l)
		if _, ok := c.object(eo, "valueFrom", l); ok && value != "" {
			c.add("value_error", "valueFrom cannot be used when value is not empty", at(l, "valueFrom"))
		}
	}
}
