// Package manifests renders an external_container revision as Kubernetes objects, with the
// official k8s.io/api types, and commits them to its listener's GitOps repository, where Argo CD
// or Flux applies them: the control plane never talks to the cluster itself.
package manifests

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/jetgraph/jetgraph/engine"
	"github.com/jetgraph/jetgraph/engine/controlplane"
)

// The containers jetgraph renders, one per Deployment, the port both listen on, and the labels
// and annotations it sets: the control plane's validator refuses a resource_spec that collides
// with them. The selector uses only the name and component labels, which never change for a
// deployment (a Deployment's selector is immutable).
const (
	apiContainer    = controlplane.APIContainer
	queueContainer  = controlplane.QueueContainer
	httpPort        = controlplane.HTTPPort
	httpPortName    = controlplane.HTTPPortName
	labelName       = controlplane.LabelName
	labelComponent  = controlplane.LabelComponent
	labelManagedBy  = controlplane.LabelManagedBy
	labelDeployment = controlplane.LabelDeployment
	annotRevision   = controlplane.AnnotationRevision
	managedBy       = "jetgraph"
	// hpaCPUTarget is the average CPU utilisation, in percent of the request, the
	// HorizontalPodAutoscalers keep.
	hpaCPUTarget = 80
)

// File is one rendered file of a deployment's folder in the GitOps repository.
type File struct {
	Name string
	Data []byte
}

// Options are the listener's choices for a rendering.
type Options struct {
	// Namespace is where the objects go.
	Namespace string
	// ExternalSecrets leaves the Secret out of the repository: the cluster provides it (sealed
	// secrets, external-secrets, by hand) under SecretName, with the keys Render reports.
	ExternalSecrets bool
}

// Bundle is a rendered revision: the folder's name, its files, and notes for the revision's log.
type Bundle struct {
	Dir   string
	Files []File
	Notes []string
}

// Name is the Kubernetes name of a deployment's objects: its name in lower case, within the 63
// characters of a DNS label with room for the suffixes. A name that had to change (upper case,
// other characters, length) ends with a hash of the original, so two deployments never share it.
func Name(deploymentName string) string {
	const max = 50
	var b strings.Builder
	for _, r := range deploymentName {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else if r >= 'A' && r <= 'Z' {
			b.WriteRune(r + 'a' - 'A')
		} else {
			b.WriteByte('-')
		}
	}
	n := b.String()
	if n == deploymentName && len(n) <= max && n != "" && n[0] >= 'a' && n[0] <= 'z' && n[len(n)-1] != '-' {
		return n
	}
	sum := sha256.Sum256([]byte(deploymentName))
	n = strings.Trim(n[:min(len(n), max-9)], "-")
	if n == "" || n[0] < 'a' || n[0] > 'z' { // a Service's name starts with a letter
		n = "d-" + n
	}
	return strings.TrimSuffix(n, "-") + "-" + hex.EncodeToString(sum[:4])
}

// SecretName is the Secret the Deployments take their environment from.
func SecretName(deploymentName string) string { return Name(deploymentName) + "-secrets" }

// Render renders spec's objects: the API server and queue Deployments, the Service of the API
// server, a HorizontalPodAutoscaler for each that scales, the Secret of the deployment's secrets
// and a kustomization.yaml listing them. rs is the parsed resource_spec.
func Render(spec controlplane.ManifestSpec, rs controlplane.ResourceSpec, opt Options) (Bundle, error) {
	const op = "manifests.render"
	if spec.ImageURI == "" {
		return Bundle{}, engine.E(engine.Op(op), engine.Invalid, "the revision has no image_uri")
	}
	name := Name(spec.DeploymentName)
	b := Bundle{Dir: name}
	sizes := rs.Sizes()
	r := renderer{spec: spec, rs: rs, name: name, ns: opt.Namespace, secrets: len(spec.Secrets) > 0}

	var objects []struct {
		file string
		obj  any
	}
	add := func(file string, obj any) {
		objects = append(objects, struct {
			file string
			obj  any
		}{file, obj})
	}
	if r.secrets {
		if opt.ExternalSecrets {
			keys := make([]string, len(spec.Secrets))
			for i, s := range spec.Secrets {
				keys[i] = s.Name
			}
			b.Notes = append(b.Notes, fmt.Sprintf("secrets are external: the cluster must provide Secret %s/%s with the keys %s", opt.Namespace, SecretName(spec.DeploymentName), strings.Join(keys, ", ")))
		} else {
			add("secret.yaml", r.secret())
			b.Notes = append(b.Notes, fmt.Sprintf("Secret %s holds %d secret(s), base64-encoded, not encrypted: keep the GitOps repository private, or set compute_config.gitops.secrets to \"external\"", SecretName(spec.DeploymentName), len(spec.Secrets)))
		}
	}
	for _, c := range []struct {
		component string
		pod       controlplane.Pod
	}{{apiContainer, sizes.API}, {queueContainer, sizes.Queue}} {
		add(c.component+".deployment.yaml", r.deployment(c.component, c.pod))
		if hpa := r.hpa(c.component, c.pod); hpa != nil {
			add(c.component+".hpa.yaml", hpa)
			if c.pod.CPU == nil {
				b.Notes = append(b.Notes, fmt.Sprintf("the %s HorizontalPodAutoscaler scales on CPU utilisation, which needs a cpu request: set %scpu in resource_spec", c.component, map[string]string{apiContainer: "", queueContainer: "queue_"}[c.component]))
			}
		}
	}
	add("service.yaml", r.service())

	var resources []string
	for _, o := range objects {
		data, err := marshal(o.obj)
		if err != nil {
			return Bundle{}, engine.E(engine.Op(op), fmt.Sprintf("marshal %s", o.file), err)
		}
		b.Files = append(b.Files, File{Name: o.file, Data: data})
		resources = append(resources, o.file)
	}
	sort.Strings(resources)
	kust, err := yaml.Marshal(kustomization{APIVersion: "kustomize.config.k8s.io/v1beta1", Kind: "Kustomization", Resources: resources})
	if err != nil {
		return Bundle{}, engine.E(engine.Op(op), "marshal kustomization.yaml", err)
	}
	b.Files = append(b.Files, File{Name: "kustomization.yaml", Data: kust})
	sort.Slice(b.Files, func(i, j int) bool { return b.Files[i].Name < b.Files[j].Name })
	return b, nil
}

// marshal writes obj as YAML without its status: a desired state has none, and an empty status
// in the repository would only show as a difference in Argo CD.
func marshal(obj any) ([]byte, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	return yaml.Marshal(m)
}

// kustomization lists a folder's objects, so that Argo CD and Flux apply exactly them.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
}

type renderer struct {
	spec    controlplane.ManifestSpec
	rs      controlplane.ResourceSpec
	name    string
	ns      string
	secrets bool
}

func (r renderer) selector(component string) map[string]string {
	return map[string]string{labelName: r.name, labelComponent: component}
}

// labels are the user's labels, then jetgraph's (which win: the selector depends on them).
func (r renderer) labels(component string) map[string]string {
	l := map[string]string{}
	for k, v := range r.rs.Labels {
		l[k] = v
	}
	for k, v := range r.selector(component) {
		l[k] = v
	}
	l[labelManagedBy] = managedBy
	l[labelDeployment] = r.spec.DeploymentID
	return l
}

func (r renderer) annotations() map[string]string {
	a := map[string]string{}
	for k, v := range r.rs.Annotations {
		a[k] = v
	}
	a[annotRevision] = r.spec.RevisionID
	return a
}

func (r renderer) meta(name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: r.ns, Labels: r.labels(component), Annotations: r.annotations()}
}

func (r renderer) secret() *corev1.Secret {
	data := make(map[string][]byte, len(r.spec.Secrets))
	for _, s := range r.spec.Secrets {
		data[s.Name] = []byte(s.Value)
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: r.meta(SecretName(r.spec.DeploymentName), apiContainer),
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// autoscaled reports whether a Deployment gets an HPA: it has a max_scale above its minimum.
func autoscaled(p controlplane.Pod) bool { return p.MaxScale != nil && *p.MaxScale > minReplicas(p) }

func minReplicas(p controlplane.Pod) int {
	if p.MinScale != nil {
		return *p.MinScale
	}
	return 1
}

func (r renderer) deployment(component string, p controlplane.Pod) *appsv1.Deployment {
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: r.meta(r.name+"-"+component, component),
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: r.selector(component)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: r.labels(component), Annotations: r.annotations()},
				Spec:       r.pod(component, p),
			},
		},
	}
	if !autoscaled(p) { // with an HPA, the HPA owns the replica count
		d.Spec.Replicas = ptr(int32(minReplicas(p)))
	}
	return d
}

func (r renderer) pod(component string, p controlplane.Pod) corev1.PodSpec {
	main := corev1.Container{
		Name:  component,
		Image: r.spec.ImageURI,
		Ports: []corev1.ContainerPort{{Name: httpPortName, ContainerPort: httpPort, Protocol: corev1.ProtocolTCP}},
		// PORT for LangGraph-server images, JETGRAPH_ADDR for jetgraph images.
		Env: []corev1.EnvVar{
			{Name: "PORT", Value: fmt.Sprint(httpPort)},
			{Name: "JETGRAPH_ADDR", Value: fmt.Sprintf(":%d", httpPort)},
		},
		Resources:    resources(p),
		VolumeMounts: r.rs.VolumeMounts,
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ok", Port: intstr.FromString(httpPortName)}},
			PeriodSeconds: 5,
		},
	}
	if r.secrets {
		main.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: SecretName(r.spec.DeploymentName)}}}}
	}
	spec := corev1.PodSpec{
		InitContainers:   append([]corev1.Container(nil), r.rs.InitContainers...),
		Containers:       []corev1.Container{main},
		Volumes:          r.rs.Volumes,
		ImagePullSecrets: r.rs.ImagePullSecrets,
	}
	if r.rs.ServiceAccountName != nil {
		spec.ServiceAccountName = *r.rs.ServiceAccountName
	}
	for _, s := range r.rs.Sidecars {
		// A sidecar that restarts Always is a native sidecar: an init container that keeps
		// running beside the main one. Any other stays a regular container of the pod.
		if s.RestartPolicy != nil && *s.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			spec.InitContainers = append(spec.InitContainers, s)
		} else {
			spec.Containers = append(spec.Containers, s)
		}
	}
	return spec
}

// resources are a Pod's requests and limits: CPU in millicores, memory in MiB.
func resources(p controlplane.Pod) corev1.ResourceRequirements {
	var req corev1.ResourceRequirements
	set := func(list *corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[name] = q
	}
	cpu := func(c float64) resource.Quantity {
		return *resource.NewMilliQuantity(int64(math.Round(c*1000)), resource.DecimalSI)
	}
	mem := func(mb int) resource.Quantity { return *resource.NewQuantity(int64(mb)<<20, resource.BinarySI) }
	if p.CPU != nil {
		set(&req.Requests, corev1.ResourceCPU, cpu(*p.CPU))
	}
	if p.CPULimit != nil {
		set(&req.Limits, corev1.ResourceCPU, cpu(*p.CPULimit))
	}
	if p.MemoryMB != nil {
		set(&req.Requests, corev1.ResourceMemory, mem(*p.MemoryMB))
	}
	if p.MemoryLimitMB != nil {
		set(&req.Limits, corev1.ResourceMemory, mem(*p.MemoryLimitMB))
	}
	return req
}

func (r renderer) hpa(component string, p controlplane.Pod) *autoscalingv2.HorizontalPodAutoscaler {
	if !autoscaled(p) {
		return nil
	}
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: r.meta(r.name+"-"+component, component),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: r.name + "-" + component},
			MinReplicas:    ptr(int32(minReplicas(p))),
			MaxReplicas:    int32(*p.MaxScale),
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name:   corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(hpaCPUTarget))},
				},
			}},
		},
	}
}

func (r renderer) service() *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: r.meta(r.name, apiContainer),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: r.selector(apiContainer),
			Ports:    []corev1.ServicePort{{Name: httpPortName, Port: httpPort, TargetPort: intstr.FromString(httpPortName), Protocol: corev1.ProtocolTCP}},
		},
	}
}

func ptr[T any](v T) *T { return &v }
