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

// Fit lists what the node lacks to run p next to the running pods: a pod
// slot first, then cpu, memory and ephemeral storage, then the scalar
// resources by name. A resource is short when the pod asks for more than
// allocatable less what the running pods ask for. A scalar resource the
// node has none of is not checked, as core/admission does
// (docs/deviations.md N6: v1.36's kubelet drops only an extended resource
// the node does not list).
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
		if want == 0 {
			continue
		}
		if scalar(res) && allocatable[res] <= 0 {
			continue
		}
		if u := used(res); want > allocatable[res]-u {
			out = append(out, Shortfall{res, want, u, allocatable[res]})
		}
	}
	return out
}
