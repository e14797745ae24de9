package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	upstream "k8s.io/kubernetes/pkg/kubelet/preemption"
	schedulerframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/admission"
	dm "github.com/nodeproof/nodeproof/core/devicemanager"
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
)

// The admission comparison: pods arrive one at a time at a node without
// device plugins, each judged against the node as the arrivals before it
// left it (an admitted pod joins the node's pods), by core/admission's Node
// and by upstream's predicate admit handler (lifecycle.NewPredicateAdmitHandler
// with the critical pod admission handler, as NewMainKubelet wires them),
// which runs the scheduler's noderesources fit the way the kubelet calls it.
// The generated pods are never critical, so preemption hands every reason
// back: what is compared is the fit's decision.

// admissionNode names the generated node; upstream's handler reads it.
const admissionNode = "node-1"

type admissionInput struct {
	Allocatable corev1.ResourceList
	// Running are on the node before the first arrival.
	Running  []*corev1.Pod
	Arrivals []*corev1.Pod
}

// admissionResources are the resources allocatable is drawn for: the
// generated pods' (containerResources) and the pod slots.
var admissionResources = append(slices.Clone(containerResources), corev1.ResourcePods)

// genAdmissionInput draws the node's pods and arrivals from genPod, and
// its allocatable so that the fit goes either way: each resource missing,
// 0 (both rarely), a value on the pods' own scale, or what the running
// pods and every arrival request, give or take a unit, where an exact fit
// is decided.
func genAdmissionInput() *rapid.Generator[admissionInput] {
	return rapid.Custom(func(t *rapid.T) admissionInput {
		var in admissionInput
		named := func(p *corev1.Pod, i int) *corev1.Pod {
			p.Name = fmt.Sprintf("pod%d", i)
			p.UID = types.UID(fmt.Sprintf("uid-%d", i))
			return p
		}
		running := rapid.IntRange(0, 6).Draw(t, "running")
		for i := range running {
			in.Running = append(in.Running, named(genPod().Draw(t, fmt.Sprintf("running[%d]", i)), i))
		}
		arrivals := rapid.IntRange(1, 3).Draw(t, "arrivals")
		for i := range arrivals {
			in.Arrivals = append(in.Arrivals, named(genPod().Draw(t, fmt.Sprintf("arrivals[%d]", i)), running+i))
		}
		// What the node's pods and every arrival request together, in
		// core units: with that much, the last arrival just fits.
		near := pod.ResourceList{pod.Pods: int64(running + arrivals)}
		for _, p := range append(slices.Clone(in.Running), in.Arrivals...) {
			for name, q := range ourPod(p).EffectiveRequests(pod.Options{}) {
				near[name] += q
			}
		}
		// At most one resource near the boundary may fall short of what
		// every arrival requests, so that about as many arrivals are
		// admitted as rejected.
		tight := rapid.SampledFrom(append(slices.Clone(admissionResources), "")).Draw(t, "tight")
		in.Allocatable = corev1.ResourceList{}
		for _, name := range admissionResources {
			at := "allocatable." + string(name)
			// A resource missing or at 0 is drawn rarely (it turns away
			// every arrival that asks for it, but for an extended resource
			// missing, which the kubelet drops); a scaled value of 0, and
			// the pod slots, are drawn near the boundary instead.
			var v int64
			switch mode := rapid.IntRange(0, 19).Draw(t, at+".mode"); {
			case mode == 0:
				continue
			case mode == 1:
			case mode < 4 && name != corev1.ResourcePods:
				v = drawValue(t, name, at+".value") * rapid.Int64Range(1, 8).Draw(t, at+".scale")
			}
			if v == 0 {
				least := int64(0)
				if name == tight {
					least = -2
				}
				v = near[pod.ResourceName(name)] + rapid.Int64Range(least, 2).Draw(t, at+".delta")
			}
			in.Allocatable[name] = quantity(name, min(max(v, 0), preemption.MaxQuantity))
		}
		return in
	})
}

// admissionResult is one arrival's decision.
type admissionResult struct {
	Admitted        bool
	Reason, Message string
	// Reasons are every reason the fit found, in order, before preemption
	// handed them back.
	Reasons []fitReason
}

// fitReason is one failure reason: the resource it is about ("" for
// another predicate), its message and its short reason.
type fitReason struct {
	Resource, Message, Short string
}

func TestAdmission(t *testing.T) {
	Compare(t, Comparison[admissionInput, []admissionResult]{
		Name:       "admission.Node",
		Gen:        genAdmissionInput(),
		Ours:       ourAdmissions,
		Theirs:     upstreamAdmissions,
		Deviations: []Deviation[admissionInput, []admissionResult]{{ID: "N1", Applies: twoScalarResources}},
		Explain:    explainAdmission,
	})
}

func ourAdmissions(in admissionInput) []admissionResult {
	node, err := admission.NewNode(coreList(in.Allocatable), nil)
	if err != nil {
		panic(fmt.Sprintf("NewNode rejected the generated allocatable: %v", err))
	}
	for _, p := range in.Running {
		if err := node.AddRunning(ourPod(p)); err != nil {
			panic(fmt.Sprintf("AddRunning rejected a generated pod: %v", err))
		}
	}
	var out []admissionResult
	for _, p := range in.Arrivals {
		a, err := node.Begin(ourPod(p), admission.Options{})
		if err != nil {
			panic(fmt.Sprintf("Begin rejected a generated pod: %v", err))
		}
		// Nothing to allocate on a node without device plugins, and no
		// pod to kill for one that is not critical: either call would
		// panic, which rapid reports with the input.
		res, err := admission.Drive(a, nil, nil)
		if err != nil {
			return append(out, admissionResult{Reason: "error", Message: err.Error()})
		}
		r := admissionResult{Admitted: res.Admitted, Reason: res.Reason, Message: res.Message}
		for _, f := range res.FitReasons {
			r.Reasons = append(r.Reasons, ourFitReason(f))
		}
		out = append(out, r)
	}
	return out
}

func ourFitReason(f preemption.Reason) fitReason {
	r := fitReason{Message: f.Error(), Short: f.GetReason()}
	if ir, ok := f.(*preemption.InsufficientResource); ok {
		r.Resource = string(ir.ResourceName)
	}
	return r
}

// reasonRecorder is the critical pod admission handler with the reasons
// the fit handed it kept, since the admit result shows only the first.
type reasonRecorder struct {
	lifecycle.AdmissionFailureHandler
	reasons []lifecycle.PredicateFailureReason
}

func upstreamAdmissions(in admissionInput) []admissionResult {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: admissionNode},
		Status: corev1.NodeStatus{Capacity: in.Allocatable, Allocatable: in.Allocatable}}
	var active []*corev1.Pod
	for _, p := range in.Running {
		active = append(active, upstreamPod(p))
	}
	var out []admissionResult
	for _, p := range in.Arrivals {
		kill := func(v *corev1.Pod, _ bool, _ *int64, _ func(*corev1.PodStatus)) error {
			panic(fmt.Sprintf("upstream preempted %s for a pod that is not critical", v.Name))
		}
		recorder := &reasonRecorder{AdmissionFailureHandler: upstream.NewCriticalPodAdmissionHandler(func() []*corev1.Pod { return active }, kill, eventLog{})}
		handler := lifecycle.NewPredicateAdmitHandler(
			func(context.Context, bool) (*corev1.Node, error) { return node, nil },
			recorder,
			// No device plugins on this node: nothing to update.
			func(*schedulerframework.NodeInfo, *lifecycle.PodAdmitAttributes) error { return nil },
		)
		arriving := upstreamPod(p)
		res := admit(context.Background(), handler, addAttributes(arriving, active))
		r := admissionResult{Admitted: res.Admit, Reason: res.Reason, Message: res.Message}
		for _, f := range recorder.reasons {
			r.Reasons = append(r.Reasons, upstreamFitReason(f))
		}
		out = append(out, r)
		if res.Admit {
			active = append(active, arriving)
		}
	}
	return out
}

func upstreamFitReason(f lifecycle.PredicateFailureReason) fitReason {
	r := fitReason{Short: f.GetReason()}
	if err, ok := f.(error); ok {
		r.Message = err.Error()
	}
	if ir, ok := f.(*lifecycle.InsufficientResourceError); ok {
		r.Resource = string(ir.ResourceName)
	}
	return r
}

// twoScalarResources says some arrival asks for two or more scalar
// resources the fit checks, the fit's only case where upstream's Go map
// order can decide the order of its reasons (N1).
func twoScalarResources(in admissionInput) bool {
	alloc := coreList(in.Allocatable)
	for _, p := range in.Arrivals {
		n := 0
		for name, q := range ourPod(p).EffectiveRequests(pod.Options{}) {
			if _, listed := alloc[name]; q > 0 && isScalarName(name) && (listed || !dm.IsExtendedResourceName(string(name))) {
				n++
			}
		}
		if n >= 2 {
			return true
		}
	}
	return false
}

// isScalarName is the scheduler's IsScalarResourceName for the names the
// generator draws: the extended resource and the huge page sizes.
func isScalarName(name pod.ResourceName) bool {
	return strings.Contains(string(name), "/") || pod.IsHugePages(name)
}

// explainAdmission confines N1 to what it can change: the reasons must be
// the same in the same order up to the order of the scalar resources among
// them, and where the status differs both must be that of a scalar
// resource. The decisions must be the same.
func explainAdmission(_ admissionInput, ours, theirs []admissionResult) ([]string, error) {
	if len(ours) != len(theirs) {
		return nil, fmt.Errorf("%d decisions, upstream %d", len(ours), len(theirs))
	}
	var ids []string
	for i := range ours {
		o, u := ours[i], theirs[i]
		if o.Admitted != u.Admitted {
			return nil, fmt.Errorf("arrival %d: admitted %t, upstream %t", i, o.Admitted, u.Admitted)
		}
		n1 := false
		if !slices.Equal(o.Reasons, u.Reasons) {
			if !slices.Equal(scalarsSorted(o.Reasons), scalarsSorted(u.Reasons)) {
				return nil, fmt.Errorf("arrival %d: reasons %v, upstream %v, beyond the order of scalar resources", i, o.Reasons, u.Reasons)
			}
			n1 = true
		}
		if o.Reason != u.Reason || o.Message != u.Message {
			if !firstIsScalar(o) || !firstIsScalar(u) {
				return nil, fmt.Errorf("arrival %d: %s %q, upstream %s %q", i, o.Reason, o.Message, u.Reason, u.Message)
			}
			n1 = true
		}
		if n1 && len(ids) == 0 {
			ids = append(ids, "N1")
		}
	}
	return ids, nil
}

// scalarsSorted is reasons with the reasons about scalar resources sorted
// by resource in the places they hold.
func scalarsSorted(reasons []fitReason) []fitReason {
	out := slices.Clone(reasons)
	var at []int
	var scalars []fitReason
	for i, r := range out {
		if r.Resource != "" && isScalarName(pod.ResourceName(r.Resource)) {
			at = append(at, i)
			scalars = append(scalars, r)
		}
	}
	slices.SortFunc(scalars, func(a, b fitReason) int { return strings.Compare(a.Resource, b.Resource) })
	for j, i := range at {
		out[i] = scalars[j]
	}
	return out
}

// firstIsScalar says r's status is that of its first reason and that
// reason is about a scalar resource.
func firstIsScalar(r admissionResult) bool {
	if len(r.Reasons) == 0 || !isScalarName(pod.ResourceName(r.Reasons[0].Resource)) {
		return false
	}
	return r.Message == r.Reasons[0].Message && r.Reason == "OutOf"+r.Reasons[0].Resource
}
