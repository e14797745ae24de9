package kube

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodeproof/nodeproof/agent/manifest"
	"github.com/nodeproof/nodeproof/core/pod"
)

// DefaultNamespace is the namespace of a pod that names none, as kubectl
// and the kubelet's static pods assume.
const DefaultNamespace = "default"

// Node is the part of a Kubernetes Node the node subsystems read.
type Node struct {
	Name string
	// Capacity and Allocatable are status.capacity and status.allocatable
	// in core units; nil when the manifest has none.
	Capacity    pod.ResourceList
	Allocatable pod.ResourceList
}

// ConvertPod converts a decoded Pod and applies the API server's defaulting
// (core/pod ApplyDefaults). Errors are *FieldError values with the field's
// path.
func ConvertPod(p *corev1.Pod) (pod.Pod, error) {
	if p.Name == "" {
		return pod.Pod{}, fieldErrorf("metadata.name", "must not be empty")
	}
	out := pod.Pod{
		UID:               string(p.UID),
		Name:              p.Name,
		Namespace:         p.Namespace,
		PriorityClassName: p.Spec.PriorityClassName,
		Deleted:           p.DeletionTimestamp != nil,
	}
	if out.Namespace == "" {
		out.Namespace = DefaultNamespace
	}
	if p.Spec.Priority != nil {
		prio := *p.Spec.Priority
		out.Priority = &prio
	}
	for _, key := range []string{pod.ConfigSourceAnnotation, pod.ConfigMirrorAnnotation} {
		if v, ok := p.Annotations[key]; ok {
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[key] = v
		}
	}

	switch phase := pod.Phase(p.Status.Phase); phase {
	case "":
		// The API server's create strategy sets Pending.
		out.Phase = pod.Pending
	case pod.Pending, pod.Running, pod.Succeeded, pod.Failed, pod.Unknown:
		out.Phase = phase
	default:
		return pod.Pod{}, fieldErrorf("status.phase", "unsupported value %q: supported values: %q, %q, %q, %q, %q",
			phase, pod.Pending, pod.Running, pod.Succeeded, pod.Failed, pod.Unknown)
	}
	switch qos := pod.QOSClass(p.Status.QOSClass); qos {
	case "", pod.Guaranteed, pod.Burstable, pod.BestEffort:
		out.QOSClass = qos
	default:
		return pod.Pod{}, fieldErrorf("status.qosClass", "unsupported value %q: supported values: %q, %q, %q",
			qos, pod.Guaranteed, pod.Burstable, pod.BestEffort)
	}

	if len(p.Spec.Containers) == 0 {
		return pod.Pod{}, fieldErrorf("spec.containers", "must have at least one container")
	}
	names := map[string]string{} // container name → the path that declared it
	var err error
	if out.InitContainers, err = convertContainers("spec.initContainers", p.Spec.InitContainers, true, names); err != nil {
		return pod.Pod{}, err
	}
	if out.Containers, err = convertContainers("spec.containers", p.Spec.Containers, false, names); err != nil {
		return pod.Pod{}, err
	}
	if err := setRuntimeIDs("status.initContainerStatuses", p.Status.InitContainerStatuses, out.InitContainers); err != nil {
		return pod.Pod{}, err
	}
	if err := setRuntimeIDs("status.containerStatuses", p.Status.ContainerStatuses, out.Containers); err != nil {
		return pod.Pod{}, err
	}
	if out.Overhead, err = ConvertResourceList("spec.overhead", p.Spec.Overhead); err != nil {
		return pod.Pod{}, err
	}
	// An empty spec.resources ({}) is kept: upstream ComputePodQOS takes the
	// pod-level branch whenever spec.resources is non-nil, so such a pod is
	// BestEffort whatever its containers ask (found by conformance/ TestQOS).
	if r := p.Spec.Resources; r != nil {
		for _, part := range []struct {
			name string
			list corev1.ResourceList
		}{{"requests", r.Requests}, {"limits", r.Limits}} {
			for _, name := range sortedNames(part.list) {
				if !pod.IsSupportedPodLevelResource(pod.ResourceName(name)) {
					return pod.Pod{}, fieldErrorf(resourcePath("spec.resources."+part.name, name),
						"unsupported pod-level resource: supported resources are cpu, memory and hugepages-*")
				}
			}
		}
		res := &pod.Resources{}
		if res.Requests, err = ConvertResourceList("spec.resources.requests", r.Requests); err != nil {
			return pod.Pod{}, err
		}
		if res.Limits, err = ConvertResourceList("spec.resources.limits", r.Limits); err != nil {
			return pod.Pod{}, err
		}
		out.Resources = res
	}
	out.ApplyDefaults()
	// The API server validates after defaulting: a pod-level request the
	// defaulting took from the containers must still fit the pod-level limit.
	for _, part := range []struct {
		path string
		cs   []pod.Container
	}{{"spec.initContainers", out.InitContainers}, {"spec.containers", out.Containers}} {
		for i, c := range part.cs {
			if err := checkRequirements(fmt.Sprintf("%s[%d].resources", part.path, i), c.Requests, c.Limits); err != nil {
				return pod.Pod{}, err
			}
		}
	}
	if out.Resources != nil {
		if err := checkRequirements("spec.resources", out.Resources.Requests, out.Resources.Limits); err != nil {
			return pod.Pod{}, err
		}
	}
	return out, nil
}

func convertContainers(path string, cs []corev1.Container, init bool, names map[string]string) ([]pod.Container, error) {
	var out []pod.Container
	for i, c := range cs {
		at := fmt.Sprintf("%s[%d]", path, i)
		if c.Name == "" {
			return nil, fieldErrorf(at+".name", "must not be empty")
		}
		if first, dup := names[c.Name]; dup {
			return nil, fieldErrorf(at+".name", "duplicate value %q: also the name of %s", c.Name, first)
		}
		names[c.Name] = at
		conv := pod.Container{Name: c.Name}
		if c.RestartPolicy != nil {
			// The API server allows a container restart policy only on init
			// containers, and only Always (ContainerRestartRules is off by
			// default in v1.36); app containers' policy does not reach the
			// node's resource accounting.
			if init {
				if *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
					return nil, fieldErrorf(at+".restartPolicy", "unsupported value %q: supported values: %q",
						*c.RestartPolicy, corev1.ContainerRestartPolicyAlways)
				}
				conv.RestartPolicy = pod.RestartAlways
			}
		}
		var err error
		if conv.Requests, err = ConvertResourceList(at+".resources.requests", c.Resources.Requests); err != nil {
			return nil, err
		}
		if conv.Limits, err = ConvertResourceList(at+".resources.limits", c.Resources.Limits); err != nil {
			return nil, err
		}
		out = append(out, conv)
	}
	return out, nil
}

// setRuntimeIDs gives each container the runtime ID its status reports,
// the containerID without its scheme ("containerd://<id>" gives <id>), as
// the kubelet's ParseContainerID splits it. A status must name a container
// of the spec; a container without a status, or a status without an ID (a
// container not started yet), keeps no ID.
func setRuntimeIDs(path string, statuses []corev1.ContainerStatus, cs []pod.Container) error {
	for i, st := range statuses {
		at := fmt.Sprintf("%s[%d]", path, i)
		c := slices.IndexFunc(cs, func(c pod.Container) bool { return c.Name == st.Name })
		if c < 0 {
			return fieldErrorf(at+".name", "%q is not the name of a container the status belongs to", st.Name)
		}
		if st.ContainerID == "" {
			continue
		}
		runtime, id, ok := strings.Cut(st.ContainerID, "://")
		if !ok || runtime == "" || !isCgroupName(id) {
			return fieldErrorf(at+".containerID", "%q must be <runtime>://<id>, such as containerd://3f4e5d6c..., the id letters, digits, '-', '_' and '.'", st.ContainerID)
		}
		cs[c].RuntimeID = id
	}
	return nil
}

// checkRequirements applies the API server's rules relating a request to
// its limit (ValidateResourceRequirements) to defaulted values: a request
// may not exceed its limit, and a resource that cannot be overcommitted
// needs a limit equal to its request. Values are compared in core units.
func checkRequirements(path string, requests, limits pod.ResourceList) error {
	for _, name := range requests.Names() {
		req := requests[name]
		lim, hasLimit := limits[name]
		at := manifest.KeyPath(path+".requests", string(name))
		if !overcommitAllowed(corev1.ResourceName(name)) {
			if !hasLimit {
				return fieldErrorf(manifest.KeyPath(path+".limits", string(name)), "limit must be set for non overcommitable resources")
			}
			if req != lim {
				return fieldErrorf(at, "must be equal to %s limit of %s", name, FormatQuantity(name, lim))
			}
			continue
		}
		if hasLimit && req > lim {
			return fieldErrorf(at, "must be less than or equal to %s limit of %s", name, FormatQuantity(name, lim))
		}
	}
	return nil
}

// FormatQuantity writes a core value back as a Kubernetes quantity (cpu
// in millicores as "250m" or "2", bytes in binary units as "512Mi"), for
// messages.
func FormatQuantity(name pod.ResourceName, v int64) string {
	switch {
	case name == pod.CPU:
		return resource.NewMilliQuantity(v, resource.DecimalSI).String()
	case name == pod.Memory || name == pod.EphemeralStorage || pod.IsHugePages(name):
		return resource.NewQuantity(v, resource.BinarySI).String()
	}
	return resource.NewQuantity(v, resource.DecimalSI).String()
}

// overcommitAllowed follows upstream IsOvercommitAllowed: native resources
// other than hugepages.
func overcommitAllowed(name corev1.ResourceName) bool {
	native := !strings.Contains(string(name), "/") || strings.Contains(string(name), "kubernetes.io/")
	return native && !pod.IsHugePages(pod.ResourceName(name))
}

// Bounds of the core's int64 units.
var (
	maxMilli = resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)
	maxWhole = resource.NewQuantity(math.MaxInt64, resource.DecimalSI)
)

// ConvertResourceList converts quantities into core units: cpu in
// millicores, memory, ephemeral-storage and hugepages-* in bytes (both
// rounded up, as the kubelet reads them), anything else in whole units,
// where a fraction is an error. path names the list in errors
// ("spec.containers[0].resources.limits"). A nil or empty list gives nil.
func ConvertResourceList(path string, l corev1.ResourceList) (pod.ResourceList, error) {
	if len(l) == 0 {
		return nil, nil
	}
	out := make(pod.ResourceList, len(l))
	for _, name := range sortedNames(l) {
		q := l[name]
		at := resourcePath(path, name)
		if q.Sign() < 0 {
			return nil, fieldErrorf(at, "must be greater than or equal to 0, got %s", q.String())
		}
		rn := pod.ResourceName(name)
		switch {
		case rn == pod.CPU:
			if q.Cmp(*maxMilli) > 0 {
				return nil, fieldErrorf(at, "%s is too large: at most %s cpu", q.String(), maxMilli.String())
			}
			out[rn] = q.MilliValue()
		case rn == pod.Memory || rn == pod.EphemeralStorage || pod.IsHugePages(rn):
			if q.Cmp(*maxWhole) > 0 {
				return nil, fieldErrorf(at, "%s is too large: at most %d bytes", q.String(), int64(math.MaxInt64))
			}
			out[rn] = q.Value()
		default:
			if q.Cmp(*maxWhole) > 0 {
				return nil, fieldErrorf(at, "%s is too large: at most %d", q.String(), int64(math.MaxInt64))
			}
			v := q.Value()
			if q.Cmp(*resource.NewQuantity(v, resource.DecimalSI)) != 0 {
				return nil, fieldErrorf(at, "must be an integer, got %s", q.String())
			}
			out[rn] = v
		}
	}
	return out, nil
}

// ConvertNode converts a decoded Node's name, capacity and allocatable.
func ConvertNode(n *corev1.Node) (Node, error) {
	if n.Name == "" {
		return Node{}, fieldErrorf("metadata.name", "must not be empty")
	}
	out := Node{Name: n.Name}
	var err error
	if out.Capacity, err = ConvertResourceList("status.capacity", n.Status.Capacity); err != nil {
		return Node{}, err
	}
	if out.Allocatable, err = ConvertResourceList("status.allocatable", n.Status.Allocatable); err != nil {
		return Node{}, err
	}
	return out, nil
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// resourcePath appends a resource name to a path: ".cpu" for a plain word,
// "[example.com/gpu]" for a name a dot would make ambiguous.
func resourcePath(path string, name corev1.ResourceName) string {
	return manifest.KeyPath(path, string(name))
}

// splitFieldError separates a *FieldError's path from its error, for a
// document-level *Error.
func splitFieldError(err error) (string, error) {
	var fe *FieldError
	if errors.As(err, &fe) {
		return fe.Path, fe.Err
	}
	return "", err
}
