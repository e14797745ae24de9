package preemption

import (
	"fmt"

	"github.com/nodeproof/nodeproof/core/pod"
)

// Texts a preempted pod gets (pkg/kubelet/preemption and pkg/kubelet/events).
const (
	// Message is the victim's status message and its event's message.
	Message = "Preempted in order to admit critical pod"
	// StatusReason is the victim's status reason and its event's reason
	// (events.PreemptContainer).
	StatusReason = "Preempting"
	// DisruptionMessage is the message of the DisruptionTarget condition.
	DisruptionMessage = "Pod was preempted by Kubelet to accommodate a critical pod."
	// ConditionDisruptionTarget and ReasonTerminationByKubelet are the
	// condition's type and reason; v1.36 always adds it (the
	// PodDisruptionConditions gate is GA and gone).
	ConditionDisruptionTarget  = "DisruptionTarget"
	ReasonTerminationByKubelet = "TerminationByKubelet"
	// EventTypeWarning is the type of the event recorded on each victim.
	EventTypeWarning = "Warning"
)

// Decision is what HandleAdmissionFailure decides before anything is killed.
type Decision struct {
	// Reasons are the failure reasons that still stand: all of them,
	// unchanged, for a pod that is not critical; only the non-resource ones
	// when there are any, since preemption cannot cure those and a critical
	// pod is never turned down for resources; none otherwise.
	Reasons []Reason
	// Requirements are the amounts to free, one per insufficient-resource
	// reason in reason order. Empty unless preemption was attempted.
	Requirements Requirements
	// Victims are the pods to kill, in the order to kill them: the
	// BestEffort ones, then Burstable, then Guaranteed.
	Victims []*pod.Pod
	// Err is upstream's error when no set of pods frees enough; the
	// admission then fails with UnexpectedAdmissionError.
	Err error
}

// Eviction is one kill the caller must perform: record Event on the pod,
// then kill it with upstream's killPodFunc arguments Evict and
// GracePeriodOverride, giving it Status.
type Eviction struct {
	Pod *pod.Pod
	// Evict is killPodFunc's isEvicted: always true, a preempted pod is
	// evicted.
	Evict bool
	// GracePeriodOverride is killPodFunc's gracePeriodOverride: always nil,
	// the pod's own termination grace period applies.
	GracePeriodOverride *int64
	Status              Status
	Event               Event
}

// Status is the pod status a preempted pod is given.
type Status struct {
	Phase      pod.Phase
	Reason     string
	Message    string
	Conditions []Condition
}

// Condition is a pod condition.
type Condition struct {
	Type, Status, Reason, Message string
}

// Event is a Kubernetes event recorded on the victim.
type Event struct {
	Type, Reason, Message string
}

// Evictions lists the kills the decision asks for, in order.
func (d Decision) Evictions() []Eviction {
	out := make([]Eviction, len(d.Victims))
	for i, v := range d.Victims {
		out[i] = Eviction{
			Pod:   v,
			Evict: true,
			Status: Status{
				Phase:   pod.Failed,
				Reason:  StatusReason,
				Message: Message,
				Conditions: []Condition{{
					Type: ConditionDisruptionTarget, Status: "True",
					Reason: ReasonTerminationByKubelet, Message: DisruptionMessage,
				}},
			},
			Event: Event{Type: EventTypeWarning, Reason: StatusReason, Message: Message},
		}
	}
	return out
}

// KillFailure is a victim whose kill failed. It stays on the node,
// terminating; the kubelet retries the kill in later sync loops.
type KillFailure struct {
	Pod *pod.Pod
	Err error
}

// Outcome is the decision with the kills' results.
type Outcome struct {
	// Admit is true when the critical pod is admitted: no reason stands and
	// there is no error.
	Admit bool
	// Err is the admission error, if any.
	Err error
	// Evicted are the victims killed, in kill order.
	Evicted []*pod.Pod
	// KillFailed are the victims whose kill failed, in kill order.
	KillFailed []KillFailure
	// Preemptions counts the kubelet_preemptions metric by its
	// preemption_signal label: the resource of the first requirement, once
	// per victim killed.
	Preemptions map[string]int
}

// Complete takes the kill results, killErrs[i] for Victims[i], and returns
// the outcome. A failed kill is skipped, as upstream since PR #78493
// (#78405): the critical pod is still admitted, so a static pod is not
// turned away because some other pod was slow to die. Complete is pure; it
// may be called again with the same results.
func (d Decision) Complete(killErrs []error) (Outcome, error) {
	if len(killErrs) != len(d.Victims) {
		return Outcome{}, fmt.Errorf("killErrs: %d results for %d victims", len(killErrs), len(d.Victims))
	}
	out := Outcome{Err: d.Err, Preemptions: map[string]int{}}
	signal := ""
	if len(d.Requirements) > 0 {
		signal = string(d.Requirements[0].Resource)
	}
	for i, v := range d.Victims {
		if err := killErrs[i]; err != nil {
			out.KillFailed = append(out.KillFailed, KillFailure{Pod: v, Err: err})
			continue
		}
		out.Evicted = append(out.Evicted, v)
		out.Preemptions[signal]++
	}
	out.Admit = len(d.Reasons) == 0 && out.Err == nil
	return out, nil
}

// HandleAdmissionFailure decides what to do about a pod the admission
// predicates turned down for reasons (upstream
// CriticalPodAdmissionHandler.HandleAdmissionFailure up to the kills).
// activePods are the pods on the node, in the kubelet's order. The error is
// for bad input only; upstream's failures are in Decision.Err.
func HandleAdmissionFailure(preemptor *pod.Pod, reasons []Reason, activePods []*pod.Pod) (Decision, error) {
	if err := ValidatePod(preemptor, "preemptor"); err != nil {
		return Decision{}, err
	}
	if err := validateReasons(reasons); err != nil {
		return Decision{}, err
	}
	if len(activePods) > MaxActivePods {
		return Decision{}, fmt.Errorf("activePods: %d pods exceed the bound of %d", len(activePods), MaxActivePods)
	}
	seen := make(map[string]int, len(activePods))
	for i, p := range activePods {
		if err := validatePod(p, func() string { return fmt.Sprintf("activePods[%d]", i) }); err != nil {
			return Decision{}, err
		}
		if j, dup := seen[p.UID]; dup {
			return Decision{}, fmt.Errorf("activePods[%d].uid: %q is also activePods[%d]", i, p.UID, j)
		}
		seen[p.UID] = i
	}

	if !preemptor.IsCritical() {
		return Decision{Reasons: reasons}, nil
	}
	var nonResource []Reason
	var reqs Requirements
	for _, r := range reasons {
		if ir, ok := r.(*InsufficientResource); ok {
			reqs = append(reqs, Requirement{Resource: ir.ResourceName, Quantity: ir.InsufficientAmount()})
		} else {
			nonResource = append(nonResource, r)
		}
	}
	if len(nonResource) > 0 {
		// Evicting pods would not make the pod fit, so nothing is evicted.
		return Decision{Reasons: nonResource}, nil
	}
	victims, err := podsToPreempt(preemptor, activePods, reqs)
	if err != nil {
		return Decision{Requirements: reqs, Err: fmt.Errorf("preemption: error finding a set of pods to preempt: %v", err)}, nil
	}
	return Decision{Requirements: reqs, Victims: victims}, nil
}

// podsToPreempt chooses the victims (upstream getPodsToPreempt). Each QoS
// class is asked only for what the classes below it cannot free: the
// Guaranteed pods needed even if every BestEffort and Burstable pod went,
// then the Burstable pods needed even if every BestEffort pod and the chosen
// Guaranteed ones went, then the BestEffort pods still needed after the
// chosen Burstable and Guaranteed ones. Priority plays no part once a pod is
// preemptable (#135857).
func podsToPreempt(preemptor *pod.Pod, activePods []*pod.Pod, reqs Requirements) ([]*pod.Pod, error) {
	var bestEffort, burstable, guaranteed []*candidate
	for _, p := range activePods {
		if !Preemptable(preemptor, p) {
			continue
		}
		switch p.QOS() {
		case pod.BestEffort:
			bestEffort = append(bestEffort, newCandidate(p))
		case pod.Burstable:
			burstable = append(burstable, newCandidate(p))
		case pod.Guaranteed:
			guaranteed = append(guaranteed, newCandidate(p))
		}
	}
	if left := reqs.subtract(concat(bestEffort, burstable, guaranteed)...); len(left) > 0 {
		return nil, fmt.Errorf("no set of running pods found to reclaim resources: %v", left.String())
	}
	guaranteedToEvict, err := byDistance(guaranteed, reqs.subtract(concat(bestEffort, burstable)...))
	if err != nil {
		return nil, err
	}
	burstableToEvict, err := byDistance(burstable, reqs.subtract(concat(bestEffort, guaranteedToEvict)...))
	if err != nil {
		return nil, err
	}
	bestEffortToEvict, err := byDistance(bestEffort, reqs.subtract(concat(burstableToEvict, guaranteedToEvict)...))
	if err != nil {
		return nil, err
	}
	var victims []*pod.Pod
	for _, c := range concat(bestEffortToEvict, burstableToEvict, guaranteedToEvict) {
		victims = append(victims, c.pod)
	}
	return victims, nil
}

// byDistance picks pods greedily until reqs are met (upstream
// getPodsToPreemptByDistance): each round takes the pod closest to the
// remaining requirements, the smaller one on a tie, then moves the last
// pod into its place. That swap changes the scan order of later rounds, and
// with it which of several equal pods wins, so it is reproduced exactly.
func byDistance(pods []*candidate, reqs Requirements) ([]*candidate, error) {
	pods = append([]*candidate(nil), pods...)
	var evict []*candidate
	for len(reqs) > 0 {
		if len(pods) == 0 {
			return nil, fmt.Errorf("no set of running pods found to reclaim resources: %v", reqs.String())
		}
		// Every distance is at most len(reqs), so the first pod always
		// improves on this.
		best := float64(len(reqs) + 1)
		bestIdx := 0
		for i, c := range pods {
			d := reqs.distance(c)
			if d < best || (d == best && smallerResourceRequest(c, pods[bestIdx])) {
				best = d
				bestIdx = i
			}
		}
		reqs = reqs.subtract(pods[bestIdx])
		evict = append(evict, pods[bestIdx])
		pods[bestIdx] = pods[len(pods)-1]
		pods = pods[:len(pods)-1]
	}
	return evict, nil
}

func concat(lists ...[]*candidate) []*candidate {
	var all []*candidate
	for _, l := range lists {
		all = append(all, l...)
	}
	return all
}
