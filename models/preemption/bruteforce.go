package preemption

import "math/bits"

// MaxBruteForce bounds the preemptable pods BruteForce searches: 2^12
// subsets keep one search well under a millisecond.
const MaxBruteForce = 12

// Optimum is the best any choice of victims could do.
type Optimum struct {
	// Searched is false when there were more than MaxBruteForce
	// preemptable pods; the other fields are then zero.
	Searched bool
	// Feasible says some set of preemptable pods frees every need.
	Feasible bool
	// FewestVictims is the smallest number of pods that frees every need.
	FewestVictims int
	// LeastCost is the smallest Cost of a set that frees every need; it
	// may be reached by another set than FewestVictims.
	LeastCost float64
}

// Cost measures the requests a set of victims evicts, in units of what was
// needed: for each need, the victims' requests of that resource divided by
// the need, summed over needs. Freeing exactly what one need asks costs 1.
func Cost(needs []Need, victims []Pod) float64 {
	total := 0.0
	for _, n := range positive(needs) {
		var freed int64
		for _, v := range victims {
			freed += PreemptionRequest(v, n.Resource)
		}
		total += float64(freed) / float64(n.Quantity)
	}
	return total
}

// BruteForce tries every subset of the pods the preemptor may preempt,
// whatever their QoS class or priority, and returns the fewest victims and
// the least cost of any subset that frees every need.
func BruteForce(preemptor Pod, running []Pod, needs []Need) Optimum {
	needs = positive(needs)
	var cands []Pod
	for _, p := range running {
		if MayPreempt(preemptor, p) {
			cands = append(cands, p)
		}
	}
	if len(cands) > MaxBruteForce {
		return Optimum{}
	}
	// freed[mask*k+j] is what the subset mask frees of need j, built from
	// the subset without its lowest member.
	n, k := len(cands), len(needs)
	reqs := make([]int64, n*k)
	for i, c := range cands {
		for j, nd := range needs {
			reqs[i*k+j] = PreemptionRequest(c, nd.Resource)
		}
	}
	freed := make([]int64, (1<<n)*k)
	opt := Optimum{Searched: true}
	for mask := 0; mask < 1<<n; mask++ {
		enough := true
		if mask > 0 {
			low := bits.TrailingZeros(uint(mask))
			prev := mask &^ (1 << low)
			for j := range needs {
				freed[mask*k+j] = freed[prev*k+j] + reqs[low*k+j]
			}
		}
		for j, nd := range needs {
			if freed[mask*k+j] < nd.Quantity {
				enough = false
				break
			}
		}
		if !enough {
			continue
		}
		count := bits.OnesCount(uint(mask))
		if !opt.Feasible || count < opt.FewestVictims {
			opt.FewestVictims = count
		}
		// The same arithmetic as Cost, in the same order, so the greedy
		// choice's cost compares exactly with the subsets'.
		cost := 0.0
		for j, nd := range needs {
			cost += float64(freed[mask*k+j]) / float64(nd.Quantity)
		}
		if !opt.Feasible || cost < opt.LeastCost {
			opt.LeastCost = cost
		}
		opt.Feasible = true
	}
	return opt
}

// positive drops needs of nothing: a reason whose pod would fit asks for
// nothing to be freed, and upstream drops it before any choice.
func positive(needs []Need) []Need {
	var out []Need
	for _, n := range needs {
		if n.Quantity > 0 {
			out = append(out, n)
		}
	}
	return out
}
