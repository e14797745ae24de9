package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/nodeproof/nodeproof/agent/kube"
	"github.com/nodeproof/nodeproof/core/admission"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
)

// The commands that read a node file (admit, cgroups) share
// kube.ReadNodeFile's reading and this play of it, so that they agree on
// which pods the node runs (docs/node-file.md).

// nodePlay is a node file played through the kubelet's admission: the
// running pods on the node, then each arriving pod admitted in file order
// against the node as the earlier decisions left it.
type nodePlay struct {
	decisions []admitDecision
	// onNode are the pods the node runs at the end, in the order they
	// joined it: the running pods no arrival preempted, then the admitted
	// arrivals.
	onNode []kube.PlacedPod
	// preempted are the pods that preemption removed, in eviction order.
	preempted []kube.PlacedPod
}

// admitDecision is the node's decision on one arriving pod.
type admitDecision struct {
	pod    *pod.Pod
	result *admission.Result
}

// playNode admits nf's arriving pods to a node of the given allocatable
// running nf's running pods. allocatableField names the allocatable in
// errors. The running pods must fit, one after the other, as the kubelet
// admitted each of them: a file where they do not describes no node, and
// is an error at the first pod that does not fit. Every kill of a
// preempted pod succeeds.
func playNode(nf *kube.NodeFile, allocatable pod.ResourceList, allocatableOrigin kube.Origin, allocatableField string) (*nodePlay, error) {
	node, err := admission.NewNode(allocatable, nil)
	if err != nil {
		return nil, allocatableOrigin.Errorf(allocatableField, "%v", err)
	}
	byUID := map[string]kube.PlacedPod{}
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
	play := &nodePlay{decisions: make([]admitDecision, 0, len(nf.Arriving))}
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
		play.decisions = append(play.decisions, admitDecision{pod: a.Pod, result: res})
		byUID[a.Pod.UID] = a
		for _, v := range res.Evicted {
			play.preempted = append(play.preempted, byUID[v.UID])
		}
	}
	for _, p := range node.Active() {
		play.onNode = append(play.onNode, byUID[p.Pod.UID])
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

// allocatableSource says where the node's allocatable comes from, for the
// header of a command's output.
func allocatableSource(nf *kube.NodeFile) string {
	if nf.AllocatableField == "status.capacity" {
		return "capacity (the Node has no allocatable)"
	}
	return "allocatable"
}

// noteSkipped writes a note for each document and pod the reading left
// out, for commands whose stdout holds only the result.
func noteSkipped(w io.Writer, command string, nf *kube.NodeFile) {
	for _, s := range nf.Skipped {
		fmt.Fprintf(w, "nodeproof %s: note: %s\n", command, s.Note())
	}
	for _, f := range nf.Finished {
		fmt.Fprintf(w, "nodeproof %s: note: %s\n", command, finishedNote(f))
	}
}

func finishedNote(f kube.PlacedPod) string {
	return fmt.Sprintf("skipped %s (phase %s): the kubelet neither admits nor counts a pod in a terminal phase", f.Pod.Key(), f.Pod.Phase)
}
