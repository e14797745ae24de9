package frontier

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"
)

// deadlineEvery is how many search steps pass between two reads of the
// clock (and of whether another partition was found illegal): reading it
// at every step would cost more than some steps.
const deadlineEvery = 1024

// Filters marks the operations of a partition that are filters wherever
// the search may place them: in every set of states the search can reach
// while the operation is still to be placed and may be placed next, its
// step keeps some of the states and makes no new one. The search places
// such an operation for good once it leaves the states as they are (see
// search.run). nil marks none, and the search is then porcupine's but for
// the order of its tries. A wrong mark can turn a linearizable history
// into an illegal one, never the reverse.
type Filters func(partition []porcupine.Operation) []bool

// Check reports whether history is linearizable with respect to model:
// porcupine.Ok, porcupine.Illegal, or porcupine.Unknown when the search
// did not end within timeout (no limit when timeout is not positive). It
// answers what porcupine.CheckOperationsTimeout(model.ToModel(), history,
// timeout) answers: the same partitions (model.Partition, when set), the
// same closed intervals (operations whose times touch overlap), the same
// power-set reading of a nondeterministic step. model.Hash, when set,
// must give Equal states equal hashes (as porcupine requires); the search
// then calls Equal only on states whose hashes agree. The Describe
// functions are not used.
func Check(model porcupine.NondeterministicModel, filters Filters, history []porcupine.Operation, timeout time.Duration) porcupine.CheckResult {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	partitions := [][]porcupine.Operation{history}
	if model.Partition != nil {
		partitions = model.Partition(history)
	}
	equal := model.Equal
	if equal == nil {
		equal = func(a, b any) bool { return a == b }
	}
	hash := model.Hash
	if hash == nil {
		// Every state collides, and Equal decides alone.
		hash = func(any) uint64 { return 0 }
	}
	step := model.Step
	if step == nil {
		step = func(state, in, out any) []any { return model.StepContext(context.Background(), state, in, out) }
	}
	// The partitions are independent: each is searched on a goroutine of
	// its own, as porcupine does, and the first illegal one stops the rest.
	verdicts := make([]porcupine.CheckResult, len(partitions))
	var illegal atomic.Bool
	var wg sync.WaitGroup
	for i, p := range partitions {
		wg.Go(func() {
			s := newSearch(model.Init, step, equal, hash, p)
			if filters != nil {
				marks := filters(p)
				s.filter = make([]bool, len(p))
				for id, at := range s.order {
					s.filter[id] = marks[at]
				}
			}
			verdicts[i] = s.run(deadline, &illegal)
			if verdicts[i] == porcupine.Illegal {
				illegal.Store(true)
			}
		})
	}
	wg.Wait()
	switch {
	case slices.Contains(verdicts, porcupine.Illegal):
		return porcupine.Illegal
	case slices.Contains(verdicts, porcupine.Unknown):
		return porcupine.Unknown
	}
	return porcupine.Ok
}

// search is the check of one partition. Operations are numbered in call
// order; the calls and returns are nodes of a doubly linked list in time
// order, from which a linearized operation's two nodes are unlinked and
// into which backtracking links them again (porcupine's lift and unlift).
type search struct {
	init  func() []any
	model func(state, in, out any) []any // the model's step
	equal func(a, b any) bool
	hash  func(state any) uint64
	ops   []porcupine.Operation // in call order
	order []int                 // the index in the partition of each operation
	// filter marks the operations that Filters marked, if any.
	filter []bool

	// List nodes: head is 0, tail is len(next)-1, the events lie between.
	next, prev []int32
	isCall     []bool
	opOf       []int32 // the operation a node is the call or return of
	callNode   []int32 // the call node of each operation
	returnNode []int32
	// returnRank orders the operations by return time, then call order:
	// the order in which run tries candidates.
	returnRank []int32

	memo    map[uint64][]memoEntry
	scratch []int32 // the frontier being looked up
}

// memoEntry is one visited pair: a set of linearized operations, named by
// its frontier, and the set of states the model may be in after them.
type memoEntry struct {
	latest int32
	holes  []int32
	states stateSet
}

// stateSet is a set of states, each once, with each state's hash and a
// hash of the set that does not depend on the states' order.
type stateSet struct {
	states []any
	hashes []uint64
	key    uint64
}

// frame is one linearized operation on the search's stack, with what to
// restore when it is taken back.
type frame struct {
	op     int32
	states stateSet
	latest int32
	// forGood marks an operation that left the states as they were: see
	// run.
	forGood bool
}

func newSearch(init func() []any, step func(state, in, out any) []any, equal func(a, b any) bool, hash func(any) uint64, history []porcupine.Operation) *search {
	n := len(history)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	// Stable by call time, so that equal calls keep the history's order.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(history[a].Call, history[b].Call) })
	s := &search{init: init, model: step, equal: equal, hash: hash, ops: make([]porcupine.Operation, n), memo: map[uint64][]memoEntry{}}
	for id, i := range order {
		s.ops[id] = history[i]
	}
	s.order = order

	// Events in time order; at equal times a call comes before a return,
	// so that operations whose times touch overlap, as in porcupine; calls
	// at equal times stay in call order, so the list's calls are in
	// operation order, which frontierOf relies on.
	type event struct {
		time   int64
		isCall bool
		op     int32
	}
	events := make([]event, 0, 2*n)
	for id, op := range s.ops {
		events = append(events, event{op.Call, true, int32(id)}, event{op.Return, false, int32(id)})
	}
	slices.SortFunc(events, func(a, b event) int {
		if c := cmp.Compare(a.time, b.time); c != 0 {
			return c
		}
		if a.isCall != b.isCall {
			if a.isCall {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.op, b.op)
	})
	nodes := 2*n + 2
	s.next, s.prev = make([]int32, nodes), make([]int32, nodes)
	s.isCall, s.opOf = make([]bool, nodes), make([]int32, nodes)
	s.callNode, s.returnNode = make([]int32, n), make([]int32, n)
	for i := range int32(nodes) {
		s.next[i], s.prev[i] = i+1, i-1
	}
	for i, e := range events {
		node := int32(i + 1)
		s.isCall[node], s.opOf[node] = e.isCall, e.op
		if e.isCall {
			s.callNode[e.op] = node
		} else {
			s.returnNode[e.op] = node
		}
	}
	byReturn := make([]int32, n)
	for i := range byReturn {
		byReturn[i] = int32(i)
	}
	slices.SortStableFunc(byReturn, func(a, b int32) int { return cmp.Compare(s.ops[a].Return, s.ops[b].Return) })
	s.returnRank = make([]int32, n)
	for rank, op := range byReturn {
		s.returnRank[op] = int32(rank)
	}
	return s
}

func (s *search) tail() int32 { return int32(len(s.next) - 1) }

func (s *search) unlink(node int32) {
	s.next[s.prev[node]] = s.next[node]
	s.prev[s.next[node]] = s.prev[node]
}

// relink undoes unlink; nodes are relinked in the reverse order of their
// unlinking, so each one's neighbours are as they were.
func (s *search) relink(node int32) {
	s.next[s.prev[node]] = node
	s.prev[s.next[node]] = node
}

func (s *search) lift(op int32) {
	s.unlink(s.callNode[op])
	s.unlink(s.returnNode[op])
}

func (s *search) unlift(op int32) {
	s.relink(s.returnNode[op])
	s.relink(s.callNode[op])
}

// run searches for a linearization of the partition. The candidates at
// each point are porcupine's: the calls before the first return of an
// operation not linearized yet (any later call comes after that
// operation). Two things differ from porcupine, and neither changes the
// verdict.
//
// Porcupine tries the candidates in call order; run tries them in the
// order of their returns, earliest first. Either order tries every
// candidate before it backtracks. But an operation that takes effect late
// in a long interval (a snapshot the agent shows just before the owner's
// wait ends) is then tried after the short operations around it, where it
// usually belongs, instead of first, where every overlapping read that
// saw the old devices makes the search take it back.
//
// A candidate marked a filter (see Filters) that leaves the set of states
// as it was is placed for good: if the search cannot finish with it placed
// here, it cannot finish from here at all, so backtracking does not try
// the other candidates in its place but goes one step further back. Why:
// take any way to finish that places it later, at a set of states X. Move
// it to here. It may come before every operation still to place, since
// none of them returned before it was called; here it changes nothing, so
// every step up to its old place meets the same states; there, without
// it, the states are X instead of its step from X, a subset of X (it is a
// filter); and a step from more states leaves at least the states it left
// before, so no later step fails. Without this a window of long
// operations (a hung Allocate, a slow snapshot) makes the search try every
// place among them for every short read and refusal in the window.
func (s *search) run(deadline time.Time, stop *atomic.Bool) porcupine.CheckResult {
	states := s.merge(s.init())
	latest := int32(-1) // the latest linearized operation, in call order
	var stack []frame
	tried := int32(-1) // candidates up to this return rank have been tried
	// backtrack takes back the operations placed for good on top of the
	// stack and the one below them, and reports whether there was one.
	backtrack := func() bool {
		for len(stack) > 0 {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			states, latest = top.states, top.latest
			s.unlift(top.op)
			tried = s.returnRank[top.op]
			if !top.forGood {
				return true
			}
		}
		return false
	}
	for steps := 1; s.next[0] != s.tail(); steps++ {
		if steps%deadlineEvery == 0 && (stop.Load() || !deadline.IsZero() && time.Now().After(deadline)) {
			return porcupine.Unknown
		}
		op := s.nextCandidate(tried)
		if op < 0 {
			// Every candidate failed or leads nowhere new.
			if !backtrack() {
				return porcupine.Illegal
			}
			continue
		}
		next := s.step(states, s.ops[op])
		if len(next.states) == 0 {
			tried = s.returnRank[op]
			continue
		}
		forGood := s.filter != nil && s.filter[op] && s.sameStates(next, states)
		if !s.remember(max(latest, op), op, next) {
			if forGood && !backtrack() {
				return porcupine.Illegal
			}
			if !forGood {
				tried = s.returnRank[op]
			}
			continue
		}
		stack = append(stack, frame{op: op, states: states, latest: latest, forGood: forGood})
		states, latest = next, max(latest, op)
		s.lift(op)
		tried = -1
	}
	return porcupine.Ok
}

// nextCandidate is the candidate with the earliest return after rank
// tried, or -1. The list holds at least one return while it is not
// empty, so the walk ends there.
func (s *search) nextCandidate(tried int32) int32 {
	best := int32(-1)
	for node := s.next[0]; s.isCall[node]; node = s.next[node] {
		op := s.opOf[node]
		if r := s.returnRank[op]; r > tried && (best < 0 || r < s.returnRank[best]) {
			best = op
		}
	}
	return best
}

// step is the power-set step: every state any current state may step to
// when op answers its output, each once.
func (s *search) step(states stateSet, op porcupine.Operation) stateSet {
	var next []any
	for _, st := range states.states {
		next = append(next, s.model(st, op.Input, op.Output)...)
	}
	return s.merge(next)
}

// merge makes a set of states, calling Equal only on states whose hashes
// agree.
func (s *search) merge(states []any) stateSet {
	var set stateSet
	for _, st := range states {
		h := s.hash(st)
		if set.index(st, h, s.equal) < 0 {
			set.states, set.hashes = append(set.states, st), append(set.hashes, h)
			set.key += mix(h)
		}
	}
	return set
}

// index is the place of st, whose hash is h, in the set, or -1.
func (set stateSet) index(st any, h uint64, equal func(a, b any) bool) int {
	for i, other := range set.hashes {
		if other == h && equal(st, set.states[i]) {
			return i
		}
	}
	return -1
}

// remember records that the linearized operations, once op joins them,
// lead to states, and reports whether that pair is new. latest is the
// latest operation of the set with op.
func (s *search) remember(latest, op int32, states stateSet) bool {
	holes := s.frontierOf(latest, op)
	key := mix(hashFrontier(latest, holes) ^ states.key)
	bucket := s.memo[key]
	for _, e := range bucket {
		if e.latest == latest && slices.Equal(e.holes, holes) && s.sameStates(e.states, states) {
			return false
		}
	}
	s.memo[key] = append(bucket, memoEntry{latest: latest, holes: slices.Clone(holes), states: states})
	return true
}

// frontierOf lists the holes of the linearized set once op joins it: the
// operations called before latest that are not linearized. They are the
// calls still in the list before latest's place, other than op's, and the
// list holds calls in operation order, so the walk stops at the first call
// at or after latest. A hole's return comes after latest's call (it was
// not linearized when latest was, and the search linearizes no call after
// an unlinearized return), so the walk meets no returns on the way: its
// length is the number of holes, at most the operations pending at one
// instant.
func (s *search) frontierOf(latest, op int32) []int32 {
	holes := s.scratch[:0]
	for node := s.next[0]; node != s.tail(); node = s.next[node] {
		if !s.isCall[node] {
			continue
		}
		id := s.opOf[node]
		if id >= latest {
			break
		}
		if id != op {
			holes = append(holes, id)
		}
	}
	s.scratch = holes
	return holes
}

// hashFrontier mixes a frontier into a memo key (the finalizer of
// SplitMix64 after each element).
func hashFrontier(latest int32, holes []int32) uint64 {
	h := mix(uint64(uint32(latest)))
	for _, hole := range holes {
		h = mix(h ^ uint64(uint32(hole)))
	}
	return h
}

func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// sameStates compares two merged state sets, as porcupine's power-set
// model does: each holds every state once, so equal sizes and one
// inclusion suffice. Sets whose keys differ cannot be equal, since equal
// states hash alike.
func (s *search) sameStates(a, b stateSet) bool {
	if len(a.states) != len(b.states) || a.key != b.key {
		return false
	}
	for i, x := range a.states {
		if b.index(x, a.hashes[i], s.equal) < 0 {
			return false
		}
	}
	return true
}
