package admissioncheck

import (
	"fmt"
	"strings"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
	model "github.com/nodeproof/nodeproof/models/preemption"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// PreemptionCase is one preemption decided by a system under test (a
// Preempter), the kills' results, and the model's view of the same inputs.
//
// Every system under test fills the inputs, Victims, Err, KillErrs and
// Evicted; those, and what the model derives from the inputs alone, are all
// the contract checks read, so that they judge upstream's own handler as they
// judge core. Core is core/preemption's own record, which only core gives:
// the fidelity checks compare it with the model, the twin run and upstream's
// wording, and apply only to a case that has it.
type PreemptionCase struct {
	Preemptor *pod.Pod
	Active    []*pod.Pod
	Reasons   []preemption.Reason
	// Victims are the active pods the system under test chose to preempt
	// (the very pointers of Active), in kill order.
	Victims []*pod.Pod
	// Err is its error: no set of the pods it may preempt frees enough.
	Err error
	// KillErrs are the kills' results, one per victim.
	KillErrs []error
	// Evicted are the victims it counts as evicted, whose kills succeeded:
	// they leave the node.
	Evicted []*pod.Pod
	// Core is nil when another system under test (upstream's critical pod
	// admission handler, in the conformance module) decided the case.
	Core *CoreRecord

	mPreemptor  model.Pod
	mActive     []model.Pod
	critical    bool
	needs       []model.Need
	nonResource []preemption.Reason
	greedy      model.Result
	// preemptable are the indices of the active pods the model says the
	// preemptor may preempt.
	preemptable []int
}

// CoreRecord is what core/preemption says of a case beyond its victims and
// error: the whole decision (the reasons that stand, the requirements, the
// evictions), the decision of a second call on deep copies of the inputs,
// and the outcome of the kills.
type CoreRecord struct {
	Decision preemption.Decision
	Twin     preemption.Decision
	Outcome  preemption.Outcome
}

// Preempter is the preemption suite's system under test: the kubelet's
// critical pod admission handler, asked about preemptor, which failed
// admission for reasons on a node running active. It kills each victim it
// chooses, in order, with kill (victim is the victim's index among them),
// whose error it must treat as the kubelet's kill failing, and returns the
// case. Its error is the system refusing the input, never a decision's
// error (the case's Err). RunPreemption is core's; the conformance module
// has upstream's.
type Preempter func(preemptor *pod.Pod, active []*pod.Pod, reasons []preemption.Reason, kill func(victim int) error) (*PreemptionCase, error)

// RunPreemption is core's Preempter: it calls core/preemption on the
// inputs, twice (the second time on copies), kills each victim with kill,
// and returns the case. The error is core/preemption rejecting the input,
// which the generators never produce.
func RunPreemption(preemptor *pod.Pod, active []*pod.Pod, reasons []preemption.Reason, kill func(victim int) error) (*PreemptionCase, error) {
	c := &PreemptionCase{Preemptor: preemptor, Active: active, Reasons: reasons, Core: &CoreRecord{}}
	var err error
	if c.Core.Decision, err = preemption.HandleAdmissionFailure(preemptor, reasons, active); err != nil {
		return nil, fmt.Errorf("valid input rejected: %v", err)
	}
	copies := make([]*pod.Pod, len(active))
	for i, p := range active {
		copies[i] = ClonePod(p)
	}
	if c.Core.Twin, err = preemption.HandleAdmissionFailure(ClonePod(preemptor), cloneReasons(reasons), copies); err != nil {
		return nil, fmt.Errorf("valid input rejected on the second run: %v", err)
	}
	c.Victims, c.Err = c.Core.Decision.Victims, c.Core.Decision.Err
	c.KillErrs = make([]error, len(c.Victims))
	for i := range c.KillErrs {
		c.KillErrs[i] = kill(i)
	}
	if c.Core.Outcome, err = c.Core.Decision.Complete(c.KillErrs); err != nil {
		return nil, err
	}
	c.Evicted = c.Core.Outcome.Evicted
	c.model()
	return c, nil
}

// NewPreemptionCase is the case of a system under test other than core: its
// victims (pointers into active, in kill order), its error and the kills'
// results, one per victim. It has no CoreRecord, so only the contract checks
// apply to it.
func NewPreemptionCase(preemptor *pod.Pod, active []*pod.Pod, reasons []preemption.Reason, victims []*pod.Pod, killErrs []error, err error) *PreemptionCase {
	c := &PreemptionCase{Preemptor: preemptor, Active: active, Reasons: reasons, Victims: victims, Err: err, KillErrs: killErrs}
	for i, v := range victims {
		if i < len(killErrs) && killErrs[i] == nil {
			c.Evicted = append(c.Evicted, v)
		}
	}
	c.model()
	return c
}

func cloneReasons(reasons []preemption.Reason) []preemption.Reason {
	out := make([]preemption.Reason, len(reasons))
	for i, r := range reasons {
		switch r := r.(type) {
		case *preemption.InsufficientResource:
			c := *r
			out[i] = &c
		case *preemption.PredicateFailure:
			c := *r
			out[i] = &c
		}
	}
	return out
}

// model works out what the model says of the inputs.
func (c *PreemptionCase) model() {
	c.mPreemptor = ModelPod(c.Preemptor)
	c.mActive = ModelPods(c.Active)
	c.critical = model.Critical(c.mPreemptor)
	for _, r := range c.Reasons {
		if ir, ok := r.(*preemption.InsufficientResource); ok {
			c.needs = append(c.needs, model.Need{Resource: string(ir.ResourceName), Quantity: ir.Requested - (ir.Capacity - ir.Used)})
		} else {
			c.nonResource = append(c.nonResource, r)
		}
	}
	for i, p := range c.mActive {
		if model.MayPreempt(c.mPreemptor, p) {
			c.preemptable = append(c.preemptable, i)
		}
	}
	if c.preempts() {
		c.greedy = model.Greedy(c.mPreemptor, c.mActive, c.needs)
	}
}

// preempts says the case is one where preemption runs: a critical
// preemptor short of resources only.
func (c *PreemptionCase) preempts() bool { return c.critical && len(c.nonResource) == 0 }

// victimIndex finds each victim among the active pods.
func (c *PreemptionCase) victimIndex() ([]int, error) {
	var idx []int
	seen := map[int]bool{}
	for _, v := range c.Victims {
		found := -1
		for i, p := range c.Active {
			if p == v {
				found = i
			}
		}
		if found < 0 {
			return nil, fmt.Errorf("victim %q is not one of the active pods", v.UID)
		}
		if seen[found] {
			return nil, fmt.Errorf("victim %q is chosen twice", v.UID)
		}
		seen[found] = true
		idx = append(idx, found)
	}
	return idx, nil
}

func (c *PreemptionCase) podsAt(idx []int) []model.Pod {
	out := make([]model.Pod, len(idx))
	for i, j := range idx {
		out[i] = c.mActive[j]
	}
	return out
}

func (c *PreemptionCase) ofClass(classes ...string) []model.Pod {
	var out []model.Pod
	for _, i := range c.preemptable {
		for _, cl := range classes {
			if model.QoS(c.mActive[i]) == cl {
				out = append(out, c.mActive[i])
			}
		}
	}
	return out
}

func uidList(pods []*pod.Pod) string {
	var s []string
	for _, p := range pods {
		s = append(s, p.UID)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func reasonTexts(reasons []preemption.Reason) string {
	var s []string
	for _, r := range reasons {
		s = append(s, r.Error())
	}
	return "[" + strings.Join(s, "; ") + "]"
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func always(*PreemptionCase) bool { return true }

// fidelity makes a fidelity check apply only to a case core decided: it
// reads the CoreRecord, or compares with the model what only core must
// match.
func fidelity(applies func(*PreemptionCase) bool) func(*PreemptionCase) bool {
	return func(c *PreemptionCase) bool { return c.Core != nil && applies(c) }
}

// Preemption invariant IDs.
const (
	PRVictims       = "PR-VICTIMS"
	PRNonCritical   = "PR-NONCRITICAL"
	PRNonResource   = "PR-NONRESOURCE"
	PRPreemptable   = "PR-PREEMPTABLE"
	PRFrees         = "PR-FREES"
	PRErrorIff      = "PR-ERROR-IFF"
	PRQoSOrder      = "PR-QOS-ORDER"
	PRQoSLowest     = "PR-QOS-LOWEST"
	PR135857        = "PR-135857"
	PRKillSkipped   = "PR-KILL-SKIPPED"
	PRVictimStatus  = "PR-VICTIM-STATUS"
	PRModel         = "PR-MODEL"
	PRDeterministic = "PR-DETERMINISTIC"

	// Contract properties: what the Kubernetes documentation promises.
	PRCStaticCritical   = "PR-C-STATIC-CRITICAL"
	PRCGuaranteedLowest = "PR-C-GUARANTEED-LOWEST"
	PRCLowerPriority    = "PR-C-LOWER-PRIORITY"
)

// PreemptionChecks are the preemption invariants, sharpest first: a
// failure is attributed to the first statement it breaks, and the broad
// comparison with the model comes last. The fidelity checks apply only to
// a case with a CoreRecord; the contract checks, last, read only what every
// Preempter gives.
var PreemptionChecks = []verify.Check[*PreemptionCase]{
	{
		Property: verify.Property{
			ID:        PRVictims,
			Subsystem: "preemption",
			Kind:      verify.Fidelity,
			Statement: "Victims are distinct active pods, never the preemptor, and a decision kills pods only when no " +
				"reason stands and there is no error.",
			Sources: []cite.Source{
				cite.Code(kubeletPreemption, "getPodsToPreempt"),
				cite.Code(kubeletPreemption, "CriticalPodAdmissionHandler.evictPodsToFreeRequests"),
			},
		},
		Applies: fidelity(always),
		Holds:   checkVictims,
	},
	{
		Property: verify.Property{
			ID:        PRNonCritical,
			Subsystem: "preemption",
			Kind:      verify.Fidelity,
			Statement: "The reasons come back unchanged, nothing is evicted and there is no error exactly when the " +
				"preemptor is not critical (static, mirror or priority ≥ 2e9).",
			Sources: []cite.Source{
				cite.Code(kubeletPreemption, "CriticalPodAdmissionHandler.HandleAdmissionFailure"),
				cite.Code(podUpdate, "IsCriticalPod"),
			},
		},
		Applies: fidelity(always),
		Holds:   checkNonCritical,
	},
	{
		Property: verify.Property{
			ID:        PRNonResource,
			Subsystem: "preemption",
			Kind:      verify.Fidelity,
			Statement: "A critical pod with any non-resource reason gets exactly its non-resource reasons back, in " +
				"order, and preempts nothing.",
			Sources: []cite.Source{cite.Code(kubeletPreemption, "CriticalPodAdmissionHandler.HandleAdmissionFailure")},
		},
		Applies: fidelity(func(c *PreemptionCase) bool { return c.critical && len(c.nonResource) > 0 }),
		Holds:   checkNonResource,
	},
	{
		Property: verify.Property{
			ID:        PRPreemptable,
			Subsystem: "preemption",
			Kind:      verify.Fidelity,
			Statement: "Every victim is a pod the preemptor may preempt: a non-critical pod, or one with a strictly " +
				"lower priority.",
			Sources: []cite.Source{cite.Code(podUpdate, "Preemptable"), cite.Issue(65372), cite.PR(65561)},
		},
		Applies: fidelity(func(c *PreemptionCase) bool { return len(c.Victims) > 0 }),
		Holds:   checkPreemptable,
	},
	{
		Property: verify.Property{
			ID:        PRFrees,
			Subsystem: "preemption",
			Kind:      verify.Fidelity,
			Statement: "The victims' requests free at least every insufficient amount (Requested - (Capacity - Used)).",
			Sources: []cite.Source{
				cite.Code(kubeletPreemption, "getPodsToPreempt"),
				cite.Code(kubeletPreemption, "admissionRequirementList.subtract"),
			},
		},
		Applies: fidelity(func(c *PreemptionCase) bool { return c.preempts() && c.Err == nil }),
		Holds:   checkFrees,
	},
	{
		Property: verify.Property{
			ID:        PRErrorIff,
			Subsystem: "preemption",
			Kind:      verify.Fidelity,
			Statement: "Preemption fails, with upstream's message, exactly when all preemptable pods together cannot " +
				"free every insufficient amount.",
			Sources: []cite.Source{cite.Code(kubeletPreemption, "getPodsToPreempt")},
		},
		Applies: fidelity(func(c *PreemptionCase) bool { return c.preempts() }),
		Holds:   checkErrorIff,
	},
	{
		Property: verify.Property{
			ID:        PRQoSOrder,
			Subsystem: "preemption",
			Kind:      verify.Fidelity,
			Statement: "Victims come in QoS order: BestEffort, then Burstable, then Guaranteed.",
			Sources:   []cite.Source{cite.Code(kubeletPreemption, "getPodsToPreempt"), preemptionSeed(prSeedPerClass)},
		},
		Applies: fidelity(func(c *PreemptionCase) bool { return len(c.Victims) > 1 }),
		Holds:   checkQoSOrder,
	},
	{
		Property: verify.Property{
			ID:        PRQoSLowest,
			Subsystem: "preemption",
			Kind:      verify.Fidelity,
			Statement: "No Guaranteed victim when the preemptable BestEffort and Burstable pods together free enough, " +
				"and no Burstable victim when the BestEffort pods alone do.",
			Sources: []cite.Source{
				cite.Code(kubeletPreemption, "getPodsToPreempt"),
				preemptionSeed("Classifying pods by QoS"),
				preemptionSeed(prSeedPerClass),
			},
		},
		Applies: fidelity(func(c *PreemptionCase) bool { return c.preempts() && c.Err == nil }),
		Holds:   checkQoSLowest,
	},
	{
		Property: verify.Property{
			ID:        PR135857,
			Subsystem: "preemption",
			Kind:      verify.Fidelity,
			Statement: "Upstream's behaviour (#135857, open): priority plays no part once a pod is preemptable; the same " +
				"pods with every priority removed (all still preemptable) give the same victims, so a critical " +
				"BestEffort pod goes before a priority-0 Burstable one. Among Guaranteed pods this breaks the " +
				"promise PR-C-GUARANTEED-LOWEST states.",
			Sources: []cite.Source{
				cite.Issue(135857).Noting("open"),
				cite.PR(135866).Noting("open; would change this"),
			},
		},
		Applies: fidelity(func(c *PreemptionCase) bool { return c.preempts() && len(c.Victims) > 0 }),
		Holds:   check135857,
	},
	{
		Property: verify.Property{
			ID:        PRKillSkipped,
			Subsystem: "preemption",
			Kind:      verify.Fidelity,
			Statement: "A failed kill never fails the admission: the critical pod is admitted, the failed victims are " +
				"reported and stay, and only killed victims count in kubelet_preemptions.",
			Sources: []cite.Source{
				cite.Code(kubeletPreemption, "CriticalPodAdmissionHandler.evictPodsToFreeRequests"),
				cite.Issue(78405),
				cite.PR(78493),
			},
		},
		Applies: fidelity(always),
		Holds:   checkKillSkipped,
	},
	{
		Property: verify.Property{
			ID:        PRVictimStatus,
			Subsystem: "preemption",
			Kind:      verify.Fidelity,
			Statement: "Every victim is evicted (isEvicted, no grace period override) as Failed with reason Preempting, " +
				"upstream's message, a DisruptionTarget condition and a Warning event.",
			Sources: []cite.Source{
				cite.Code(kubeletPreemption, "CriticalPodAdmissionHandler.evictPodsToFreeRequests"),
			},
		},
		Applies: fidelity(func(c *PreemptionCase) bool { return len(c.Victims) > 0 }),
		Holds:   checkVictimStatus,
	},
	{
		Property: verify.Property{
			ID:        PRModel,
			Subsystem: "preemption",
			Kind:      verify.Fidelity,
			Statement: "The victims, in order, and the error text equal the model's sequential greedy (three passes, " +
				"squared distance, smaller-request tie-break, swap-remove scan order).",
			Sources: []cite.Source{
				cite.Code(kubeletPreemption, "getPodsToPreempt"),
				cite.Code(kubeletPreemption, "getPodsToPreemptByDistance"),
				cite.Doc("models/preemption/doc.go", ""),
			},
		},
		Applies: fidelity(func(c *PreemptionCase) bool { return c.preempts() }),
		Holds:   checkModel,
	},
	{
		Property: verify.Property{
			ID:        PRDeterministic,
			Subsystem: "preemption",
			Kind:      verify.Fidelity,
			Statement: "A second call on copies of the same inputs gives the same decision.",
			Sources:   []cite.Source{cite.DeterminismContract},
		},
		Applies: fidelity(always),
		Holds:   checkDeterministic,
	},
	{
		Property: verify.Property{
			ID:        PRCStaticCritical,
			Subsystem: "preemption",
			Kind:      verify.Contract,
			Statement: "A static pod marked as critical can't be evicted: the kubelet never preempts a static pod (one " +
				"it runs from a manifest file or URL) whose priorityClassName is system-cluster-critical or " +
				"system-node-critical, or whose priority field is set to a critical value (2000000000 or more), " +
				"the way the documentation tells static pod owners to mark one.",
			Sources: []cite.Source{
				cite.KubernetesDoc(critAddonPods, "Guaranteed Scheduling For Critical Add-On Pods", ""),
				cite.KubernetesDoc(
					critAddonPods,
					"Guaranteed Scheduling For Critical Add-On Pods",
					"Marking pod as critical",
				),
				cite.KubernetesDoc(
					nodePressureEviction,
					"Node-pressure Eviction",
					"Pod selection for kubelet eviction",
				).Noting("static pods: set the priority field directly"),
			},
		},
		Applies: func(c *PreemptionCase) bool { return len(c.Victims) > 0 },
		Holds:   checkStaticCritical,
	},
	{
		Property: verify.Property{
			ID:        PRCGuaranteedLowest,
			Subsystem: "preemption",
			Kind:      verify.Contract,
			Statement: "Guaranteed pods are not killed until there are no lower-priority pods that can be preempted: a " +
				"Guaranteed pod is a victim only when the pods the critical pod may preempt whose priority is " +
				"lower than its own (an unset priority counts as zero; static pods marked as critical left out, " +
				"see PR-C-STATIC-CRITICAL) could not, by the kubelet's own reckoning of what each frees, free " +
				"every insufficient amount by themselves.",
			Sources: []cite.Source{
				cite.KubernetesDoc(podQoS, "Pod Quality of Service Classes", "Guaranteed"),
				cite.KubernetesDoc(
					priorityPreemption,
					"Pod Priority and Preemption",
					"Pod priority",
				).Noting("a pod without a priority class has priority zero"),
				cite.Issue(135857).Noting("open; the same cause"),
				cite.PR(135866).Noting("open"),
			},
		},
		Applies: func(
			c *PreemptionCase,
		) bool {
			return c.preempts() && c.Err == nil && len(c.guaranteedVictims()) > 0
		},
		Holds: checkGuaranteedLowest,
	},
	{
		Property: verify.Property{
			ID:        PRCLowerPriority,
			Subsystem: "preemption",
			Kind:      verify.Contract,
			Statement: "Preemption happens only when the priority of the pending pod is higher than the victims': a pod " +
				"from the API server, whose priority its priority class sets (an unset one counts as zero), never " +
				"preempts a pod of equal or higher priority, critical or not. (Static pods are left out: the " +
				"kubelet treats every static pod as critical whatever its priority, a rule the documentation does " +
				"not state either way.)",
			Sources: []cite.Source{
				cite.KubernetesDoc(priorityPreemption, "Pod Priority and Preemption", "Pods are preempted unnecessarily"),
				cite.KubernetesDoc(
					priorityPreemption,
					"Pod Priority and Preemption",
					"Pod priority",
				).Noting("a pod without a priority class has priority zero"),
			},
		},
		Applies: func(c *PreemptionCase) bool { return len(c.Victims) > 0 && fromAPIServer(c.Preemptor) },
		Holds:   checkLowerPriority,
	},
}

// PreemptionContractChecks are the contract checks of PreemptionChecks, in
// order: the ones that judge a Preempter other than core.
func PreemptionContractChecks() []verify.Check[*PreemptionCase] {
	var out []verify.Check[*PreemptionCase]
	for _, c := range PreemptionChecks {
		if c.Kind == verify.Contract {
			out = append(out, c)
		}
	}
	return out
}

// fromAPIServer says whether the kubelet got the pod from the API server
// (config source "api", or none), not from a manifest, and it is not a
// mirror pod.
func fromAPIServer(p *pod.Pod) bool {
	src, ok := p.Annotations[sourceAnnotation]
	_, mirror := p.Annotations[mirrorAnnotation]
	return (!ok || src == "api") && !mirror
}

func checkLowerPriority(c *PreemptionCase) error {
	for _, v := range c.Victims {
		if userPriority(v) >= userPriority(c.Preemptor) {
			return fmt.Errorf("%q (%s) preempted %q (%s), whose priority is not lower", c.Preemptor.UID, describePriority(c.Preemptor), v.UID, describePriority(v))
		}
	}
	return nil
}

// Documentation pages the contract properties cite, relative to
// https://kubernetes.io/docs/.
const (
	critAddonPods        = "tasks/administer-cluster/guaranteed-scheduling-critical-addon-pods/"
	nodePressureEviction = "concepts/scheduling-eviction/node-pressure-eviction/"
	podQoS               = "concepts/workloads/pods/pod-qos/"
	priorityPreemption   = "concepts/scheduling-eviction/pod-priority-preemption/"
)

// staticSources are the config sources of a pod the kubelet runs from a
// manifest: a file in its manifest directory or a URL.
var staticSources = map[string]bool{"file": true, "http": true}

// markedCritical says whether a static pod is marked as critical in one of
// the two ways the documentation gives: a critical priority class name, or
// (static pods have no priority admission) the priority field set to at
// least system-cluster-critical's value.
func markedCritical(p *pod.Pod) bool {
	if p.PriorityClassName == preemption.SystemClusterCritical || p.PriorityClassName == preemption.SystemNodeCritical {
		return true
	}
	return p.Priority != nil && *p.Priority >= preemption.SystemClusterCriticalPriority
}

// staticMarkedCritical says whether p is a static pod marked as critical.
func staticMarkedCritical(p *pod.Pod) bool {
	src, ok := p.Annotations[sourceAnnotation]
	return ok && staticSources[src] && markedCritical(p)
}

func checkStaticCritical(c *PreemptionCase) error {
	for _, v := range c.Victims {
		if staticMarkedCritical(v) {
			return fmt.Errorf("%q (%s) preempted the static pod %q (config source %q, priority %s, priorityClassName %q), which is marked as critical",
				c.Preemptor.UID, describePriority(c.Preemptor), v.UID, v.Annotations[sourceAnnotation], priorityText(v.Priority), v.PriorityClassName)
		}
	}
	return nil
}

// userPriority is a pod's priority as the documentation speaks of it: the
// priority field, zero when unset.
func userPriority(p *pod.Pod) int64 {
	if p.Priority == nil {
		return 0
	}
	return int64(*p.Priority)
}

func priorityText(p *int32) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

func describePriority(p *pod.Pod) string {
	s := "priority " + priorityText(p.Priority)
	if p.IsCritical() {
		s += ", critical"
	}
	return s
}

// guaranteedVictims are the indices, among the active pods, of the victims
// whose QoS class is Guaranteed.
func (c *PreemptionCase) guaranteedVictims() []int {
	idx, err := c.victimIndex()
	if err != nil {
		return nil
	}
	var out []int
	for _, i := range idx {
		if model.QoS(c.mActive[i]) == model.Guaranteed {
			out = append(out, i)
		}
	}
	return out
}

func checkGuaranteedLowest(c *PreemptionCase) error {
	for _, g := range c.guaranteedVictims() {
		var lower []model.Pod
		var names []string
		for _, i := range c.preemptable {
			// A static pod marked as critical is not one that can be
			// preempted, whatever the kubelet does (PR-C-STATIC-CRITICAL).
			if staticMarkedCritical(c.Active[i]) {
				continue
			}
			if userPriority(c.Active[i]) < userPriority(c.Active[g]) {
				lower = append(lower, c.mActive[i])
				names = append(names, fmt.Sprintf("%s(%s, priority %s)", c.Active[i].UID, model.QoS(c.mActive[i]), priorityText(c.Active[i].Priority)))
			}
		}
		if len(lower) > 0 && len(model.Missing(c.needs, lower)) == 0 {
			return fmt.Errorf("the Guaranteed pod %q (priority %s) is a victim (victims %s) although the lower-priority pods the preemptor may preempt, [%s], free %s by themselves",
				c.Active[g].UID, priorityText(c.Active[g].Priority), uidList(c.Victims), strings.Join(names, " "), model.Format(c.needs))
		}
	}
	return nil
}

func checkVictims(c *PreemptionCase) error {
	if _, err := c.victimIndex(); err != nil {
		return err
	}
	for _, v := range c.Victims {
		if v == c.Preemptor || v.UID == c.Preemptor.UID {
			return fmt.Errorf("the preemptor %q is its own victim", v.UID)
		}
	}
	if len(c.Victims) > 0 && (len(c.Core.Decision.Reasons) > 0 || c.Err != nil) {
		return fmt.Errorf("victims %s chosen although reasons %s stand or error %q", uidList(c.Victims), reasonTexts(c.Core.Decision.Reasons), errText(c.Err))
	}
	return nil
}

func checkNonCritical(c *PreemptionCase) error {
	unchanged := len(c.Core.Decision.Reasons) == len(c.Reasons) && len(c.Reasons) > 0
	for i := range c.Core.Decision.Reasons {
		if unchanged && c.Core.Decision.Reasons[i] != c.Reasons[i] {
			unchanged = false
		}
	}
	if c.critical {
		// A critical preemptor never gets all its reasons back when one is
		// a resource reason (the non-resource ones are a strict subset).
		if unchanged && len(c.needs) > 0 {
			return fmt.Errorf("critical preemptor %q got every reason back unchanged: %s", c.Preemptor.UID, reasonTexts(c.Core.Decision.Reasons))
		}
		return nil
	}
	if len(c.Reasons) > 0 && !unchanged {
		return fmt.Errorf("non-critical preemptor %q: reasons %s came back as %s", c.Preemptor.UID, reasonTexts(c.Reasons), reasonTexts(c.Core.Decision.Reasons))
	}
	if len(c.Victims) > 0 || c.Err != nil || len(c.Core.Decision.Requirements) > 0 {
		return fmt.Errorf("non-critical preemptor %q preempted %s (error %q, requirements %v)", c.Preemptor.UID, uidList(c.Victims), errText(c.Err), c.Core.Decision.Requirements)
	}
	return nil
}

func checkNonResource(c *PreemptionCase) error {
	if len(c.Victims) > 0 || c.Err != nil {
		return fmt.Errorf("with non-resource reasons %s, preemption ran: victims %s, error %q", reasonTexts(c.nonResource), uidList(c.Victims), errText(c.Err))
	}
	if len(c.Core.Decision.Reasons) != len(c.nonResource) {
		return fmt.Errorf("reasons %s came back as %s, want only the non-resource ones %s", reasonTexts(c.Reasons), reasonTexts(c.Core.Decision.Reasons), reasonTexts(c.nonResource))
	}
	for i := range c.nonResource {
		if c.Core.Decision.Reasons[i] != c.nonResource[i] {
			return fmt.Errorf("reasons came back as %s, want %s in that order", reasonTexts(c.Core.Decision.Reasons), reasonTexts(c.nonResource))
		}
	}
	return nil
}

func checkPreemptable(c *PreemptionCase) error {
	idx, err := c.victimIndex()
	if err != nil {
		return err
	}
	for _, i := range idx {
		if !model.MayPreempt(c.mPreemptor, c.mActive[i]) {
			pr := func(p *int32) string {
				if p == nil {
					return "none"
				}
				return fmt.Sprint(*p)
			}
			return fmt.Errorf("%q (priority %s, critical %t) preempted %q (priority %s, critical %t)", c.Preemptor.UID, pr(c.Preemptor.Priority),
				c.critical, c.Active[i].UID, pr(c.Active[i].Priority), model.Critical(c.mActive[i]))
		}
	}
	return nil
}

func checkFrees(c *PreemptionCase) error {
	idx, err := c.victimIndex()
	if err != nil {
		return err
	}
	if left := model.Missing(c.needs, c.podsAt(idx)); len(left) > 0 {
		return fmt.Errorf("victims %s leave %s of %s missing", uidList(c.Victims), model.Format(left), model.Format(c.needs))
	}
	return nil
}

func checkErrorIff(c *PreemptionCase) error {
	left := model.Missing(c.needs, c.ofClass(model.BestEffort, model.Burstable, model.Guaranteed))
	switch {
	case len(left) > 0 && c.Err == nil:
		return fmt.Errorf("all preemptable pods together leave %s missing, yet preemption succeeded with victims %s", model.Format(left), uidList(c.Victims))
	case len(left) == 0 && c.Err != nil:
		return fmt.Errorf("preemption failed (%v) although all %d preemptable pods together free %s", c.Err, len(c.preemptable), model.Format(c.needs))
	case len(left) > 0:
		want := "preemption: error finding a set of pods to preempt: no set of running pods found to reclaim resources: " + model.Format(left)
		if c.Err.Error() != want {
			return fmt.Errorf("error %q, want %q", c.Err, want)
		}
	}
	return nil
}

var classRank = map[string]int{model.BestEffort: 0, model.Burstable: 1, model.Guaranteed: 2}

func checkQoSOrder(c *PreemptionCase) error {
	idx, err := c.victimIndex()
	if err != nil {
		return err
	}
	for k := 1; k < len(idx); k++ {
		a, b := model.QoS(c.mActive[idx[k-1]]), model.QoS(c.mActive[idx[k]])
		if classRank[a] > classRank[b] {
			return fmt.Errorf("victim %q (%s) comes before %q (%s)", c.Active[idx[k-1]].UID, a, c.Active[idx[k]].UID, b)
		}
	}
	return nil
}

func checkQoSLowest(c *PreemptionCase) error {
	idx, err := c.victimIndex()
	if err != nil {
		return err
	}
	count := map[string]int{}
	for _, i := range idx {
		count[model.QoS(c.mActive[i])]++
	}
	if len(model.Missing(c.needs, c.ofClass(model.BestEffort))) == 0 && count[model.Burstable]+count[model.Guaranteed] > 0 {
		return fmt.Errorf("the preemptable BestEffort pods alone free %s, yet victims %s include %d Burstable and %d Guaranteed pods",
			model.Format(c.needs), uidList(c.Victims), count[model.Burstable], count[model.Guaranteed])
	}
	if len(model.Missing(c.needs, c.ofClass(model.BestEffort, model.Burstable))) == 0 && count[model.Guaranteed] > 0 {
		return fmt.Errorf("the preemptable BestEffort and Burstable pods together free %s, yet victims %s include %d Guaranteed pods",
			model.Format(c.needs), uidList(c.Victims), count[model.Guaranteed])
	}
	return nil
}

// check135857 runs core/preemption again on the preemptable pods alone,
// each stripped of its priority and of whatever made it critical, so that
// every one stays preemptable by the critical preemptor through the first
// rule of Preemptable. If priority played a part, the victims could change.
func check135857(c *PreemptionCase) error {
	idx, err := c.victimIndex()
	if err != nil {
		return err
	}
	var stripped []*pod.Pod
	back := map[*pod.Pod]int{}
	for _, i := range c.preemptable {
		p := ClonePod(c.Active[i])
		p.Priority, p.PriorityClassName = nil, ""
		delete(p.Annotations, sourceAnnotation)
		delete(p.Annotations, mirrorAnnotation)
		back[p] = i
		stripped = append(stripped, p)
	}
	d, err := preemption.HandleAdmissionFailure(c.Preemptor, c.Reasons, stripped)
	if err != nil || d.Err != nil {
		return fmt.Errorf("without priorities preemption failed: %v %v", err, d.Err)
	}
	if len(d.Victims) != len(idx) {
		return fmt.Errorf("victims %s with priorities, %d without", uidList(c.Victims), len(d.Victims))
	}
	for k, v := range d.Victims {
		if back[v] != idx[k] {
			return fmt.Errorf("victims %s with priorities, %s without: priority changed the choice", uidList(c.Victims), uidList(d.Victims))
		}
	}
	return nil
}

func checkKillSkipped(c *PreemptionCase) error {
	o := c.Core.Outcome
	wantAdmit := len(c.Core.Decision.Reasons) == 0 && c.Err == nil
	if o.Admit != wantAdmit || errText(o.Err) != errText(c.Err) {
		return fmt.Errorf("kills %v: outcome admit=%t err=%q, want admit=%t err=%q", c.KillErrs, o.Admit, errText(o.Err), wantAdmit, errText(c.Err))
	}
	var evicted, failed []*pod.Pod
	for i, v := range c.Victims {
		if c.KillErrs[i] == nil {
			evicted = append(evicted, v)
		} else {
			failed = append(failed, v)
		}
	}
	if uidList(o.Evicted) != uidList(evicted) || len(o.KillFailed) != len(failed) {
		return fmt.Errorf("evicted %s and %d failed, want %s and %s", uidList(o.Evicted), len(o.KillFailed), uidList(evicted), uidList(failed))
	}
	for i, f := range o.KillFailed {
		if f.Pod != failed[i] || f.Err == nil {
			return fmt.Errorf("kill failure %d is %q (%v), want %q", i, f.Pod.UID, f.Err, failed[i].UID)
		}
	}
	total := 0
	for _, n := range o.Preemptions {
		total += n
	}
	if total != len(evicted) {
		return fmt.Errorf("kubelet_preemptions counted %v for %d killed victims", o.Preemptions, len(evicted))
	}
	if len(evicted) > 0 && o.Preemptions[string(c.Core.Decision.Requirements[0].Resource)] != len(evicted) {
		return fmt.Errorf("kubelet_preemptions %v, want the signal %q, the first requirement's resource", o.Preemptions, c.Core.Decision.Requirements[0].Resource)
	}
	return nil
}

func checkVictimStatus(c *PreemptionCase) error {
	ev := c.Core.Decision.Evictions()
	if len(ev) != len(c.Victims) {
		return fmt.Errorf("%d evictions for %d victims", len(ev), len(c.Victims))
	}
	for i, e := range ev {
		s := e.Status
		ok := e.Pod == c.Victims[i] && e.Evict && e.GracePeriodOverride == nil && s.Phase == "Failed" && s.Reason == "Preempting" && s.Message == "Preempted in order to admit critical pod" &&
			len(s.Conditions) == 1 && s.Conditions[0] == (preemption.Condition{Type: "DisruptionTarget", Status: "True", Reason: "TerminationByKubelet",
			Message: "Pod was preempted by Kubelet to accommodate a critical pod."}) &&
			e.Event == (preemption.Event{Type: "Warning", Reason: "Preempting", Message: "Preempted in order to admit critical pod"})
		if !ok {
			return fmt.Errorf("eviction of %q: %+v", c.Victims[i].UID, e)
		}
	}
	return nil
}

func checkModel(c *PreemptionCase) error {
	want := c.greedy
	if want.Err != "" || c.Err != nil {
		if errText(c.Err) != want.Err {
			return fmt.Errorf("error %q, the model's %q (victims %s)", errText(c.Err), want.Err, uidList(c.Victims))
		}
		return nil
	}
	idx, err := c.victimIndex()
	if err != nil {
		return err
	}
	got := model.Names(c.mActive, idx)
	if exp := model.Names(c.mActive, want.Victims); got != exp {
		return fmt.Errorf("victims %s, the model's %s for needs %s", got, exp, model.Format(c.needs))
	}
	return nil
}

func renderDecision(d preemption.Decision) string {
	return fmt.Sprintf("reasons=%s requirements=%v victims=%s err=%q", reasonTexts(d.Reasons), d.Requirements, uidList(d.Victims), errText(d.Err))
}

func checkDeterministic(c *PreemptionCase) error {
	if a, b := renderDecision(c.Core.Decision), renderDecision(c.Core.Twin); a != b {
		return fmt.Errorf("the same input gave two decisions:\n  first:  %s\n  second: %s", a, b)
	}
	return nil
}

// Statistics the preemption checks observe.
const (
	StatExcessVictims = "victims above the fewest possible, per preemption"
	StatExcessCost    = "evicted requests above the least possible, % per preemption"
	StatInversion     = "preemptions where a victim outranks a spared preemptable pod (#135857)"
)

// Observe reports the case's statistics: for a successful preemption among
// at most model.MaxBruteForce preemptable pods, how many victims and how
// much evicted request the greedy choice takes beyond the best possible
// (found by brute force, whatever the QoS classes), and whether a victim
// has a higher priority than a preemptable pod it spared.
func (c *PreemptionCase) Observe(observe func(name string, value float64)) {
	if !c.preempts() || c.Err != nil || len(c.Victims) == 0 {
		return
	}
	idx, err := c.victimIndex()
	if err != nil {
		return
	}
	if opt := model.BruteForce(c.mPreemptor, c.mActive, c.needs); opt.Searched && opt.Feasible {
		observe(StatExcessVictims, float64(len(idx)-opt.FewestVictims))
		if opt.LeastCost > 0 {
			observe(StatExcessCost, 100*(model.Cost(c.needs, c.podsAt(idx))-opt.LeastCost)/opt.LeastCost)
		}
	}
	victim := map[int]bool{}
	for _, i := range idx {
		victim[i] = true
	}
	inverted := 0.0
	for _, v := range idx {
		for _, s := range c.preemptable {
			pv, ps := c.Active[v].Priority, c.Active[s].Priority
			if !victim[s] && pv != nil && ps != nil && *pv > *ps {
				inverted = 1
			}
		}
	}
	observe(StatInversion, inverted)
}
