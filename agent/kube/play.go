package kube

import (
	"fmt"
	"strings"

	"github.com/nodeproof/nodeproof/core/admission"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
)

// Play is a node file played through the kubelet's admission: the running
// pods on the node, then each arriving pod admitted in file order against
// the node as the earlier decisions left it. The commands that read a node
// file (admit, cgroups) share it, so that they agree on which pods the node
// runs (docs/node-file.md).
type Play struct {
	// Decisions are the node's decisions on the arriving pods, in file
	// order.
	Decisions []Decision
	// OnNode are the pods the node runs at the end, in the order they
	// joined it: the running pods no arrival preempted, then the admitted
	// arrivals.
	OnNode []PlacedPod
	// Preempted are the pods that preemption removed, in eviction order.
	Preempted []PlacedPod
}

// Decision is the node's decision on one arriving pod.
type Decision struct {
	Pod    *pod.Pod
	Result *admission.Result
}

// PlayNode admits nf's arriving pods to a node of the given allocatable
// running nf's running pods. allocatableOrigin and allocatableField name
// the allocatable in errors. The running pods must fit, one after the
// other, as the kubelet admitted each of them: a file where they do not
// describes no node, and is an error at the first pod that does not fit.
// Every kill of a preempted pod succeeds. An error about the input is an
// *Error; any other is the admission core failing on a pod it accepted.
func PlayNode(nf *NodeFile, allocatable pod.ResourceList, allocatableOrigin Origin, allocatableField string) (*Play, error) {
	node, err := admission.NewNode(allocatable, nil)
	if err != nil {
		return nil, allocatableOrigin.Errorf(allocatableField, "%v", err)
	}
	byUID := map[string]PlacedPod{}
	var active []*pod.Pod
	for _, r := range nf.Running {
		if len(active) == admission.MaxPods {
			return nil, r.Origin.Errorf("status.phase", "Running: more than %d running pods, the bound of nodeproof's admission core", admission.MaxPods)
		}
		if reasons := admission.Fit(allocatable, active, r.Pod); len(reasons) > 0 {
			return nil, r.Origin.Errorf("status.phase", "Running, but the node could not have admitted it after the running pods before it in the file: %s", describeReasons(reasons))
		}
		if err := node.AddRunning(r.Pod); err != nil {
			return nil, r.Origin.Errorf("", "%v", err)
		}
		active = append(active, r.Pod)
		byUID[r.Pod.UID] = r
	}
	play := &Play{Decisions: make([]Decision, 0, len(nf.Arriving))}
	for _, a := range nf.Arriving {
		attempt, err := node.Begin(a.Pod, admission.Options{})
		if err != nil {
			return nil, a.Origin.Errorf("", "%v", err)
		}
		// No device manager, so nothing to allocate; every kill succeeds.
		res, err := admission.Drive(attempt, nil, func(preemption.Eviction) error { return nil })
		if err != nil {
			// Not the input's fault: the core failed on a pod it accepted.
			return nil, fmt.Errorf("arriving pod %s: %v", a.Pod.Key(), err)
		}
		play.Decisions = append(play.Decisions, Decision{Pod: a.Pod, Result: res})
		byUID[a.Pod.UID] = a
		for _, v := range res.Evicted {
			play.Preempted = append(play.Preempted, byUID[v.UID])
		}
	}
	for _, p := range node.Active() {
		play.OnNode = append(play.OnNode, byUID[p.Pod.UID])
	}
	return play, nil
}

// describeReasons writes insufficient-resource reasons as the kubelet's
// rejection messages do.
func describeReasons(reasons []preemption.Reason) string {
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = r.Error()
	}
	return strings.Join(parts, "; ")
}

// AllocatableSource says where the node's allocatable comes from, for the
// header of a command's output.
func (nf *NodeFile) AllocatableSource() string {
	if nf.AllocatableField == "status.capacity" {
		return "capacity (the Node has no allocatable)"
	}
	return "allocatable"
}

// Notes say what the reading left out: each document of another kind and
// each pod in a terminal phase, in that order.
func (nf *NodeFile) Notes() []string {
	var notes []string
	for _, s := range nf.Skipped {
		notes = append(notes, s.Note())
	}
	for _, f := range nf.Finished {
		notes = append(notes, fmt.Sprintf("skipped %s (phase %s): the kubelet neither admits nor counts a pod in a terminal phase", f.Pod.Key(), f.Pod.Phase))
	}
	return notes
}

// FormatResources writes a resource list as "name quantity" pairs in name
// order, each quantity as FormatQuantity writes it.
func FormatResources(l pod.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, name := range l.Names() {
		parts = append(parts, fmt.Sprintf("%s %s", name, FormatQuantity(name, l[name])))
	}
	return strings.Join(parts, ", ")
}
