package linearizability

import (
	"maps"
	"math"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/nodeproof/nodeproof/models/deviceagent"
)

// Never is the return time of an operation whose outcome is unknown: it may
// take effect at any time after its call, or not at all.
const Never = int64(math.MaxInt64)

// Model is porcupine's view of models/deviceagent, starting from init. The
// model is nondeterministic only for operations of unknown outcome;
// porcupine's power-set construction tracks both possibilities.
func Model(init deviceagent.State) porcupine.Model {
	nondeterministic := porcupine.NondeterministicModel{
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
		DescribeOperation: func(in, out any) string {
			return deviceagent.Describe(in.(deviceagent.Input), out.(deviceagent.Output))
		},
		DescribeState: func(s any) string { return s.(deviceagent.State).String() },
	}
	return nondeterministic.ToModel()
}

// Check splits history and checks it, bounded by timeout.
func Check(init deviceagent.State, history []porcupine.Operation, timeout time.Duration) porcupine.CheckResult {
	return porcupine.CheckOperationsTimeout(Model(init), Split(history), timeout)
}

// CheckVerbose is Check that also returns what porcupine's visualization
// needs. Recording the longest partial linearizations costs time that grows
// with the square of a partition's length, so Check is the one to time.
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
