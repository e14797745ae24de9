package preemption

import (
	"fmt"
	"strings"
)

// Need is an amount of one resource to free.
type Need struct {
	Resource string
	Quantity int64
}

// Format writes needs as upstream's error messages do:
// "[(res: cpu, q: 100), ]".
func Format(needs []Need) string {
	s := "["
	for _, n := range needs {
		s += fmt.Sprintf("(res: %s, q: %d), ", n.Resource, n.Quantity)
	}
	return s + "]"
}

// Missing is what is still to free after evicting the given pods: each
// need less the pods' preemption requests, dropped once nothing is missing.
func Missing(needs []Need, pods []Pod) []Need {
	var out []Need
	for _, n := range needs {
		left := n.Quantity
		for _, p := range pods {
			left -= PreemptionRequest(p, n.Resource)
		}
		if left > 0 {
			out = append(out, Need{n.Resource, left})
		}
	}
	return out
}

// Distance is the sum over needs of the squared fraction of the need the
// pod leaves missing.
func Distance(needs []Need, p Pod) float64 {
	total := 0.0
	for _, n := range needs {
		short := n.Quantity - PreemptionRequest(p, n.Resource)
		if short > 0 {
			f := float64(short) / float64(n.Quantity)
			total += f * f
		}
	}
	return total
}

// noLarger says a asks for no more memory than b, and on equal memory no
// more cpu: the tie-break between two pods at the same distance.
func noLarger(a, b Pod) bool {
	am, bm := PreemptionRequest(a, Memory), PreemptionRequest(b, Memory)
	if am != bm {
		return am < bm
	}
	return PreemptionRequest(a, CPU) <= PreemptionRequest(b, CPU)
}

// Result is the greedy choice: indices into the running pods, in kill
// order, or the error upstream reports.
type Result struct {
	Victims []int
	Err     string
}

// Greedy is upstream's choice of victims for a critical preemptor short of
// needs among the running pods. The preemptable pods are split by QoS class
// keeping their order. If all of them together cannot free the needs, that
// is the error. Otherwise three rounds pick pods, each round from one class
// and each only for what the others leave missing: Guaranteed pods for what
// every BestEffort and Burstable pod together leaves, then Burstable pods
// for what every BestEffort pod and the Guaranteed picks leave, then
// BestEffort pods for what the Burstable and Guaranteed picks leave. The
// victims are the BestEffort picks, the Burstable picks and the Guaranteed
// picks, each in pick order.
func Greedy(preemptor Pod, running []Pod, needs []Need) Result {
	byClass := map[string][]int{}
	for i, p := range running {
		if MayPreempt(preemptor, p) {
			byClass[QoS(p)] = append(byClass[QoS(p)], i)
		}
	}
	be, bu, gu := byClass[BestEffort], byClass[Burstable], byClass[Guaranteed]
	podsOf := func(lists ...[]int) []Pod {
		var out []Pod
		for _, l := range lists {
			for _, i := range l {
				out = append(out, running[i])
			}
		}
		return out
	}
	fail := func(left []Need) Result {
		return Result{Err: "preemption: error finding a set of pods to preempt: no set of running pods found to reclaim resources: " + Format(left)}
	}
	if left := Missing(needs, podsOf(be, bu, gu)); len(left) > 0 {
		return fail(left)
	}
	gPicks, left := pick(running, gu, Missing(needs, podsOf(be, bu)))
	if left != nil {
		return fail(left)
	}
	buPicks, left := pick(running, bu, Missing(needs, podsOf(be, gPicks)))
	if left != nil {
		return fail(left)
	}
	bePicks, left := pick(running, be, Missing(needs, podsOf(buPicks, gPicks)))
	if left != nil {
		return fail(left)
	}
	victims := append(append(append([]int{}, bePicks...), buPicks...), gPicks...)
	return Result{Victims: victims}
}

// pick takes pods from pool until nothing is missing. Each round scans the
// pool in its current order and keeps the first pod it sees, replacing it
// with a later one that is strictly closer, or as close and no larger. The
// pod taken is replaced in the pool by the pool's last pod. When the pool
// runs dry it returns what is still missing.
func pick(running []Pod, pool []int, needs []Need) (picked []int, missing []Need) {
	pool = append([]int(nil), pool...)
	for len(needs) > 0 {
		if len(pool) == 0 {
			return nil, needs
		}
		best := 0
		bestDist := Distance(needs, running[pool[0]])
		for pos := 1; pos < len(pool); pos++ {
			d := Distance(needs, running[pool[pos]])
			if d < bestDist || (d == bestDist && noLarger(running[pool[pos]], running[pool[best]])) {
				best, bestDist = pos, d
			}
		}
		chosen := pool[best]
		picked = append(picked, chosen)
		needs = Missing(needs, []Pod{running[chosen]})
		last := len(pool) - 1
		pool[best] = pool[last]
		pool = pool[:last]
	}
	return picked, nil
}

// Names lists the names of the indexed pods, for messages.
func Names(running []Pod, idx []int) string {
	var names []string
	for _, i := range idx {
		names = append(names, running[i].Name)
	}
	return "[" + strings.Join(names, " ") + "]"
}
