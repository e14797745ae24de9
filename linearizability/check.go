package linearizability

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/nodeproof/nodeproof/linearizability/frontier"
	"github.com/nodeproof/nodeproof/models/deviceagent"
)

// Never is the return time of an operation whose outcome is unknown: it may
// take effect at any time after its call, or not at all.
const Never = int64(math.MaxInt64)

// Model is porcupine's view of models/deviceagent, starting from init. The
// model is nondeterministic only for operations of unknown outcome;
// porcupine's power-set construction tracks both possibilities.
func Model(init deviceagent.State) porcupine.Model {
	nondeterministic := nondeterministicModel(init)
	return nondeterministic.ToModel()
}

func nondeterministicModel(init deviceagent.State) porcupine.NondeterministicModel {
	return porcupine.NondeterministicModel{
		Partition: partition,
		Init:      func() []any { return []any{init} },
		Step: func(s, in, out any) []any {
			next := deviceagent.Next(s.(deviceagent.State), in.(deviceagent.Input), out.(deviceagent.Output))
			states := make([]any, len(next))
			for i, n := range next {
				states[i] = n
			}
			return states
		},
		Equal: func(a, b any) bool { return deviceagent.Equal(a.(deviceagent.State), b.(deviceagent.State)) },
		Hash:  func(s any) uint64 { return deviceagent.Hash(s.(deviceagent.State)) },
		DescribeOperation: func(in, out any) string {
			return deviceagent.Describe(in.(deviceagent.Input), out.(deviceagent.Output))
		},
		DescribeState: func(s any) string { return s.(deviceagent.State).String() },
	}
}

// Check splits history and checks it, bounded by timeout, with the
// frontier checker: porcupine's search and answers, in time about linear
// in the history's length where porcupine's grows with its square
// (BENCHMARKS.md). The tests hold the two to the same verdict on many
// histories; porcupine still draws every visualization.
func Check(init deviceagent.State, history []porcupine.Operation, timeout time.Duration) porcupine.CheckResult {
	return frontier.Check(nondeterministicModel(init), filters, Split(history), timeout)
}

// filters marks the operations of a partition that the frontier checker may
// place for good: the model's filters (deviceagent.Filter) that no pending
// update can meet. The model holds an update of unknown outcome pending
// from its call until a crash of its resource clears it, so a state with it
// pending can be reached only while that window is open: a filter is
// marked when no such window on one of its resources overlaps its own
// interval. A window whose resource never crashes again stays open to the
// end.
func filters(partition []porcupine.Operation) []bool {
	type window struct{ from, to int64 }
	type crash struct{ call, ret int64 }
	crashes := map[string][]crash{}
	for _, op := range partition {
		if in := op.Input.(deviceagent.Input); in.Op == deviceagent.Crash {
			crashes[in.Resources[0]] = append(crashes[in.Resources[0]], crash{op.Call, op.Return})
		}
	}
	// soonest[r][i]: the earliest return among r's crashes from the i-th
	// call on, so that a window ends at the first crash to end after it.
	soonest := map[string][]int64{}
	for r, cs := range crashes {
		slices.SortFunc(cs, func(a, b crash) int { return cmp.Compare(a.call, b.call) })
		ends := make([]int64, len(cs)+1)
		ends[len(cs)] = Never
		for i := len(cs) - 1; i >= 0; i-- {
			ends[i] = min(cs[i].ret, ends[i+1])
		}
		soonest[r] = ends
	}
	windows := map[string][]window{}
	for _, op := range partition {
		in, out := op.Input.(deviceagent.Input), op.Output.(deviceagent.Output)
		if in.Op != deviceagent.Update || !out.Unknown {
			continue
		}
		r := in.Resources[0]
		first, _ := slices.BinarySearchFunc(crashes[r], op.Return+1, func(c crash, t int64) int { return cmp.Compare(c.call, t) })
		to := Never
		if ends := soonest[r]; ends != nil {
			to = ends[first]
		}
		windows[r] = append(windows[r], window{op.Call, to})
	}
	// Sorted by opening, with the latest close of each prefix: an interval
	// meets a window when one opening no later than its end closes no
	// earlier than its start.
	latestClose := map[string][]int64{}
	for r, ws := range windows {
		slices.SortFunc(ws, func(a, b window) int { return cmp.Compare(a.from, b.from) })
		closes := make([]int64, len(ws))
		for i, w := range ws {
			closes[i] = w.to
			if i > 0 {
				closes[i] = max(closes[i], closes[i-1])
			}
		}
		latestClose[r] = closes
	}
	marks := make([]bool, len(partition))
	for i, op := range partition {
		in, out := op.Input.(deviceagent.Input), op.Output.(deviceagent.Output)
		if !deviceagent.Filter(in, out) {
			continue
		}
		marks[i] = !slices.ContainsFunc(in.Resources, func(r string) bool {
			opened, _ := slices.BinarySearchFunc(windows[r], op.Return+1, func(w window, t int64) int { return cmp.Compare(w.from, t) })
			return opened > 0 && latestClose[r][opened-1] >= op.Call
		})
	}
	return marks
}

// checkPorcupine is Check by porcupine itself, the reference the frontier
// checker is compared with.
func checkPorcupine(init deviceagent.State, history []porcupine.Operation, timeout time.Duration) porcupine.CheckResult {
	return porcupine.CheckOperationsTimeout(Model(init), Split(history), timeout)
}

// CheckVerbose is checkPorcupine that also returns what porcupine's
// visualization needs. Recording the longest partial linearizations costs
// time that grows with the square of a partition's length, so the tests
// call it only to draw a failure.
func CheckVerbose(init deviceagent.State, history []porcupine.Operation, timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	return porcupine.CheckOperationsVerbose(Model(init), Split(history), timeout)
}

// Split replaces every admission that failed in its Allocate RPC by a
// Reserve and a Release over the same interval. The agent reserves the
// devices when it plans, makes the RPC without its lock and releases them
// when the RPC fails, so another admission in between sees them taken; an
// atomic Admit cannot explain that, a reservation followed by its release
// can. The model orders the two: Release finds nothing to release before
// Reserve.
func Split(history []porcupine.Operation) []porcupine.Operation {
	out := make([]porcupine.Operation, 0, len(history))
	for _, op := range history {
		in := op.Input.(deviceagent.Input)
		res := op.Output.(deviceagent.Output)
		if in.Op != deviceagent.Admit || res.Err != deviceagent.ErrAllocateFailed {
			out = append(out, op)
			continue
		}
		reserve, release := op, op
		in.Op = deviceagent.Reserve
		reserve.Input, reserve.Output = in, deviceagent.Output{}
		release.Input = deviceagent.Input{Op: deviceagent.Release, Resources: in.Resources, Pod: in.Pod}
		release.Output = deviceagent.Output{}
		out = append(out, reserve, release)
	}
	return out
}

// partition groups operations by resource. Two resources stay in one group
// when some operation touches both (an admission asking for both, whose
// outcome depends on both): their operations do not commute. A capacity
// read sees every resource at one instant; each group gets the read of its
// own resources, which checks less than the whole read but never rejects a
// history the whole read would accept.
func partition(history []porcupine.Operation) [][]porcupine.Operation {
	parent := map[string]string{}
	var root func(string) string
	root = func(r string) string {
		p, ok := parent[r]
		if !ok || p == r {
			parent[r] = r
			return r
		}
		parent[r] = root(p)
		return parent[r]
	}
	for _, op := range history {
		in := op.Input.(deviceagent.Input)
		for _, r := range in.Resources {
			root(r)
		}
		if in.Op == deviceagent.Capacity {
			continue
		}
		for _, r := range in.Resources[1:] {
			parent[root(r)] = root(in.Resources[0])
		}
	}
	groups := map[string][]porcupine.Operation{}
	for _, op := range history {
		in := op.Input.(deviceagent.Input)
		if in.Op != deviceagent.Capacity {
			if len(in.Resources) > 0 {
				g := root(in.Resources[0])
				groups[g] = append(groups[g], op)
			}
			continue
		}
		for _, g := range readGroups(in, root) {
			groups[g] = append(groups[g], project(op, g, root))
		}
	}
	names := slices.Sorted(maps.Keys(groups))
	out := make([][]porcupine.Operation, 0, len(names))
	for _, g := range names {
		out = append(out, groups[g])
	}
	return out
}

// readGroups lists the groups a capacity read touches, in order.
func readGroups(in deviceagent.Input, root func(string) string) []string {
	var gs []string
	for _, r := range in.Resources {
		if g := root(r); !slices.Contains(gs, g) {
			gs = append(gs, g)
		}
	}
	return gs
}

// project keeps the resources of group g in a capacity read.
func project(op porcupine.Operation, g string, root func(string) string) porcupine.Operation {
	in := op.Input.(deviceagent.Input)
	out := op.Output.(deviceagent.Output)
	keep := func(r string) bool { return root(r) == g }
	var pin deviceagent.Input
	pin.Op = in.Op
	for _, r := range in.Resources {
		if keep(r) {
			pin.Resources = append(pin.Resources, r)
		}
	}
	pout := deviceagent.Output{Unknown: out.Unknown}
	for _, c := range out.Counts {
		if keep(c.Resource) {
			pout.Counts = append(pout.Counts, c)
		}
	}
	op.Input, op.Output = pin, pout
	return op
}
