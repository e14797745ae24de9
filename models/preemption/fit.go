package preemption

import (
	"sort"
	"strings"
)

// Shortfall is one resource the node lacks for a pod.
type Shortfall struct {
	Resource                  string
	Requested, Used, Capacity int64
}

// scalar says the fit checks the resource as a scalar resource: extended
// and other domain-prefixed resources, hugepages and attachable volumes.
// Other names (a bare "gpu") are not checked at all.
func scalar(name string) bool {
	return strings.Contains(name, "/") || strings.HasPrefix(name, "hugepages-") || strings.HasPrefix(name, "attachable-volumes-")
}

// extended says the resource is an extended resource: domain-prefixed,
// outside the kubernetes.io namespace. (Upstream also asks that
// "requests."+name be a qualified name; the model's names are valid ones.)
func extended(name string) bool {
	return strings.Contains(name, "/") && !strings.Contains(name, "kubernetes.io/")
}

// Fit lists what the node lacks to run p next to the running pods: a pod
// slot first, then cpu, memory and ephemeral storage, then the scalar
// resources by name. A resource is short when the pod asks for more than
// allocatable less what the running pods ask for; allocatable has none of
// a resource it does not list. The kubelet first drops from the pod's
// containers the extended resources allocatable does not list at all
// (removeMissingExtendedResources), so of those the pod asks only for its
// overhead's; every other scalar resource, one listed at 0 or a huge page
// size not listed included, is checked.
func Fit(allocatable map[string]int64, running []Pod, p Pod) []Shortfall {
	var out []Shortfall
	if int64(len(running))+1 > allocatable[Pods] {
		out = append(out, Shortfall{Pods, 1, int64(len(running)), allocatable[Pods]})
	}
	used := func(res string) int64 {
		var u int64
		for _, r := range running {
			u += FitRequest(r, res)
		}
		return u
	}
	names := map[string]bool{}
	for _, c := range append(append([]Container(nil), p.Init...), p.App...) {
		for n := range c.Requests {
			names[n] = true
		}
	}
	if p.Level != nil {
		for n := range p.Level.Requests {
			names[n] = true
		}
	}
	for n := range p.Overhead {
		names[n] = true
	}
	var scalars []string
	for n := range names {
		if scalar(n) {
			scalars = append(scalars, n)
		}
	}
	sort.Strings(scalars)
	for _, res := range append([]string{CPU, Memory, EphemeralStorage}, scalars...) {
		want := FitRequest(p, res)
		if _, listed := allocatable[res]; !listed && extended(res) {
			// Pod-level resources hold no extended resource.
			want = p.Overhead[res]
		}
		if want == 0 {
			continue
		}
		if u := used(res); want > allocatable[res]-u {
			out = append(out, Shortfall{res, want, u, allocatable[res]})
		}
	}
	return out
}
