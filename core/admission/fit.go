package admission

import (
	"fmt"
	"strings"

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
// IsScalarResourceName): an extended or otherwise domain-prefixed resource,
// hugepages, or attachable volumes. The fit ignores any other name.
func isScalar(name pod.ResourceName) bool {
	s := string(name)
	return strings.Contains(s, "/") || pod.IsHugePages(name) || strings.HasPrefix(s, "attachable-volumes-")
}

// Fit returns the insufficient-resource reasons of p on a node with the
// given allocatable running the active pods (upstream noderesources.Fits as
// the kubelet's predicate calls it), in upstream's order: pods, cpu,
// memory, ephemeral-storage, then the scalar resources, which upstream
// visits in Go map order and the core in name order. A pod asks for its
// effective requests (sidecars, init containers, pod-level resources and
// overhead included); the running pods use the sum of theirs.
//
// A scalar resource of which allocatable has none (missing or 0) is not
// checked. v1.36's kubelet drops only the extended resources the node does
// not list (cluster-level resources) and checks the rest, huge pages
// included: a known difference, docs/deviations.md N6.
func Fit(allocatable pod.ResourceList, active []*pod.Pod, p *pod.Pod) []preemption.Reason {
	used := make([]pod.ResourceList, len(active))
	for i, a := range active {
		used[i] = a.EffectiveRequests(pod.Options{})
	}
	return fit(allocatable, used, p.EffectiveRequests(pod.Options{}))
}

// fit is Fit with the running pods' requests worked out already.
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
		if isScalar(res) && allocatable[res] > 0 {
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
