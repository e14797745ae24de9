package pod

import (
	"fmt"
	"slices"
	"strings"
)

// ResourceName names a resource as the Kubernetes API does ("cpu", "memory",
// "example.com/gpu").
type ResourceName string

// Well-known resource names.
const (
	CPU              ResourceName = "cpu"
	Memory           ResourceName = "memory"
	Pods             ResourceName = "pods"
	EphemeralStorage ResourceName = "ephemeral-storage"
	// HugePagesPrefix starts every hugepages resource name ("hugepages-2Mi").
	HugePagesPrefix = "hugepages-"
)

// ResourceList maps a resource to its quantity: millicores for cpu, bytes for
// memory, storage and hugepages, whole units otherwise. A key that is present
// with value 0 differs from a missing key, as in the Kubernetes API (overhead
// is added only to limits that are present and non-zero).
type ResourceList map[ResourceName]int64

// Clone returns a copy; nil stays nil.
func (l ResourceList) Clone() ResourceList {
	if l == nil {
		return nil
	}
	c := make(ResourceList, len(l))
	for k, v := range l {
		c[k] = v
	}
	return c
}

// Names returns the resource names in ascending order, the order in which
// the core iterates a list wherever upstream iterates a Go map.
func (l ResourceList) Names() []ResourceName {
	names := make([]ResourceName, 0, len(l))
	for k := range l {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// String prints the list in name order, for messages and test failures.
func (l ResourceList) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range l.Names() {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%d", n, l[n])
	}
	b.WriteByte('}')
	return b.String()
}

// IsHugePages reports whether name is a hugepages resource.
func IsHugePages(name ResourceName) bool {
	return strings.HasPrefix(string(name), HugePagesPrefix)
}

// RestartPolicy of an init container; only Always matters (it makes the init
// container a sidecar).
type RestartPolicy string

// RestartAlways marks a restartable init container (a sidecar).
const RestartAlways RestartPolicy = "Always"

// Container is one init or app container.
type Container struct {
	Name     string
	Requests ResourceList
	Limits   ResourceList
	// RestartPolicy is set only on init containers; Always makes it a sidecar.
	RestartPolicy RestartPolicy
	// RuntimeID is the container runtime's ID of the running container
	// (status.containerStatuses[].containerID without its "containerd://"
	// scheme); empty when unknown. Only the container's cgroup name reads it.
	RuntimeID string
}

// IsSidecar reports whether an init container is restartable (runs for the
// life of the pod).
func (c Container) IsSidecar() bool { return c.RestartPolicy == RestartAlways }

// Phase is the pod phase.
type Phase string

// Pod phases.
const (
	Pending   Phase = "Pending"
	Running   Phase = "Running"
	Succeeded Phase = "Succeeded"
	Failed    Phase = "Failed"
	Unknown   Phase = "Unknown"
)

// Annotation keys by which the kubelet tells where a pod came from.
const (
	ConfigSourceAnnotation = "kubernetes.io/config.source"
	ConfigMirrorAnnotation = "kubernetes.io/config.mirror"
	// ConfigSourceAPI is the config source of pods from the API server.
	ConfigSourceAPI = "api"
)

// Resources are pod-level requests and limits (spec.resources).
type Resources struct {
	Requests ResourceList
	Limits   ResourceList
}

// Pod is the part of a Kubernetes pod the node subsystems read.
type Pod struct {
	UID       string
	Name      string
	Namespace string
	// Priority is nil when the pod has none (no priority admission).
	Priority          *int32
	PriorityClassName string
	// Annotations carry the config source and mirror markers.
	Annotations map[string]string
	Phase       Phase
	// Deleted is true once the pod has a deletion timestamp.
	Deleted        bool
	InitContainers []Container
	Containers     []Container
	Overhead       ResourceList
	// Resources is spec.resources; nil when the pod sets no pod-level resources.
	Resources *Resources
	// QOSClass is status.qosClass; empty means not yet computed.
	QOSClass QOSClass
}

// Key returns "namespace/name", the way the kubelet names a pod in messages.
func (p *Pod) Key() string { return p.Namespace + "/" + p.Name }

// Container returns the init or app container with the given name.
func (p *Pod) Container(name string) (Container, bool) {
	for _, c := range p.InitContainers {
		if c.Name == name {
			return c, true
		}
	}
	for _, c := range p.Containers {
		if c.Name == name {
			return c, true
		}
	}
	return Container{}, false
}

// IsInitContainer reports whether name is one of the pod's init containers.
func (p *Pod) IsInitContainer(name string) bool {
	for _, c := range p.InitContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// IsTerminal reports whether the pod has finished for good.
func (p *Pod) IsTerminal() bool { return p.Phase == Succeeded || p.Phase == Failed }

// IsStatic reports whether the pod came from a source other than the API
// server: the config source annotation is present with any value but "api"
// (even empty or unknown values count, as upstream).
func (p *Pod) IsStatic() bool {
	src, ok := p.Annotations[ConfigSourceAnnotation]
	return ok && src != ConfigSourceAPI
}

// IsMirror reports whether the pod is the API server's mirror of a static pod.
func (p *Pod) IsMirror() bool {
	_, ok := p.Annotations[ConfigMirrorAnnotation]
	return ok
}

// SystemCriticalPriority is the lowest priority that makes a pod critical.
const SystemCriticalPriority int32 = 2_000_000_000

// IsCritical reports whether the pod is static, a mirror, or has a system
// critical priority.
func (p *Pod) IsCritical() bool {
	return p.IsStatic() || p.IsMirror() || (p.Priority != nil && *p.Priority >= SystemCriticalPriority)
}
