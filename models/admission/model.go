package admission

import (
	"fmt"
	"sort"
	"strings"
)

// The resources the fit checks by name, in its order after the pod slot.
const (
	CPU              = "cpu"
	Memory           = "memory"
	EphemeralStorage = "ephemeral-storage"
	// Pods is allocatable's number of pod slots (the kubelet's maxPods).
	Pods = "pods"
)

// Pod is a pod as the fit sees it.
type Pod struct {
	Name string
	// Requests is what the pod asks of the node, by resource, in whole
	// units (millicores, bytes, counts).
	Requests map[string]int64
}

// Shortfall is one resource the node lacks for a pod: the pod requests
// more than allocatable (Capacity) less what the pods on the node request
// (Used). For the pod slot, Requested is 1 and Used the pods on the node.
type Shortfall struct {
	Resource                  string
	Requested, Used, Capacity int64
}

// Reason is the status reason of a pod rejected for s: "OutOf" and the
// resource's name.
func (s Shortfall) Reason() string { return "OutOf" + s.Resource }

// Message is the status message of a pod rejected for s, in upstream's
// words.
func (s Shortfall) Message() string {
	return fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
		s.Resource, s.Requested, s.Used, s.Capacity)
}

// Decision is the outcome of one pod's admission.
type Decision struct {
	Admitted bool
	// Reason and Message are a rejected pod's status: those of its first
	// shortfall. Both are empty for an admitted pod.
	Reason, Message string
	// Shortfalls are every resource the node lacks for the pod, in the
	// order the fit checks them; none for an admitted pod.
	Shortfalls []Shortfall
}

// Node is a node's allocatable and the pods it runs, in the order they
// were admitted.
type Node struct {
	Allocatable map[string]int64
	Pods        []Pod
}

// Admit judges p against the node; an admitted pod joins the node's pods,
// a rejected one leaves the node as it was.
func (n *Node) Admit(p Pod) Decision {
	short := Shortfalls(n.Allocatable, n.Pods, p)
	if len(short) > 0 {
		return Decision{Reason: short[0].Reason(), Message: short[0].Message(), Shortfalls: short}
	}
	n.Pods = append(n.Pods, p)
	return Decision{Admitted: true}
}

// Remove takes the named pod off the node, as when it finishes; it says
// whether the node ran it.
func (n *Node) Remove(name string) bool {
	for i, p := range n.Pods {
		if p.Name == name {
			n.Pods = append(n.Pods[:i], n.Pods[i+1:]...)
			return true
		}
	}
	return false
}

// Shortfalls lists what a node of the given allocatable running the given
// pods lacks for p: a pod slot first, then cpu, memory and
// ephemeral-storage, then the scalar resources p asks for, by name.
func Shortfalls(allocatable map[string]int64, running []Pod, p Pod) []Shortfall {
	used := map[string]int64{}
	for _, r := range running {
		for name, q := range r.Requests {
			used[name] += q
		}
	}
	var out []Shortfall
	if slots, taken := allocatable[Pods], int64(len(running)); taken+1 > slots {
		out = append(out, Shortfall{Pods, 1, taken, slots})
	}
	for _, name := range checked(allocatable, p) {
		if want := p.Requests[name]; want > allocatable[name]-used[name] {
			out = append(out, Shortfall{name, want, used[name], allocatable[name]})
		}
	}
	return out
}

// checked lists the resources the fit compares for p, in its order: cpu,
// memory and ephemeral-storage when p asks for some, then by name the
// scalar resources p asks for but the extended resources allocatable does
// not list at all, which the kubelet drops before the fit
// (removeMissingExtendedResources) for cluster-level resources. A scalar
// resource allocatable lists at 0, and a huge page size or attachable
// volumes it does not list, are checked: the node has none. A name that is
// neither (a bare "gpu") is not checked. (The kubelet drops the missing
// extended resources from the containers' requests only; a pod's overhead
// of one, which the model's pods do not separate, would stay.)
func checked(allocatable map[string]int64, p Pod) []string {
	var out []string
	for _, name := range []string{CPU, Memory, EphemeralStorage} {
		if p.Requests[name] > 0 {
			out = append(out, name)
		}
	}
	var scalars []string
	for name, q := range p.Requests {
		if _, listed := allocatable[name]; q > 0 && scalar(name) && (listed || !extended(name)) {
			scalars = append(scalars, name)
		}
	}
	sort.Strings(scalars)
	return append(out, scalars...)
}

// scalar says the fit checks name as a scalar resource: an extended or
// other domain-prefixed resource, hugepages, or attachable volumes.
func scalar(name string) bool {
	return strings.Contains(name, "/") || strings.HasPrefix(name, "hugepages-") || strings.HasPrefix(name, "attachable-volumes-")
}

// extended says name is an extended resource: domain-prefixed, outside the
// kubernetes.io namespace. (Upstream also asks that "requests."+name be a
// qualified name; the model's names are valid ones.)
func extended(name string) bool {
	return strings.Contains(name, "/") && !strings.Contains(name, "kubernetes.io/")
}
