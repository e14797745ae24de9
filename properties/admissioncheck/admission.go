package admissioncheck

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/nodeproof/nodeproof/core/admission"
	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
	fitmodel "github.com/nodeproof/nodeproof/models/admission"
	model "github.com/nodeproof/nodeproof/models/preemption"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// Arrival is one pod arriving at a node and how the world answers it.
type Arrival struct {
	Pod  *pod.Pod
	Opts admission.Options
	// AllocateErr, when it returns an error for the i-th Allocate round (a
	// container that needs devices), makes that round's RPC fail with it.
	AllocateErr func(round int) error
	// KillErr gives the result of killing the i-th victim.
	KillErr func(victim int) error
}

// AdmissionCase is one admission on a node and on its twin, with what the
// checks need to judge it.
type AdmissionCase struct {
	Allocatable pod.ResourceList
	// GPUs is how many healthy example.com/gpu devices the node's plugin
	// has; 0 for a node without a device manager.
	GPUs   int
	Before []admission.ActivePod
	Pod    *pod.Pod
	Opts   admission.Options
	// RPCErrs are the Allocate rounds' injected results, nil for a round
	// that succeeded; the round after a failure never happens.
	RPCErrs  []error
	KillErrs []error
	Result   *admission.Result
	After    []admission.ActivePod
	// Holdings are the node's device holdings after the decision.
	Holdings []dm.Holding
	// TwinRender and TwinHoldings are the twin node's.
	TwinRender   string
	TwinHoldings []dm.Holding

	mBefore []model.Pod
	mPod    model.Pod
}

// Admit runs one arrival on node and twin (the twin gets a copy of the pod
// and the same answers) and returns the case. devices and twinDevices are
// the nodes' device managers, nil without one; gpus is the healthy GPU
// count. The error is the core refusing the input, which valid generated
// input never causes.
func Admit(node, twin *admission.Node, devices, twinDevices *dm.Manager, gpus int, a Arrival) (*AdmissionCase, error) {
	c := &AdmissionCase{Allocatable: node.Allocatable(), GPUs: gpus, Before: node.Active(), Pod: a.Pod, Opts: a.Opts}
	run := func(n *admission.Node, p *pod.Pod, record bool) (*admission.Result, error) {
		att, err := n.Begin(p, a.Opts)
		if err != nil {
			return nil, fmt.Errorf("valid arrival %q refused: %v", p.UID, err)
		}
		round := 0
		allocate := func(plan *dm.Plan) ([][]allocresp.ContainerAllocateResponse, error) {
			round++
			if !record {
				// The twin gets the first node's answers.
				if round <= len(c.RPCErrs) && c.RPCErrs[round-1] != nil {
					return nil, c.RPCErrs[round-1]
				}
			} else {
				var err error
				if a.AllocateErr != nil {
					err = a.AllocateErr(round - 1)
				}
				c.RPCErrs = append(c.RPCErrs, err)
				if err != nil {
					return nil, err
				}
			}
			out := make([][]allocresp.ContainerAllocateResponse, len(plan.Requests))
			for i, r := range plan.Requests {
				out[i] = []allocresp.ContainerAllocateResponse{{Envs: map[string]string{"DEVICES": strings.Join(r.DeviceIDs, ",")}}}
			}
			return out, nil
		}
		victim := 0
		kill := func(preemption.Eviction) error {
			victim++
			if !record {
				// The twin gets the answers the first node got, even when
				// KillErr draws them afresh on every call.
				if victim <= len(c.KillErrs) {
					return c.KillErrs[victim-1]
				}
				return nil
			}
			var err error
			if a.KillErr != nil {
				err = a.KillErr(victim - 1)
			}
			c.KillErrs = append(c.KillErrs, err)
			return err
		}
		return admission.Drive(att, allocate, kill)
	}
	var err error
	if c.Result, err = run(node, a.Pod, true); err != nil {
		return nil, err
	}
	twinResult, err := run(twin, ClonePod(a.Pod), false)
	if err != nil {
		return nil, err
	}
	c.TwinRender = renderResult(twinResult)
	c.After = node.Active()
	if devices != nil {
		c.Holdings = devices.Holdings()
		c.TwinHoldings = twinDevices.Holdings()
	}
	c.mPod = ModelPod(a.Pod)
	for _, b := range c.Before {
		c.mBefore = append(c.mBefore, ModelPod(b.Pod))
	}
	return c, nil
}

func renderResult(r *admission.Result) string {
	var failed []string
	for _, f := range r.KillFailed {
		failed = append(failed, f.Pod.UID+": "+f.Err.Error())
	}
	return fmt.Sprintf("pod=%s admitted=%t reason=%q message=%q fit=%s requirements=%v evicted=%s killFailed=%v preemptions=%v",
		r.Pod.UID, r.Admitted, r.Reason, r.Message, reasonTexts(r.FitReasons), r.Requirements, uidList(r.Evicted), failed, r.Preemptions)
}

func beforePods(c *AdmissionCase) []*pod.Pod {
	out := make([]*pod.Pod, len(c.Before))
	for i, b := range c.Before {
		out[i] = b.Pod
	}
	return out
}

// deviceFailure is the message the model expects when the pod's GPUs cannot
// be allocated, "" when they can: the node's GPUs less those the active
// pods hold are handed out container by container, init containers first.
func (c *AdmissionCase) deviceFailure() string {
	if c.GPUs == 0 {
		return ""
	}
	free := int64(c.GPUs)
	for _, b := range c.mBefore {
		for _, ct := range append(append([]model.Container(nil), b.Init...), b.App...) {
			free -= ct.Limits[string(GPU)]
		}
	}
	rounds := 0
	for _, ct := range append(append([]model.Container(nil), c.mPod.Init...), c.mPod.App...) {
		n := ct.Limits[string(GPU)]
		if n == 0 {
			continue
		}
		if n > free {
			return fmt.Sprintf("Allocate failed due to requested number of devices unavailable for %s. Requested: %d, Available: %d, which is unexpected", GPU, n, free)
		}
		rounds++
		if rounds <= len(c.RPCErrs) && c.RPCErrs[rounds-1] != nil {
			return "Allocate failed due to " + c.RPCErrs[rounds-1].Error() + ", which is unexpected"
		}
		free -= n
	}
	return ""
}

// expected is the decision the model expects: admitted, or the reason and
// message of the rejection.
func (c *AdmissionCase) expected() (admitted bool, reason, message string, fit []model.Shortfall) {
	if msg := c.deviceFailure(); msg != "" {
		return false, "UnexpectedAdmissionError", msg, nil
	}
	fit = model.Fit(plain(c.Allocatable), c.mBefore, c.mPod)
	if len(fit) == 0 && len(c.Opts.OtherReasons) == 0 {
		return true, "", "", fit
	}
	critical := model.Critical(c.mPod)
	switch {
	case !critical && len(fit) > 0, critical && len(fit) > 0 && len(c.Opts.OtherReasons) == 0:
		if !critical {
			reason, message = shortfallText(fit[0])
			return false, reason, message, fit
		}
		needs := make([]model.Need, len(fit))
		for i, s := range fit {
			needs[i] = model.Need{Resource: s.Resource, Quantity: s.Requested - (s.Capacity - s.Used)}
		}
		if g := model.Greedy(c.mPod, c.mBefore, needs); g.Err != "" {
			return false, "UnexpectedAdmissionError", "Unexpected error while attempting to recover from admission failure: " + g.Err, fit
		}
		return true, "", "", fit
	default:
		r := c.Opts.OtherReasons[0]
		return false, r.PredicateName, fmt.Sprintf("Predicate %s failed: %s", r.PredicateName, r.PredicateDesc), fit
	}
}

func shortfallText(s model.Shortfall) (reason, message string) {
	return "OutOf" + s.Resource, fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d", s.Resource, s.Requested, s.Used, s.Capacity)
}

func anyCase(*AdmissionCase) bool { return true }

// preempted says admission ran preemption for the case.
func preempted(c *AdmissionCase) bool {
	r := c.Result
	return len(r.Requirements) > 0 || len(r.Evicted) > 0 || len(r.KillFailed) > 0
}

// Admission invariant IDs.
const (
	ADDevices       = "AD-DEVICES"
	ADFit           = "AD-FIT"
	ADModel         = "AD-MODEL"
	ADDecision      = "AD-DECISION"
	ADNode          = "AD-NODE"
	ADNoOvercommit  = "AD-NO-OVERCOMMIT"
	ADPreemption    = "AD-PREEMPTION"
	ADDeterministic = "AD-DETERMINISTIC"

	// Contract properties: what the Kubernetes documentation promises.
	ADCDevicesNotShared = "AD-C-DEVICES-NOT-SHARED"
	ADCDevicesAvailable = "AD-C-DEVICES-AVAILABLE"
)

// AdmissionChecks are the admission invariants, sharpest first.
var AdmissionChecks = []verify.Check[*AdmissionCase]{
	{
		Property: verify.Property{
			ID:        ADDevices,
			Subsystem: "admission",
			Kind:      verify.Fidelity,
			Statement: "Devices are allocated before the fit: a pod whose GPUs exceed the free ones, or whose Allocate " +
				"RPC fails, is rejected with UnexpectedAdmissionError and upstream's message; every active pod " +
				"holds exactly the GPUs its containers ask for, and no GPU is held twice.",
			Sources: []cite.Source{
				cite.Code(kubeletMain, "NewMainKubelet").Noting("the order of the admit handlers"),
				cite.Code(deviceManager, "ManagerImpl.Allocate"),
				cite.Code(cmAdmission, "GetPodAdmitResult"),
			},
		},
		Applies: anyCase,
		Holds:   checkDevices,
	},
	{
		Property: verify.Property{
			ID:        ADFit,
			Subsystem: "admission",
			Kind:      verify.Fidelity,
			Statement: "The fit reports the model's shortfalls in order (pods, cpu, memory, ephemeral-storage, scalars " +
				"by name), with requested, used and capacity, then the caller's other reasons. Of the scalar " +
				"resources the node has none of, only an extended resource allocatable does not list at all is " +
				"dropped from the containers' requests; one listed at 0, and huge pages listed at 0 or not at all, " +
				"are short whenever the pod asks for them.",
			Sources: []cite.Source{
				cite.Code(predicateHandler, "predicateAdmitHandler.Admit"),
				cite.Code(schedulerFit, "Fits"),
			},
		},
		Applies: func(c *AdmissionCase) bool { return c.deviceFailure() == "" },
		Holds:   checkFit,
	},
	{
		Property: verify.Property{
			ID:        ADModel,
			Subsystem: "admission",
			Kind:      verify.Fidelity,
			Statement: "A pod that asks for no devices, is not critical and fails no other predicate is admitted or " +
				"rejected as models/admission decides: the same status reason and message, and the fit's " +
				"shortfalls in order with requested, used and capacity.",
			Sources: []cite.Source{
				cite.Code(predicateHandler, "predicateAdmitHandler.Admit"),
				cite.Code(schedulerFit, "Fits"),
			},
		},
		Applies: func(c *AdmissionCase) bool {
			return podGPUs(c.Pod) == 0 && c.deviceFailure() == "" && len(c.Opts.OtherReasons) == 0 && !c.Pod.IsCritical()
		},
		Holds: checkAdmissionModel,
	},
	{
		Property: verify.Property{
			ID:        ADDecision,
			Subsystem: "admission",
			Kind:      verify.Fidelity,
			Statement: "The pod is admitted or rejected as the model says, with upstream's reason and message " +
				"(OutOf<resource> and the first reason's text, the predicate's name, or " +
				"UnexpectedAdmissionError); a critical pod short only of resources is admitted whenever " +
				"preemption finds victims, whatever the kills' results.",
			Sources: []cite.Source{
				cite.Code(predicateHandler, "predicateAdmitHandler.Admit"),
				cite.Issue(78405),
				cite.PR(78493),
			},
		},
		Applies: anyCase,
		Holds:   checkDecision,
	},
	{
		Property: verify.Property{
			ID:        ADNode,
			Subsystem: "admission",
			Kind:      verify.Fidelity,
			Statement: "After a decision the node runs the pods it ran before, minus the victims killed, plus the " +
				"admitted pod; a victim whose kill failed stays, terminating.",
			Sources: []cite.Source{
				cite.Code(kubeletPreemption, "CriticalPodAdmissionHandler.evictPodsToFreeRequests"),
			},
		},
		Applies: anyCase,
		Holds:   checkNode,
	},
	{
		Property: verify.Property{
			ID:        ADNoOvercommit,
			Subsystem: "admission",
			Kind:      verify.Fidelity,
			Statement: "Admission never over-commits: the pods that are not terminating ask for at most allocatable of " +
				"pods, cpu, memory, ephemeral-storage and every scalar resource but an extended resource the node " +
				"does not list (none of a resource listed at 0 or a huge page size not listed).",
			Sources: []cite.Source{
				cite.Code(predicateHandler, "predicateAdmitHandler.Admit"),
				cite.Code(schedulerFit, "Fits"),
			},
		},
		Applies: anyCase,
		Holds:   checkNoOvercommit,
	},
	{
		Property: verify.Property{
			ID:        ADPreemption,
			Subsystem: "admission",
			Kind:      verify.Fidelity,
			Statement: "When admission preempts, it kills exactly what core/preemption chooses for the pod, the active " +
				"pods and the fit's reasons, and that choice passes every PR- fidelity invariant.",
			Sources: []cite.Source{cite.Code(kubeletPreemption, "CriticalPodAdmissionHandler.HandleAdmissionFailure")},
		},
		Applies: preempted,
		Holds:   checkAdmissionPreemption,
	},
	{
		Property: verify.Property{
			ID:        ADDeterministic,
			Subsystem: "admission",
			Kind:      verify.Fidelity,
			Statement: "A twin node fed the same arrivals and answers reaches the same decisions and device holdings.",
			Sources:   []cite.Source{cite.DeterminismContract},
		},
		Applies: anyCase,
		Holds:   checkAdmissionDeterministic,
	},
	{
		Property: verify.Property{
			ID:        ADCDevicesNotShared,
			Subsystem: "admission",
			Kind:      verify.Contract,
			Statement: "Devices cannot be shared between containers, and extended resources cannot be overcommitted: " +
				"after every decision, admitted or rejected, no device is held by two containers that run at the " +
				"same time on the node (in two pods, terminating victims included, or side by side in one pod), " +
				"and the containers hold no more devices than the node has; only a regular init container, which " +
				"finishes before the containers after it start, hands its devices on within its pod.",
			Sources: []cite.Source{
				cite.KubernetesDoc(devicePluginsDoc, "Device Plugins", "Device plugin registration"),
			},
		},
		Applies: func(c *AdmissionCase) bool { return len(c.runningGPUHoldings()) > 0 },
		Holds:   checkDevicesNotShared,
	},
	{
		Property: verify.Property{
			ID:        ADCDevicesAvailable,
			Subsystem: "admission",
			Kind:      verify.Contract,
			Statement: "The devices the node's pods do not use are available for other pods to use, whatever a pod the " +
				"kubelet rejected was given before: a pod that asks for no more devices than the node has less " +
				"those its running pods ask for (terminating victims included) is not rejected for want of " +
				"devices.",
			Sources: []cite.Source{
				cite.KubernetesDoc(devicePluginsDoc, "Device Plugins", "Device plugin registration").Noting(
					"the example: the remainder would be available for other Pods to use",
				),
			},
		},
		Applies: func(c *AdmissionCase) bool { return c.GPUs > 0 && podGPUs(c.Pod) > 0 },
		Holds:   checkDevicesAvailable,
	},
}

// podGPUs is how many devices a pod's containers ask for at once: the app
// containers and sidecars together, or a regular init container alone
// beside the sidecars declared before it, whichever is more.
func podGPUs(p *pod.Pod) int64 {
	var sidecars, most int64
	for _, c := range p.InitContainers {
		if c.RestartPolicy == pod.RestartAlways {
			sidecars += c.Limits[GPU]
			continue
		}
		most = max(most, sidecars+c.Limits[GPU])
	}
	apps := sidecars
	for _, c := range p.Containers {
		apps += c.Limits[GPU]
	}
	return max(most, apps)
}

func checkDevicesAvailable(c *AdmissionCase) error {
	free := int64(c.GPUs)
	for _, b := range c.Before {
		free -= podGPUs(b.Pod)
	}
	want := podGPUs(c.Pod)
	if want <= free && strings.Contains(c.Result.Message, "requested number of devices unavailable") {
		return fmt.Errorf("pod %q asks for %d of the %d devices its node's running pods leave free, and is rejected: %s", c.Pod.UID, want, free, c.Result.Message)
	}
	return nil
}

const devicePluginsDoc = "concepts/extend-kubernetes/compute-storage-net/device-plugins/"

// runningGPUHoldings are the GPU holdings of the pods the node runs after
// the decision: a rejected pod's containers never run, whatever the device
// manager still records for it.
func (c *AdmissionCase) runningGPUHoldings() []dm.Holding {
	running := map[string]bool{}
	for _, a := range c.After {
		running[a.Pod.UID] = true
	}
	var out []dm.Holding
	for _, h := range c.Holdings {
		if running[h.PodUID] && h.Resource == string(GPU) && len(h.DeviceIDs) > 0 {
			out = append(out, h)
		}
	}
	return out
}

// runTogether says whether containers a and b of pod p may run at the same
// time: app containers run together, a sidecar (restartable init
// container) runs beside every container declared after it, and a regular
// init container runs alone but for the sidecars declared before it.
func runTogether(p *pod.Pod, a, b string) bool {
	initAt := func(name string) (int, bool) {
		for i, c := range p.InitContainers {
			if c.Name == name {
				return i, c.RestartPolicy == pod.RestartAlways
			}
		}
		return -1, false
	}
	ia, sidecarA := initAt(a)
	ib, sidecarB := initAt(b)
	switch {
	case ia < 0 && ib < 0:
		return true
	case ia < 0:
		return sidecarB
	case ib < 0:
		return sidecarA
	case ia < ib:
		return sidecarA
	default:
		return sidecarB
	}
}

func checkDevicesNotShared(c *AdmissionCase) error {
	pods := map[string]*pod.Pod{}
	for _, a := range c.After {
		pods[a.Pod.UID] = a.Pod
	}
	holders := map[string][]dm.Holding{}
	for _, h := range c.runningGPUHoldings() {
		for _, id := range h.DeviceIDs {
			for _, other := range holders[id] {
				if other.PodUID != h.PodUID || runTogether(pods[h.PodUID], other.Container, h.Container) {
					return fmt.Errorf("device %s is held by %s/%s and by %s/%s, which run at the same time", id, other.PodUID, other.Container, h.PodUID, h.Container)
				}
			}
			holders[id] = append(holders[id], h)
		}
	}
	if len(holders) > c.GPUs {
		return fmt.Errorf("the running containers hold %d devices of %s, the node has %d", len(holders), GPU, c.GPUs)
	}
	return nil
}

func checkDevices(c *AdmissionCase) error {
	want := c.deviceFailure()
	gotDevice := c.Result.Reason == "UnexpectedAdmissionError" && strings.HasPrefix(c.Result.Message, "Allocate failed due to ")
	if want != "" && (c.Result.Admitted || c.Result.Message != want) {
		return fmt.Errorf("pod %q: got admitted=%t %q, want the device failure %q", c.Pod.UID, c.Result.Admitted, c.Result.Message, want)
	}
	if want == "" && gotDevice {
		return fmt.Errorf("pod %q: rejected for devices (%q) although %d GPUs suffice", c.Pod.UID, c.Result.Message, c.GPUs)
	}
	if c.GPUs == 0 {
		return nil
	}
	active := map[string]*pod.Pod{}
	for _, a := range c.After {
		active[a.Pod.UID] = a.Pod
	}
	held := map[string]string{}
	got := map[[2]string]int64{}
	for _, h := range c.Holdings {
		if active[h.PodUID] == nil || h.Resource != string(GPU) {
			continue
		}
		got[[2]string{h.PodUID, h.Container}] = int64(len(h.DeviceIDs))
		for _, id := range h.DeviceIDs {
			if other, dup := held[id]; dup {
				return fmt.Errorf("GPU %s held by %s and by %s/%s", id, other, h.PodUID, h.Container)
			}
			held[id] = h.PodUID + "/" + h.Container
		}
	}
	for _, a := range c.After {
		for _, ct := range a.Pod.Containers {
			if n := ct.Limits[GPU]; got[[2]string{a.Pod.UID, ct.Name}] != n {
				return fmt.Errorf("active pod %q container %q holds %d GPUs, asks for %d", a.Pod.UID, ct.Name, got[[2]string{a.Pod.UID, ct.Name}], n)
			}
		}
	}
	return nil
}

func checkFit(c *AdmissionCase) error {
	_, _, _, fit := c.expected()
	var want []string
	for _, s := range fit {
		want = append(want, fmt.Sprintf("%s requested=%d used=%d capacity=%d", s.Resource, s.Requested, s.Used, s.Capacity))
	}
	for _, o := range c.Opts.OtherReasons {
		want = append(want, o.Error())
	}
	var got []string
	for _, r := range c.Result.FitReasons {
		if ir, ok := r.(*preemption.InsufficientResource); ok {
			got = append(got, fmt.Sprintf("%s requested=%d used=%d capacity=%d", ir.ResourceName, ir.Requested, ir.Used, ir.Capacity))
		} else {
			got = append(got, r.Error())
		}
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		return fmt.Errorf("pod %q: fit reasons\n  got:  %v\n  want: %v", c.Pod.UID, got, want)
	}
	return nil
}

func checkDecision(c *AdmissionCase) error {
	admitted, reason, message, _ := c.expected()
	r := c.Result
	if r.Admitted != admitted || r.Reason != reason || r.Message != message {
		return fmt.Errorf("pod %q (kills %v): got admitted=%t reason=%q message=%q\n  want admitted=%t reason=%q message=%q",
			c.Pod.UID, c.KillErrs, r.Admitted, r.Reason, r.Message, admitted, reason, message)
	}
	return nil
}

func checkNode(c *AdmissionCase) error {
	gone := map[*pod.Pod]bool{}
	for _, v := range c.Result.Evicted {
		gone[v] = true
	}
	failed := map[*pod.Pod]bool{}
	for _, f := range c.Result.KillFailed {
		failed[f.Pod] = true
	}
	var want []string
	for _, b := range c.Before {
		if gone[b.Pod] {
			continue
		}
		s := b.Pod.UID
		if b.Terminating || failed[b.Pod] {
			s += "(terminating)"
		}
		want = append(want, s)
	}
	if c.Result.Admitted {
		want = append(want, c.Pod.UID)
	}
	var got []string
	for _, a := range c.After {
		s := a.Pod.UID
		if a.Terminating {
			s += "(terminating)"
		}
		got = append(got, s)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		return fmt.Errorf("node after pod %q: %v, want %v", c.Pod.UID, got, want)
	}
	return nil
}

func checkNoOvercommit(c *AdmissionCase) error {
	used := map[string]int64{}
	count := int64(0)
	for _, a := range c.After {
		if a.Terminating {
			continue
		}
		count++
		m := ModelPod(a.Pod)
		for _, res := range overcommitResources {
			used[res] += model.FitRequest(m, res)
		}
	}
	if count > c.Allocatable[pod.Pods] {
		return fmt.Errorf("%d pods not terminating on a node of %d", count, c.Allocatable[pod.Pods])
	}
	for _, res := range overcommitResources {
		// An allocatable of 0, or a huge page size not listed, bounds the
		// pods like any other. Only an extended resource missing from the
		// node's allocatable is not checked, as the kubelet drops such
		// requests before the fit.
		alloc, has := c.Allocatable[pod.ResourceName(res)]
		if !has && (res == string(GPU) || res == string(FPGA)) {
			continue
		}
		if used[res] > alloc {
			return fmt.Errorf("pods not terminating ask for %d %s, allocatable is %d", used[res], res, alloc)
		}
	}
	return nil
}

// overcommitResources are the resources the generated pods ask for.
var overcommitResources = []string{model.CPU, model.Memory, model.EphemeralStorage, string(GPU), string(HugePages), string(FPGA)}

// checkAdmissionModel compares the decision with models/admission's on the
// node as it was before it: its allocatable and every active pod,
// terminating ones included, each with its effective requests.
func checkAdmissionModel(c *AdmissionCase) error {
	n := fitmodel.Node{Allocatable: plain(c.Allocatable)}
	for _, a := range c.Before {
		n.Pods = append(n.Pods, fitModelPod(a.Pod))
	}
	want := n.Admit(fitModelPod(c.Pod))
	got := fitmodel.Decision{Admitted: c.Result.Admitted, Reason: c.Result.Reason, Message: c.Result.Message}
	for _, r := range c.Result.FitReasons {
		ir, ok := r.(*preemption.InsufficientResource)
		if !ok {
			return fmt.Errorf("pod %q: the fit gave %q, which is not an insufficient resource", c.Pod.UID, r.Error())
		}
		got.Shortfalls = append(got.Shortfalls, fitmodel.Shortfall{Resource: string(ir.ResourceName), Requested: ir.Requested, Used: ir.Used, Capacity: ir.Capacity})
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("pod %q: core decided %+v, models/admission %+v", c.Pod.UID, got, want)
	}
	return nil
}

// fitModelPod is p as models/admission reads it: its UID and its effective
// requests.
func fitModelPod(p *pod.Pod) fitmodel.Pod {
	return fitmodel.Pod{Name: p.UID, Requests: plain(p.EffectiveRequests(pod.Options{}))}
}

func checkAdmissionPreemption(c *AdmissionCase) error {
	r := c.Result
	i := 0
	pc, err := RunPreemption(c.Pod, beforePods(c), r.FitReasons, func(int) error {
		defer func() { i++ }()
		if i < len(c.KillErrs) {
			return c.KillErrs[i]
		}
		return nil
	})
	if err != nil {
		return err
	}
	var victims []*pod.Pod
	victims = append(victims, r.Evicted...)
	for _, f := range r.KillFailed {
		victims = append(victims, f.Pod)
	}
	// Evicted and KillFailed each keep kill order; together they are the
	// decision's victims.
	if len(victims) != len(pc.Victims) {
		return fmt.Errorf("admission killed %s, preemption chooses %s", uidList(victims), uidList(pc.Victims))
	}
	inDecision := map[*pod.Pod]bool{}
	for _, v := range pc.Victims {
		inDecision[v] = true
	}
	for _, v := range victims {
		if !inDecision[v] {
			return fmt.Errorf("admission killed %s, preemption chooses %s", uidList(victims), uidList(pc.Victims))
		}
	}
	for _, chk := range PreemptionChecks {
		// The contract properties are the preemption suite's to judge: a
		// broken promise there is a finding, not an admission fault.
		if chk.Kind == verify.Contract {
			continue
		}
		if chk.Applies(pc) {
			if err := chk.Holds(pc); err != nil {
				return fmt.Errorf("%s: %v", chk.ID, err)
			}
		}
	}
	return nil
}

func checkAdmissionDeterministic(c *AdmissionCase) error {
	if a := renderResult(c.Result); a != c.TwinRender {
		return fmt.Errorf("the same arrival gave two decisions:\n  first:  %s\n  second: %s", a, c.TwinRender)
	}
	if fmt.Sprint(c.Holdings) != fmt.Sprint(c.TwinHoldings) {
		return fmt.Errorf("device holdings differ:\n  first:  %v\n  second: %v", c.Holdings, c.TwinHoldings)
	}
	return nil
}
