package admission

import (
	"fmt"
	"strings"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
)

// Reasons a rejected pod's status gets (pkg/kubelet/lifecycle).
const (
	UnexpectedAdmissionError   = "UnexpectedAdmissionError"
	InsufficientResourcePrefix = "OutOf"
	OutOfCPU                   = "OutOfcpu"
	OutOfMemory                = "OutOfmemory"
	OutOfEphemeralStorage      = "OutOfephemeral-storage"
	OutOfPods                  = "OutOfpods"
)

// isScalar says the fit checks name as a scalar resource (the scheduler's
// IsScalarResourceName): an extended resource, a resource in the
// kubernetes.io namespace, hugepages, or attachable volumes. The fit
// ignores any other name.
func isScalar(name pod.ResourceName) bool {
	s := string(name)
	return dm.IsExtendedResourceName(s) || strings.Contains(s, "kubernetes.io/") || pod.IsHugePages(name) || strings.HasPrefix(s, "attachable-volumes-")
}

// Fit returns the insufficient-resource reasons of p on a node with the
// given allocatable running the active pods (upstream noderesources.Fits as
// the kubelet's predicate calls it), in upstream's order: pods, cpu,
// memory, ephemeral-storage, then the scalar resources, which upstream
// visits in Go map order and the core in name order. A pod asks for its
// effective requests (sidecars, init containers, pod-level resources and
// overhead included), less the extended resources allocatable does not
// list (requests); the running pods use the sum of theirs.
//
// Every scalar resource the pod asks for is checked, one allocatable lists
// at 0 or a huge page size it does not list included: the pod is short of
// it. The kubelet calls the fit without a DRA manager, so no resource is
// delegated to DRA.
func Fit(allocatable pod.ResourceList, active []*pod.Pod, p *pod.Pod) []preemption.Reason {
	used := make([]pod.ResourceList, len(active))
	for i, a := range active {
		used[i] = a.EffectiveRequests(pod.Options{})
	}
	return fit(allocatable, used, requests(allocatable, p))
}

// requests is what p asks of a node with the given allocatable in the fit:
// its effective requests after upstream's removeMissingExtendedResources
// (pkg/kubelet/lifecycle/predicate.go), which drops from the containers'
// requests every extended resource allocatable does not list at all, for
// cluster-level resources the node knows nothing of. One listed at 0 stays,
// and so do huge pages, attachable volumes and kubernetes.io resources,
// which are not extended resources; pod-level resources and overhead are
// not filtered, as upstream.
func requests(allocatable pod.ResourceList, p *pod.Pod) pod.ResourceList {
	missing := func(name pod.ResourceName) bool {
		_, listed := allocatable[name]
		return !listed && dm.IsExtendedResourceName(string(name))
	}
	without := func(cs []pod.Container) []pod.Container {
		out := make([]pod.Container, len(cs))
		for i, c := range cs {
			c.Requests = c.Requests.Clone()
			for name := range c.Requests {
				if missing(name) {
					delete(c.Requests, name)
				}
			}
			out[i] = c
		}
		return out
	}
	for _, c := range append(append([]pod.Container(nil), p.InitContainers...), p.Containers...) {
		for name := range c.Requests {
			if missing(name) {
				// Copied only here: most pods ask for nothing to drop.
				q := *p
				q.InitContainers = without(p.InitContainers)
				q.Containers = without(p.Containers)
				return q.EffectiveRequests(pod.Options{})
			}
		}
	}
	return p.EffectiveRequests(pod.Options{})
}

// fit is Fit with the running pods' requests and the pod's worked out
// already.
func fit(allocatable pod.ResourceList, used []pod.ResourceList, want pod.ResourceList) []preemption.Reason {
	var reasons []preemption.Reason
	if n := int64(len(used)); n+1 > allocatable[pod.Pods] {
		reasons = append(reasons, &preemption.InsufficientResource{ResourceName: pod.Pods, Requested: 1, Used: n, Capacity: allocatable[pod.Pods]})
	}
	sum := func(res pod.ResourceName) int64 {
		var total int64
		for _, u := range used {
			total += u[res]
		}
		return total
	}
	check := func(res pod.ResourceName) {
		q := want[res]
		if q <= 0 {
			return
		}
		if u := sum(res); q > allocatable[res]-u {
			reasons = append(reasons, &preemption.InsufficientResource{ResourceName: res, Requested: q, Used: u, Capacity: allocatable[res]})
		}
	}
	check(pod.CPU)
	check(pod.Memory)
	check(pod.EphemeralStorage)
	for _, res := range want.Names() {
		if isScalar(res) {
			check(res)
		}
	}
	return reasons
}

// rejection is the status reason and message of a pod turned down for r,
// the first of its failure reasons.
func rejection(r preemption.Reason) (reason, message string) {
	switch r := r.(type) {
	case *preemption.InsufficientResource:
		switch r.ResourceName {
		case pod.CPU:
			reason = OutOfCPU
		case pod.Memory:
			reason = OutOfMemory
		case pod.EphemeralStorage:
			reason = OutOfEphemeralStorage
		case pod.Pods:
			reason = OutOfPods
		default:
			reason = InsufficientResourcePrefix + string(r.ResourceName)
		}
		return reason, r.Error()
	case *preemption.PredicateFailure:
		return r.PredicateName, r.Error()
	}
	// Reason is sealed: the two cases above are the only kinds.
	return "UnexpectedPredicateFailureType", fmt.Sprintf("GeneralPredicates failed due to %v, which is unexpected.", r)
}
