package admission

import (
	"fmt"
	"slices"

	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
)

// Options are the inputs of one admission besides the pod.
type Options struct {
	// OtherReasons are failures of the predicates the core does not
	// evaluate itself (node affinity, node name, host ports, an untolerated
	// NoExecute taint), as the caller found them, in upstream's order. They
	// follow the insufficient-resource reasons, as in upstream's
	// AdmissionCheck. A critical pod with any of them is not admitted and
	// preempts nothing.
	OtherReasons []*preemption.PredicateFailure
}

// StepKind says what a Step asks of the caller.
type StepKind int

// Step kinds.
const (
	// StepAllocate: make the Allocate RPCs of Step.Plan, then call
	// Attempt.Allocated.
	StepAllocate StepKind = iota + 1
	// StepKill: kill the pods of Step.Evictions in order, then call
	// Attempt.Killed with each kill's error.
	StepKill
	// StepDone: Step.Result is the decision; the node reflects it.
	StepDone
)

// Step is the work an Attempt needs next.
type Step struct {
	Kind      StepKind
	Plan      *dm.Plan
	Evictions []preemption.Eviction
	Result    *Result
}

// Result is the node's decision on one pod.
type Result struct {
	Pod      *pod.Pod
	Admitted bool
	// Reason and Message are the rejected pod's status reason and message,
	// upstream's: OutOfcpu and "Node didn't have enough resource: ...", a
	// predicate's name and "Predicate ... failed: ...", or
	// UnexpectedAdmissionError for a failed device allocation or a failed
	// preemption. Empty when admitted.
	Reason, Message string
	// FitReasons are what the predicates found before preemption: the
	// insufficient resources, then Options.OtherReasons. Empty when the pod
	// fit, or when device allocation failed first.
	FitReasons []preemption.Reason
	// Requirements are the amounts preemption had to free, if it ran.
	Requirements preemption.Requirements
	// Evicted are the victims killed; KillFailed those whose kill failed
	// and which stay on the node, terminating.
	Evicted    []*pod.Pod
	KillFailed []preemption.KillFailure
	// Preemptions counts kubelet_preemptions by preemption_signal.
	Preemptions map[string]int
}

// Attempt is the admission of one pod in progress.
type Attempt struct {
	node       *Node
	pod        *pod.Pod
	opts       Options
	containers []string
	next       int
	plan       *dm.Plan
	decision   *preemption.Decision
	fitReasons []preemption.Reason
	result     *Result
	// callerActive are the caller's active pods (SetActivePods); nil means
	// the node's own.
	callerActive []string
}

// Begin starts the admission of p. The error is for bad input only: a
// malformed pod, a pod already on the node, or another admission still in
// progress. A decision is reached through Next.
func (n *Node) Begin(p *pod.Pod, opts Options) (*Attempt, error) {
	if n.open != nil {
		return nil, fmt.Errorf("pod %q: the admission of pod %q is in progress", podUID(p), n.open.pod.UID)
	}
	if err := n.checkNew(p, "pod"); err != nil {
		return nil, err
	}
	if len(opts.OtherReasons) > preemption.MaxReasons {
		return nil, fmt.Errorf("otherReasons: %d reasons exceed the bound of %d", len(opts.OtherReasons), preemption.MaxReasons)
	}
	for i, r := range opts.OtherReasons {
		if r == nil {
			return nil, fmt.Errorf("otherReasons[%d]: must not be nil", i)
		}
	}
	a := &Attempt{node: n, pod: p, opts: opts}
	if n.devices != nil {
		// The topology manager's handler allocates init containers first,
		// in order, then app containers.
		for _, c := range p.InitContainers {
			a.containers = append(a.containers, c.Name)
		}
		for _, c := range p.Containers {
			a.containers = append(a.containers, c.Name)
		}
	}
	n.open = a
	return a, nil
}

// Next returns the work the attempt needs now. Calling it again before
// answering returns the same step.
func (a *Attempt) Next() Step {
	for {
		switch {
		case a.result != nil:
			return Step{Kind: StepDone, Result: a.result}
		case a.plan != nil:
			return Step{Kind: StepAllocate, Plan: a.plan}
		case a.decision != nil:
			return Step{Kind: StepKill, Evictions: a.decision.Evictions()}
		}
		a.advance()
	}
}

// advance moves to the next point where the caller must act or the
// decision is made.
func (a *Attempt) advance() {
	devices := a.node.devices
	for a.next < len(a.containers) {
		plan, err := devices.PlanContainer(dm.PlanInput{Pod: a.pod, Container: a.containers[a.next], ActivePods: a.activeUIDs()})
		if err != nil {
			a.deviceFailure(err)
			return
		}
		if len(plan.Requests) > 0 {
			a.plan = plan
			return
		}
		// Nothing to ask a plugin; committing still records the container
		// for the reuse of init container devices.
		if err := devices.Commit(plan.ID, nil); err != nil {
			a.deviceFailure(err)
			return
		}
		a.next++
	}
	a.predicates()
}

// SetActivePods gives the attempt the caller's own active pods, by UID,
// for the device manager's garbage collection, which frees the devices of
// every pod not among them (upstream the device manager calls the
// kubelet's GetActivePods: the pod manager's pods that are not
// terminated). It applies from the next device plan of the attempt on, so
// a caller whose view changes while an Allocate answer is pending calls it
// again before Next. The pod being admitted always counts as active, listed
// or not, as upstream's pod manager holds it before its admission. nil
// restores the default, the node's own active pods; an empty list keeps
// the devices of the pod being admitted only.
//
// Once the attempt is decided (an Allocated answer may decide it) the list
// has no plan left to apply to, so a caller that sets it before every Next
// needs no test of its own. The error is for bad input, which changes
// nothing: an empty or repeated UID, or more than MaxPods pods. UIDs the
// node does not know are allowed: the caller's view is its own.
func (a *Attempt) SetActivePods(uids []string) error {
	if len(uids) > MaxPods {
		return fmt.Errorf("activePods: %d pods exceed the bound of %d", len(uids), MaxPods)
	}
	seen := make(map[string]bool, len(uids))
	for i, uid := range uids {
		switch {
		case uid == "":
			return fmt.Errorf("activePods[%d]: a pod UID must not be empty", i)
		case seen[uid]:
			return fmt.Errorf("activePods[%d]: pod %q is listed twice", i, uid)
		}
		seen[uid] = true
	}
	if uids == nil {
		a.callerActive = nil
		return nil
	}
	a.callerActive = append(make([]string, 0, len(uids)), uids...)
	return nil
}

// activeUIDs are the pods whose devices the device manager keeps: the
// caller's active pods if it gave them, else the node's, and the pod being
// admitted, whose earlier containers already hold devices.
func (a *Attempt) activeUIDs() []string {
	if a.callerActive != nil {
		uids := a.callerActive
		if !slices.Contains(uids, a.pod.UID) {
			uids = append(slices.Clip(uids), a.pod.UID)
		}
		return uids
	}
	uids := make([]string, 0, len(a.node.active)+1)
	for _, e := range a.node.active {
		uids = append(uids, e.pod.UID)
	}
	return append(uids, a.pod.UID)
}

// Allocated reports the Allocate RPCs of the pending plan: answers holds
// each request's container responses in plan order, or rpcErr the first
// RPC error. A failed RPC or a malformed answer rejects the pod; the error
// return is for a call out of turn or a wrong number of answers.
func (a *Attempt) Allocated(answers [][]allocresp.ContainerAllocateResponse, rpcErr error) error {
	if a.plan == nil {
		return fmt.Errorf("pod %q: no allocation is pending", a.pod.UID)
	}
	id := a.plan.ID
	a.plan = nil
	var err error
	if rpcErr != nil {
		err = a.node.devices.Abort(id, rpcErr)
	} else {
		err = a.node.devices.Commit(id, answers)
	}
	if err != nil {
		a.deviceFailure(err)
		if k, _ := dm.KindOf(err); k == dm.KindInvalidInput {
			return err
		}
		return nil
	}
	a.next++
	return nil
}

// Killed reports the kills of the pending evictions: errs[i] is the result
// of killing the i-th victim.
func (a *Attempt) Killed(errs []error) error {
	if a.decision == nil {
		return fmt.Errorf("pod %q: no kill is pending", a.pod.UID)
	}
	out, err := a.decision.Complete(errs)
	if err != nil {
		return err
	}
	d := *a.decision
	a.decision = nil
	a.finish(d, out)
	return nil
}

// deviceFailure rejects the pod as the topology manager's admit handler
// does when the device manager's Allocate fails. Devices the pod's earlier
// containers got stay recorded until the next admission's garbage
// collection, as upstream.
func (a *Attempt) deviceFailure(err error) {
	a.done(&Result{Pod: a.pod, Reason: dm.AdmissionFailureReason, Message: dm.AdmissionFailureMessage(err)})
}

// predicates runs the resource fit and, when it fails, the critical pod
// preemption (upstream predicateAdmitHandler.Admit).
func (a *Attempt) predicates() {
	n := a.node
	allocatable := n.allocatable
	if n.devices != nil && a.holdsDevices() {
		// UpdatePluginResources: for a pod holding devices, allocatable of
		// each device resource is raised to at least the devices allocated,
		// so the devices just handed out cannot make it look short.
		allocatable = allocatable.Clone()
		for r, ids := range n.devices.Allocated() {
			name := pod.ResourceName(r)
			if q, ok := allocatable[name]; !ok || q < int64(len(ids)) {
				allocatable[name] = int64(len(ids))
			}
		}
	}
	reasons := fit(allocatable, n.usedLists(), requests(allocatable, a.pod))
	for _, r := range a.opts.OtherReasons {
		reasons = append(reasons, r)
	}
	a.fitReasons = reasons
	if len(reasons) == 0 {
		a.done(&Result{Pod: a.pod, Admitted: true})
		return
	}
	d, err := preemption.HandleAdmissionFailure(a.pod, reasons, n.activePods())
	if err != nil {
		// Begin validated every input, so this is a bug in the core; the
		// pod is rejected rather than admitted on a guess.
		a.done(&Result{Pod: a.pod, Reason: UnexpectedAdmissionError, Message: err.Error(), FitReasons: reasons})
		return
	}
	if len(d.Victims) > 0 {
		a.decision = &d
		return
	}
	out, _ := d.Complete(nil)
	a.finish(d, out)
}

func (a *Attempt) holdsDevices() bool {
	for _, h := range a.node.devices.Holdings() {
		if h.PodUID == a.pod.UID {
			return true
		}
	}
	return false
}

// finish turns preemption's outcome into the decision and applies the
// kills to the node: killed victims leave it, victims whose kill failed
// stay and are marked terminating.
func (a *Attempt) finish(d preemption.Decision, out preemption.Outcome) {
	r := &Result{Pod: a.pod, FitReasons: a.fitReasons, Requirements: d.Requirements,
		Evicted: out.Evicted, KillFailed: out.KillFailed, Preemptions: out.Preemptions}
	switch {
	case out.Err != nil:
		r.Reason = UnexpectedAdmissionError
		r.Message = fmt.Sprintf("Unexpected error while attempting to recover from admission failure: %v", out.Err)
	case len(d.Reasons) > 0:
		// Only the first reason is reported.
		r.Reason, r.Message = rejection(d.Reasons[0])
	default:
		r.Admitted = true
	}
	for _, v := range out.Evicted {
		for i, e := range a.node.active {
			if e.pod == v {
				a.node.active = append(a.node.active[:i], a.node.active[i+1:]...)
				break
			}
		}
	}
	for _, f := range out.KillFailed {
		if e := a.node.find(f.Pod.UID); e != nil {
			e.terminating = true
		}
	}
	a.done(r)
}

// done records the decision, adds an admitted pod to the node and closes
// the attempt.
func (a *Attempt) done(r *Result) {
	a.result = r
	if r.Admitted {
		a.node.add(a.pod)
	}
	a.node.open = nil
}

// Drive runs an attempt to its decision, calling allocate for each
// container's Allocate RPCs and kill for each victim, in order. allocate
// may be nil for a node without a device manager.
func Drive(a *Attempt, allocate func(*dm.Plan) ([][]allocresp.ContainerAllocateResponse, error), kill func(preemption.Eviction) error) (*Result, error) {
	for {
		step := a.Next()
		switch step.Kind {
		case StepDone:
			return step.Result, nil
		case StepAllocate:
			if allocate == nil {
				return nil, fmt.Errorf("pod %q: devices to allocate but no allocate function", a.pod.UID)
			}
			answers, err := allocate(step.Plan)
			if err := a.Allocated(answers, err); err != nil {
				return nil, err
			}
		case StepKill:
			if kill == nil {
				return nil, fmt.Errorf("pod %q: victims to kill but no kill function", a.pod.UID)
			}
			errs := make([]error, len(step.Evictions))
			for i, e := range step.Evictions {
				errs[i] = kill(e)
			}
			if err := a.Killed(errs); err != nil {
				return nil, err
			}
		}
	}
}
