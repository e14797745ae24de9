package preemption

import (
	"fmt"
	"math"
	"strings"

	"github.com/nodeproof/nodeproof/core/pod"
)

// Requirement is an amount of one resource that must be freed (upstream
// admissionRequirement).
type Requirement struct {
	Resource pod.ResourceName
	Quantity int64
}

// Requirements keep the order of the failure reasons they came from;
// the order decides nothing but the error text.
type Requirements []Requirement

// String is upstream's toString: "[(res: cpu, q: 100), (res: pods, q: 1), ]",
// trailing separator included, which upstream's error messages show.
func (r Requirements) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for _, req := range r {
		fmt.Fprintf(&b, "(res: %v, q: %d), ", req.Resource, req.Quantity)
	}
	b.WriteByte(']')
	return b.String()
}

// Distance measures how far evicting p leaves the requirements from being
// met: the sum over requirements of the squared fraction still missing, so
// each requirement weighs the same whatever its unit. A pod that covers
// every requirement is at distance 0; one that covers nothing at len(r).
func (r Requirements) Distance(p *pod.Pod) float64 {
	return r.distance(newCandidate(p))
}

// Subtract returns the requirements that remain after evicting pods, in the
// same order, leaving out those fully met.
func (r Requirements) Subtract(pods ...*pod.Pod) Requirements {
	cands := make([]*candidate, len(pods))
	for i, p := range pods {
		cands[i] = newCandidate(p)
	}
	return r.subtract(cands...)
}

// Request is what evicting p frees of res in preemption's accounting
// (upstream resource.GetResourceRequest): 1 for "pods"; otherwise the pod's
// requests without overhead, then the overhead for res added only when that
// total is not zero. When the pod sets pod-level resources (spec.resources
// requests or limits of cpu, memory or hugepages; the PodLevelResources gate
// is on by default in v1.36) the containers are skipped entirely and only
// the pod-level requests count, so a resource the pod sets only in its
// containers (ephemeral-storage, an extended resource) frees 0.
func Request(p *pod.Pod, res pod.ResourceName) int64 {
	return newCandidate(p).request(res)
}

// candidate is a pod with its preemption requests worked out once: upstream
// recomputes them on every comparison, with the same results.
type candidate struct {
	pod      *pod.Pod
	requests pod.ResourceList
}

func newCandidate(p *pod.Pod) *candidate {
	var reqs pod.ResourceList
	if p.HasPodLevelResources() {
		reqs = pod.ResourceList{}
		if p.Resources != nil {
			for name, q := range p.Resources.Requests {
				if pod.IsSupportedPodLevelResource(name) {
					reqs[name] = q
				}
			}
		}
	} else {
		reqs = p.EffectiveRequests(pod.Options{ExcludeOverhead: true})
	}
	for name, q := range reqs {
		if q != 0 {
			reqs[name] = q + p.Overhead[name]
		}
	}
	return &candidate{pod: p, requests: reqs}
}

func (c *candidate) request(res pod.ResourceName) int64 {
	if res == pod.Pods {
		return 1
	}
	return c.requests[res]
}

func (r Requirements) distance(c *candidate) float64 {
	dist := 0.0
	for _, req := range r {
		remaining := float64(req.Quantity - c.request(req.Resource))
		if remaining > 0 {
			dist += math.Pow(remaining/float64(req.Quantity), 2)
		}
	}
	return dist
}

func (r Requirements) subtract(cands ...*candidate) Requirements {
	var left Requirements
	for _, req := range r {
		q := req.Quantity
		for _, c := range cands {
			q -= c.request(req.Resource)
			if q <= 0 {
				break
			}
		}
		if q > 0 {
			left = append(left, Requirement{Resource: req.Resource, Quantity: q})
		}
	}
	return left
}

// smallerResourceRequest is upstream's tie-break between two pods at the
// same distance: compare memory, then cpu; a pod with the same requests as
// the other counts as smaller, so among equals the later pod in scan order
// wins.
func smallerResourceRequest(a, b *candidate) bool {
	for _, res := range [...]pod.ResourceName{pod.Memory, pod.CPU} {
		ra, rb := a.request(res), b.request(res)
		if ra < rb {
			return true
		}
		if ra > rb {
			return false
		}
	}
	return true
}
