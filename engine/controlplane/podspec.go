package controlplane

import (
	"fmt"
	"maps"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/jetgraph/jetgraph/engine"
)

// What jetgraph itself puts in the pods it renders (manifests): the user's members must not
// collide with it.
const (
	// APIContainer and QueueContainer are the main containers of the two Deployments.
	APIContainer   = "api-server"
	QueueContainer = "queue"
	// HTTPPort and HTTPPortName are the main container's port, the Service's target.
	HTTPPort     = 8000
	HTTPPortName = "http"
	// LabelName, LabelComponent, LabelManagedBy and LabelDeployment are the labels jetgraph
	// sets; the selector uses the first two.
	LabelName       = "app.kubernetes.io/name"
	LabelComponent  = "app.kubernetes.io/component"
	LabelManagedBy  = "app.kubernetes.io/managed-by"
	LabelDeployment = jetgraphDomain + "deployment-id"
	// AnnotationRevision is the annotation naming the revision rendered.
	AnnotationRevision = jetgraphDomain + "revision-id"
	jetgraphDomain     = "jetgraph.dev/"
)

// totalAnnotationSize is Kubernetes' bound on an object's annotations, keys and values.
const totalAnnotationSize = 256 << 10

// checkPod checks the Kubernetes-shaped members against the rules the API server applies to a
// pod (k8s.io/kubernetes pkg/apis/core/validation), for the fields jetgraph renders, so that a
// manifest committed to the GitOps repository is one the cluster accepts.
func (s *ResourceSpec) checkPod(v *engine.Violations, prefix []any) {
	s.checkMeta(v, prefix)
	if s.ServiceAccountName != nil {
		subdomain(v, *s.ServiceAccountName, at(prefix, "service_account_name"))
	}
	for i, r := range s.ImagePullSecrets {
		subdomain(v, r.Name, at(prefix, "image_pull_secrets", i, "name"))
	}
	volumes := map[string]bool{}
	for i := range s.Volumes {
		vol := &s.Volumes[i]
		loc := at(prefix, "volumes", i)
		if dnsLabel(v, vol.Name, at(loc, "name")) {
			if volumes[vol.Name] {
				v.Add("value_error", fmt.Sprintf("volume name %q is used twice: names are unique within the pod", vol.Name), at(loc, "name")...)
			}
			volumes[vol.Name] = true
		}
		checkVolumeSource(v, &vol.VolumeSource, loc)
	}
	mounts(v, s.VolumeMounts, volumes, nil, at(prefix, "volume_mounts"))
	names := map[string]bool{APIContainer: true, QueueContainer: true}
	for i := range s.InitContainers {
		c := &s.InitContainers[i]
		checkContainer(v, c, volumes, names, at(prefix, "init_containers", i))
		loc := at(prefix, "init_containers", i, "restartPolicy")
		if c.RestartPolicy != nil && *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			v.Add("enum", "An init container's restartPolicy can only be 'Always' (which makes it a sidecar started before the next one); leave it unset for one that runs to completion", loc...)
		}
		if c.RestartPolicy == nil {
			runsToCompletion(v, c, at(prefix, "init_containers", i))
		}
	}
	for i := range s.Sidecars {
		c := &s.Sidecars[i]
		checkContainer(v, c, volumes, names, at(prefix, "sidecars", i))
		if c.RestartPolicy != nil && *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			v.Add("enum", "A sidecar's restartPolicy can only be 'Always' (a native sidecar, started before the main container) or unset (a container of the pod): a Deployment's pod restarts every container", at(prefix, "sidecars", i, "restartPolicy")...)
		}
	}
}

// checkMeta checks the labels and annotations every object gets.
func (s *ResourceSpec) checkMeta(v *engine.Violations, prefix []any) {
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) { // violations in a stable order
		loc := at(prefix, "labels", k)
		for _, msg := range validation.IsQualifiedName(k) {
			v.Add("value_error", fmt.Sprintf("label key %q: %s", k, msg), loc...)
		}
		for _, msg := range validation.IsValidLabelValue(s.Labels[k]) {
			v.Add("value_error", fmt.Sprintf("label value %q: %s", s.Labels[k], msg), loc...)
		}
		jetgraphKey(v, "label", k, loc, LabelName, LabelComponent, LabelManagedBy)
	}
	size := 0
	for _, k := range slices.Sorted(maps.Keys(s.Annotations)) {
		loc := at(prefix, "annotations", k)
		size += len(k) + len(s.Annotations[k])
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			v.Add("value_error", fmt.Sprintf("annotation key %q: %s", k, msg), loc...)
		}
		jetgraphKey(v, "annotation", k, loc)
	}
	if size > totalAnnotationSize {
		v.Add("too_long", fmt.Sprintf("annotations hold %d bytes: Kubernetes takes at most %d (256 KiB) of keys and values", size, totalAnnotationSize), at(prefix, "annotations")...)
	}
}

// jetgraphKey refuses a label or annotation jetgraph sets itself (its selector and records
// depend on them).
func jetgraphKey(v *engine.Violations, what, key string, loc []any, reserved ...string) {
	if strings.HasPrefix(key, jetgraphDomain) || slices.Contains(reserved, key) {
		v.Add("value_error", fmt.Sprintf("%s %q is set by jetgraph: choose another key", what, key), loc...)
	}
}

// checkVolumeSource checks that a volume has one source and that the spec's sources are whole.
func checkVolumeSource(v *engine.Violations, src *corev1.VolumeSource, loc []any) {
	var set []string
	sv := reflect.ValueOf(src).Elem()
	for i := range sv.NumField() {
		if !sv.Field(i).IsNil() {
			set = append(set, jsonName(sv.Type().Field(i)))
		}
	}
	if len(set) > 1 {
		v.Add("value_error", fmt.Sprintf("A volume has one source, this one has %d (%s): Kubernetes refuses more than 1 volume type", len(set), strings.Join(set, ", ")), at(loc, set[1])...)
	}
	required := func(value string, field ...any) {
		if value == "" {
			v.Add("missing", "Field required", at(loc, field...)...)
		}
	}
	switch {
	case src.ConfigMap != nil:
		subdomain(v, src.ConfigMap.Name, at(loc, "configMap", "name"))
		keyPaths(v, src.ConfigMap.Items, at(loc, "configMap", "items"))
		fileMode(v, src.ConfigMap.DefaultMode, at(loc, "configMap", "defaultMode"))
	case src.Secret != nil:
		subdomain(v, src.Secret.SecretName, at(loc, "secret", "secretName"))
		keyPaths(v, src.Secret.Items, at(loc, "secret", "items"))
		fileMode(v, src.Secret.DefaultMode, at(loc, "secret", "defaultMode"))
	case src.PersistentVolumeClaim != nil:
		required(src.PersistentVolumeClaim.ClaimName, "persistentVolumeClaim", "claimName")
	case src.NFS != nil:
		required(src.NFS.Server, "nfs", "server")
		if !path.IsAbs(src.NFS.Path) {
			v.Add("value_error", "must be an absolute path", at(loc, "nfs", "path")...)
		}
	case src.CSI != nil:
		required(src.CSI.Driver, "csi", "driver")
	case src.HostPath != nil:
		required(src.HostPath.Path, "hostPath", "path")
	case src.EmptyDir != nil:
		if q := src.EmptyDir.SizeLimit; q != nil && q.Sign() < 0 {
			v.Add("value_error", "must be greater than or equal to 0", at(loc, "emptyDir", "sizeLimit")...)
		}
		if m := src.EmptyDir.Medium; m != corev1.StorageMediumDefault && m != corev1.StorageMediumMemory && !strings.HasPrefix(string(m), string(corev1.StorageMediumHugePages)) {
			v.Add("enum", "Input should be '', 'Memory' or 'HugePages'", at(loc, "emptyDir", "medium")...)
		}
	case src.Projected != nil:
		for i, p := range src.Projected.Sources {
			if n := setFields(p); n != 1 {
				v.Add("value_error", fmt.Sprintf("A projection has exactly one source, this one has %d", n), at(loc, "projected", "sources", i)...)
			}
		}
	case src.DownwardAPI != nil:
		for i, f := range src.DownwardAPI.Items {
			relativePath(v, f.Path, true, at(loc, "downwardAPI", "items", i, "path"))
			if (f.FieldRef == nil) == (f.ResourceFieldRef == nil) {
				v.Add("value_error", "An item has exactly one of fieldRef and resourceFieldRef", at(loc, "downwardAPI", "items", i)...)
			}
		}
	}
}

// setFields counts the non-nil pointer members of a struct.
func setFields(x any) int {
	n := 0
	sv := reflect.ValueOf(x)
	for i := range sv.NumField() {
		if f := sv.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			n++
		}
	}
	return n
}

func keyPaths(v *engine.Violations, items []corev1.KeyToPath, loc []any) {
	for i, it := range items {
		configKey(v, it.Key, at(loc, i, "key"))
		relativePath(v, it.Path, true, at(loc, i, "path"))
		fileMode(v, it.Mode, at(loc, i, "mode"))
	}
}

func fileMode(v *engine.Violations, mode *int32, loc []any) {
	if mode != nil && (*mode < 0 || *mode > 0o777) {
		v.Add("value_error", "must be a file mode between 0 and 0777 (511)", loc...)
	}
}

// relativePath refuses an absolute path or one that climbs out with "..".
func relativePath(v *engine.Violations, p string, required bool, loc []any) {
	switch {
	case p == "" && required:
		v.Add("missing", "Field required", loc...)
	case path.IsAbs(p):
		v.Add("value_error", "must be a relative path", loc...)
	case slices.Contains(strings.Split(p, "/"), ".."):
		v.Add("value_error", "must not contain '..'", loc...)
	}
}

// mounts checks a container's mounts: each names a volume of the pod, at a path of its own.
func mounts(v *engine.Violations, list []corev1.VolumeMount, volumes map[string]bool, sc *corev1.SecurityContext, loc []any) {
	paths := map[string]int{}
	for i, m := range list {
		l := at(loc, i)
		switch {
		case m.Name == "":
			v.Add("missing", "Field required", at(l, "name")...)
		case !volumes[m.Name]:
			v.Add("value_error", fmt.Sprintf("volume mount %q names no volume of resource_spec.volumes", m.Name), at(l, "name")...)
		}
		if m.MountPath == "" {
			v.Add("missing", "Field required", at(l, "mountPath")...)
		} else if j, ok := paths[path.Clean(m.MountPath)]; ok {
			v.Add("value_error", fmt.Sprintf("mountPath %q is mounted twice in this container (also by mount %d): Kubernetes refuses it", m.MountPath, j), at(l, "mountPath")...)
		} else {
			paths[path.Clean(m.MountPath)] = i
		}
		if m.SubPath != "" && m.SubPathExpr != "" {
			v.Add("value_error", "subPath and subPathExpr are mutually exclusive", at(l, "subPathExpr")...)
		}
		relativePath(v, m.SubPath, false, at(l, "subPath"))
		relativePath(v, m.SubPathExpr, false, at(l, "subPathExpr"))
		if m.MountPropagation != nil {
			switch *m.MountPropagation {
			case corev1.MountPropagationNone, corev1.MountPropagationHostToContainer:
			case corev1.MountPropagationBidirectional:
				if sc == nil || sc.Privileged == nil || !*sc.Privileged {
					v.Add("value_error", "Bidirectional mount propagation is available only to privileged containers", at(l, "mountPropagation")...)
				}
			default:
				v.Add("enum", "Input should be 'None', 'HostToContainer' or 'Bidirectional'", at(l, "mountPropagation")...)
			}
		}
		if r := m.RecursiveReadOnly; r != nil && *r != corev1.RecursiveReadOnlyDisabled {
			switch {
			case *r != corev1.RecursiveReadOnlyIfPossible && *r != corev1.RecursiveReadOnlyEnabled:
				v.Add("enum", "Input should be 'Disabled', 'IfPossible' or 'Enabled'", at(l, "recursiveReadOnly")...)
			case !m.ReadOnly:
				v.Add("value_error", "recursiveReadOnly needs readOnly: true", at(l, "recursiveReadOnly")...)
			}
		}
	}
}

// checkContainer checks an init container or a sidecar; names holds the pod's container names.
func checkContainer(v *engine.Violations, c *corev1.Container, volumes, names map[string]bool, loc []any) {
	if dnsLabel(v, c.Name, at(loc, "name")) {
		if names[c.Name] {
			v.Add("value_error", fmt.Sprintf("container name %q is used twice in the pod (%s and %s are jetgraph's)", c.Name, APIContainer, QueueContainer), at(loc, "name")...)
		}
		names[c.Name] = true
	}
	switch {
	case c.Image == "":
		v.Add("missing", "Field required", at(loc, "image")...)
	case strings.TrimSpace(c.Image) != c.Image:
		v.Add("value_error", "must not have leading or trailing whitespace", at(loc, "image")...)
	}
	switch c.ImagePullPolicy {
	case "", corev1.PullAlways, corev1.PullNever, corev1.PullIfNotPresent:
	default:
		v.Add("enum", "Input should be 'Always', 'Never' or 'IfNotPresent'", at(loc, "imagePullPolicy")...)
	}
	switch c.TerminationMessagePolicy {
	case "", corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError:
	default:
		v.Add("enum", "Input should be 'File' or 'FallbackToLogsOnError'", at(loc, "terminationMessagePolicy")...)
	}
	checkPorts(v, c.Ports, at(loc, "ports"))
	checkEnv(v, c, at(loc))
	checkResources(v, c.Resources, at(loc, "resources"))
	mounts(v, c.VolumeMounts, volumes, c.SecurityContext, at(loc, "volumeMounts"))
	if sc := c.SecurityContext; sc != nil {
		noEscalation := sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation
		if noEscalation && sc.Privileged != nil && *sc.Privileged {
			v.Add("value_error", "cannot set allowPrivilegeEscalation to false and privileged to true", at(loc, "securityContext")...)
		}
		if noEscalation && sc.Capabilities != nil && slices.Contains(sc.Capabilities.Add, "SYS_ADMIN") {
			v.Add("value_error", "cannot set allowPrivilegeEscalation to false and capabilities.Add CAP_SYS_ADMIN", at(loc, "securityContext")...)
		}
		for _, id := range []struct {
			name string
			p    *int64
		}{{"runAsUser", sc.RunAsUser}, {"runAsGroup", sc.RunAsGroup}} {
			if id.p != nil && *id.p < 0 {
				v.Add("greater_than_equal", "Input should be greater than or equal to 0", at(loc, "securityContext", id.name)...)
			}
		}
	}
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}} {
		if p.probe == nil {
			continue
		}
		pr := p.probe
		if setFields(pr.ProbeHandler) != 1 {
			v.Add("value_error", "A probe has exactly one handler: exec, httpGet, tcpSocket or grpc", at(loc, p.name)...)
		}
		if h := pr.HTTPGet; h != nil {
			portRef(v, h.Port, at(loc, p.name, "httpGet", "port"))
		}
		if h := pr.TCPSocket; h != nil {
			portRef(v, h.Port, at(loc, p.name, "tcpSocket", "port"))
		}
		if h := pr.GRPC; h != nil {
			for _, msg := range validation.IsValidPortNum(int(h.Port)) {
				v.Add("value_error", msg, at(loc, p.name, "grpc", "port")...)
			}
		}
		for _, n := range []struct {
			name  string
			value int32
		}{{"initialDelaySeconds", pr.InitialDelaySeconds}, {"timeoutSeconds", pr.TimeoutSeconds}, {"periodSeconds", pr.PeriodSeconds},
			{"successThreshold", pr.SuccessThreshold}, {"failureThreshold", pr.FailureThreshold}} {
			if n.value < 0 {
				v.Add("greater_than_equal", "Input should be greater than or equal to 0", at(loc, p.name, n.name)...)
			}
		}
		if p.name != "readinessProbe" && pr.SuccessThreshold > 1 {
			v.Add("value_error", "must be 1", at(loc, p.name, "successThreshold")...)
		}
	}
	if lc := c.Lifecycle; lc != nil {
		for _, h := range []struct {
			name    string
			handler *corev1.LifecycleHandler
		}{{"postStart", lc.PostStart}, {"preStop", lc.PreStop}} {
			if h.handler == nil {
				continue
			}
			if setFields(*h.handler) != 1 {
				v.Add("value_error", "A lifecycle hook has exactly one handler: exec, httpGet, tcpSocket or sleep", at(loc, "lifecycle", h.name)...)
			}
			if g := h.handler.HTTPGet; g != nil {
				portRef(v, g.Port, at(loc, "lifecycle", h.name, "httpGet", "port"))
			}
		}
	}
}

// portRef checks a probe's or hook's port: a number, or the name of a port of the container.
func portRef(v *engine.Violations, port intstr.IntOrString, loc []any) {
	var msgs []string
	if port.Type == intstr.String {
		msgs = validation.IsValidPortName(port.StrVal)
	} else {
		msgs = validation.IsValidPortNum(port.IntValue())
	}
	for _, msg := range msgs {
		v.Add("value_error", msg, loc...)
	}
}

// runsToCompletion refuses on an init container what Kubernetes allows only to containers that
// keep running.
func runsToCompletion(v *engine.Violations, c *corev1.Container, loc []any) {
	for _, f := range []struct {
		name string
		set  bool
	}{{"lifecycle", c.Lifecycle != nil}, {"livenessProbe", c.LivenessProbe != nil}, {"readinessProbe", c.ReadinessProbe != nil}, {"startupProbe", c.StartupProbe != nil}} {
		if f.set {
			v.Add("value_error", f.name+" must not be set for an init container that runs to completion (one with restartPolicy Always may have it)", at(loc, f.name)...)
		}
	}
}

func checkPorts(v *engine.Violations, ports []corev1.ContainerPort, loc []any) {
	names := map[string]bool{}
	for i, p := range ports {
		l := at(loc, i)
		if p.Name != "" {
			for _, msg := range validation.IsValidPortName(p.Name) {
				v.Add("value_error", fmt.Sprintf("%q: %s", p.Name, msg), at(l, "name")...)
			}
			switch {
			case p.Name == HTTPPortName:
				v.Add("value_error", fmt.Sprintf("port name %q is jetgraph's (the Service's target): choose another", p.Name), at(l, "name")...)
			case names[p.Name]:
				v.Add("value_error", fmt.Sprintf("port name %q is used twice", p.Name), at(l, "name")...)
			}
			names[p.Name] = true
		}
		switch {
		case p.ContainerPort == 0:
			v.Add("missing", "Field required", at(l, "containerPort")...)
		case p.ContainerPort == HTTPPort:
			v.Add("value_error", fmt.Sprintf("port %d is the main container's: containers of a pod share its ports", HTTPPort), at(l, "containerPort")...)
		default:
			for _, msg := range validation.IsValidPortNum(int(p.ContainerPort)) {
				v.Add("value_error", msg, at(l, "containerPort")...)
			}
		}
		if p.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(p.HostPort)) {
				v.Add("value_error", msg, at(l, "hostPort")...)
			}
		}
		switch p.Protocol {
		case "", corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		default:
			v.Add("enum", "Input should be 'TCP', 'UDP' or 'SCTP'", at(l, "protocol")...)
		}
	}
}

// fieldPaths are the pod fields an env var's fieldRef may read.
var fieldPaths = []string{"metadata.name", "metadata.namespace", "metadata.uid", "metadata.labels", "metadata.annotations",
	"spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"}

// fieldSubscript is a fieldRef of one label or annotation: metadata.labels['key'].
var fieldSubscript = regexp.MustCompile(`^metadata\.(labels|annotations)\['([^']+)'\]$`)

// resourceFields are what an env var's resourceFieldRef may read.
var resourceFields = []string{"limits.cpu", "limits.memory", "limits.ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage"}

func checkEnv(v *engine.Violations, c *corev1.Container, loc []any) {
	for j, e := range c.Env {
		l := at(loc, "env", j)
		switch {
		case e.Name == "":
			v.Add("missing", "Field required", at(l, "name")...)
		case !cIdentifier.MatchString(e.Name):
			v.Add("string_pattern_mismatch", fmt.Sprintf("env name %q is not a C identifier (letters, digits and '_', not starting with a digit)", e.Name), at(l, "name")...)
		}
		from := e.ValueFrom
		if from == nil {
			continue
		}
		if e.Value != "" {
			v.Add("value_error", "valueFrom cannot be used with a non-empty value", at(l, "valueFrom")...)
		}
		if n := setFields(*from); n != 1 {
			v.Add("value_error", fmt.Sprintf("valueFrom has exactly one source (fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef), this one has %d", n), at(l, "valueFrom")...)
		}
		if r := from.SecretKeyRef; r != nil {
			subdomain(v, r.Name, at(l, "valueFrom", "secretKeyRef", "name"))
			configKey(v, r.Key, at(l, "valueFrom", "secretKeyRef", "key"))
		}
		if r := from.ConfigMapKeyRef; r != nil {
			subdomain(v, r.Name, at(l, "valueFrom", "configMapKeyRef", "name"))
			configKey(v, r.Key, at(l, "valueFrom", "configMapKeyRef", "key"))
		}
		if r := from.FieldRef; r != nil && !slices.Contains(fieldPaths, r.FieldPath) && !fieldSubscript.MatchString(r.FieldPath) {
			v.Add("enum", "Input should be one of "+quoteList(fieldPaths)+", or metadata.labels['<key>'] or metadata.annotations['<key>']", at(l, "valueFrom", "fieldRef", "fieldPath")...)
		}
		if r := from.ResourceFieldRef; r != nil && !slices.Contains(resourceFields, r.Resource) {
			v.Add("enum", "Input should be "+quoteList(resourceFields), at(l, "valueFrom", "resourceFieldRef", "resource")...)
		}
	}
	for j, e := range c.EnvFrom {
		l := at(loc, "envFrom", j)
		if (e.ConfigMapRef == nil) == (e.SecretRef == nil) {
			v.Add("value_error", "An envFrom entry has exactly one of configMapRef and secretRef", l...)
		}
		if e.ConfigMapRef != nil {
			subdomain(v, e.ConfigMapRef.Name, at(l, "configMapRef", "name"))
		}
		if e.SecretRef != nil {
			subdomain(v, e.SecretRef.Name, at(l, "secretRef", "name"))
		}
		if e.Prefix != "" && !cIdentifier.MatchString(e.Prefix) {
			v.Add("string_pattern_mismatch", "prefix must start an environment variable name: letters, digits and '_', not starting with a digit", at(l, "prefix")...)
		}
	}
}

// checkResources checks a container's requests and limits the way Kubernetes does: known or
// domain-qualified resource names, no negative quantity, no request above its limit, and
// extended resources (example.com/gpu) whole and not overcommitted.
func checkResources(v *engine.Violations, r corev1.ResourceRequirements, loc []any) {
	if len(r.Claims) > 0 {
		v.Add("value_error", "claims name resource claims of the pod, and jetgraph renders none", at(loc, "claims")...)
	}
	for _, list := range []struct {
		name string
		rl   corev1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for _, name := range slices.Sorted(maps.Keys(list.rl)) {
			q := list.rl[name]
			l := at(loc, list.name, string(name))
			switch {
			case standardResource(name):
			case strings.Contains(string(name), "/"):
				for _, msg := range validation.IsQualifiedName(string(name)) {
					v.Add("value_error", fmt.Sprintf("resource name %q: %s", name, msg), l...)
				}
				if q.MilliValue()%1000 != 0 {
					v.Add("value_error", fmt.Sprintf("%s must be a whole number", name), l...)
				}
			default:
				v.Add("value_error", fmt.Sprintf("%q is not a container resource: cpu, memory, ephemeral-storage, hugepages-<size> or a domain-qualified name (example.com/gpu)", name), l...)
			}
			if q.Sign() < 0 {
				v.Add("value_error", "must be greater than or equal to 0", l...)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		req := r.Requests[name]
		lim, limited := r.Limits[name]
		extended := !standardResource(name) && strings.Contains(string(name), "/")
		l := at(loc, "requests", string(name))
		switch {
		case extended && !limited:
			v.Add("value_error", fmt.Sprintf("%s: a limit must be set for a resource that cannot be overcommitted", name), l...)
		case extended && req.Cmp(lim) != 0:
			v.Add("value_error", fmt.Sprintf("%s: the request must equal the limit %s", name, lim.String()), l...)
		case limited && req.Cmp(lim) > 0:
			v.Add("value_error", fmt.Sprintf("%s: the request %s must be less than or equal to the limit %s", name, req.String(), lim.String()), l...)
		}
	}
}

func standardResource(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return true
	}
	if size, ok := strings.CutPrefix(string(name), corev1.ResourceHugePagesPrefix); ok {
		_, err := resource.ParseQuantity(size)
		return err == nil
	}
	return false
}

// dnsLabel reports a name that is not an RFC 1123 label; true when it is one.
func dnsLabel(v *engine.Violations, name string, loc []any) bool {
	if name == "" {
		v.Add("missing", "Field required", loc...)
		return false
	}
	msgs := validation.IsDNS1123Label(name)
	for _, msg := range msgs {
		v.Add("string_pattern_mismatch", fmt.Sprintf("%q: %s", name, msg), loc...)
	}
	return len(msgs) == 0
}

// subdomain reports a name that is not an RFC 1123 subdomain (what names of Secrets,
// ConfigMaps and service accounts must be).
func subdomain(v *engine.Violations, name string, loc []any) {
	if name == "" {
		v.Add("missing", "Field required", loc...)
		return
	}
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		v.Add("string_pattern_mismatch", fmt.Sprintf("%q: %s", name, msg), loc...)
	}
}

// configKey reports a key that is not a valid ConfigMap or Secret key.
func configKey(v *engine.Violations, key string, loc []any) {
	if key == "" {
		v.Add("missing", "Field required", loc...)
		return
	}
	for _, msg := range validation.IsConfigMapKey(key) {
		v.Add("value_error", fmt.Sprintf("%q: %s", key, msg), loc...)
	}
}
