package conformance

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	upstream "k8s.io/kubernetes/pkg/kubelet/preemption"
	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
)

type preemptionInput struct {
	Preemptor  *corev1.Pod
	ActivePods []*corev1.Pod
	Reasons    []reasonInput
}

// reasonInput is one failure reason: an insufficient resource, or (when
// Predicate is set) another failed predicate.
type reasonInput struct {
	Predicate                 string
	Resource                  corev1.ResourceName
	Requested, Used, Capacity int64
}

// withIdentity gives a generated pod a name, a uid and what makes it
// critical or not: a priority around the system-critical threshold, or a
// static pod's config source.
func withIdentity(t *rapid.T, p *corev1.Pod, i int, label string) *corev1.Pod {
	p.Name = fmt.Sprintf("pod%d", i)
	p.UID = types.UID(fmt.Sprintf("uid-%d", i))
	switch rapid.IntRange(0, 5).Draw(t, label+".priority") {
	case 0:
	case 1:
		prio := int32(0)
		p.Spec.Priority = &prio
	case 2:
		prio := rapid.Int32Range(-10, 1000).Draw(t, label+".value")
		p.Spec.Priority = &prio
	case 3:
		prio := rapid.SampledFrom([]int32{pod.SystemCriticalPriority - 1, pod.SystemCriticalPriority, pod.SystemCriticalPriority + 1000}).Draw(t, label+".value")
		p.Spec.Priority = &prio
	case 4:
		p.Annotations = map[string]string{pod.ConfigSourceAnnotation: "file"}
	case 5:
		p.Annotations = map[string]string{pod.ConfigSourceAnnotation: "api"}
	}
	return p
}

func genPreemptionInput() *rapid.Generator[preemptionInput] {
	resources := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, gpu, huge2Mi}
	return rapid.Custom(func(t *rapid.T) preemptionInput {
		in := preemptionInput{Preemptor: withIdentity(t, genPod().Draw(t, "preemptor"), 0, "preemptor")}
		// Only a critical pod preempts; make most preemptors one.
		if rapid.IntRange(0, 4).Draw(t, "preemptorCritical") > 0 {
			prio := pod.SystemCriticalPriority
			in.Preemptor.Spec.Priority = &prio
		}
		n := rapid.IntRange(0, 6).Draw(t, "activePods")
		for i := 1; i <= n; i++ {
			at := fmt.Sprintf("active[%d]", i)
			p := withIdentity(t, genPod().Draw(t, at), i, at)
			// An active pod is pending or running; its status is where a
			// victim's new status starts from.
			p.Status.Phase = rapid.SampledFrom([]corev1.PodPhase{"", corev1.PodPending, corev1.PodRunning}).Draw(t, at+".phase")
			in.ActivePods = append(in.ActivePods, p)
		}
		nr := rapid.IntRange(0, 3).Draw(t, "reasons")
		for i := 0; i < nr; i++ {
			at := fmt.Sprintf("reasons[%d]", i)
			if rapid.IntRange(0, 5).Draw(t, at+".kind") == 0 {
				in.Reasons = append(in.Reasons, reasonInput{Predicate: rapid.SampledFrom([]string{"NodeAffinity", "HostPort"}).Draw(t, at+".predicate")})
				continue
			}
			name := rapid.SampledFrom(resources).Draw(t, at+".resource")
			// The amount to free is drawn on the scale of the generated
			// pods' requests, so that victims are found as often as not;
			// now and then it is not positive (nothing to free).
			var amount int64
			switch name {
			case corev1.ResourceCPU:
				amount = cpuMilli(t, at+".amount")
			case corev1.ResourceMemory:
				amount = memBytes(t, at+".amount")
			case huge2Mi:
				amount = rapid.Int64Range(0, 4).Draw(t, at+".amount") << 21
			default:
				amount = rapid.Int64Range(0, 4).Draw(t, at+".amount")
			}
			if rapid.IntRange(0, 5).Draw(t, at+".nothingToFree") == 0 {
				amount = -amount
			}
			capacity := rapid.Int64Range(0, 1<<40).Draw(t, at+".capacity")
			used := rapid.Int64Range(0, capacity).Draw(t, at+".used")
			requested := max(capacity-used+amount, 0)
			in.Reasons = append(in.Reasons, reasonInput{Resource: name, Requested: requested, Used: used, Capacity: capacity})
		}
		return in
	})
}

// preemptionResult is what both sides decide: the reasons that stand, the
// victims in kill order (with what each kill is told and the events recorded
// on the pod), and the error.
type preemptionResult struct {
	Reasons []string
	Victims []victim
	Err     string
}

// victim is one pod killed, as the kill sees it.
type victim struct {
	UID string
	// Evicted and GracePeriodOverride are killPodFunc's isEvicted and
	// gracePeriodOverride.
	Evicted             bool
	GracePeriodOverride *int64
	// Status is what the victim's status becomes: upstream's status
	// function applied to the pod's own status.
	Status victimStatus
	// Events are the events recorded on the pod, "type reason message".
	Events []string
}

type victimStatus struct {
	Phase, Reason, Message string
	Conditions             []victimCondition
}

// victimCondition is a pod condition without LastTransitionTime, which
// upstream's UpdatePodCondition takes from the clock (metav1.Now()).
// LastProbeTimeSet is compared: upstream leaves the probe time unset, and
// nodeproof's conditions carry none. ObservedGeneration is not compared:
// upstream sets it to the pod's metadata.generation, which nodeproof's pod
// does not model (the generated pods all have generation 0).
type victimCondition struct {
	Type, Status, Reason, Message string
	LastProbeTimeSet              bool
}

// eventLog is an EventRecorder that keeps each event with the uid of the
// object it is recorded on, formatted as the kubelet's recorder formats it.
type eventLog map[string][]string

var _ record.EventRecorder = eventLog{}

func (l eventLog) Event(obj runtime.Object, eventtype, reason, message string) {
	l.record(obj, eventtype, reason, message)
}

func (l eventLog) Eventf(obj runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	l.record(obj, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (l eventLog) AnnotatedEventf(obj runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...interface{}) {
	l.record(obj, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (l eventLog) record(obj runtime.Object, eventtype, reason, message string) {
	uid := "<not a pod>"
	if p, ok := obj.(*corev1.Pod); ok {
		uid = string(p.UID)
	}
	l[uid] = append(l[uid], eventtype+" "+reason+" "+message)
}

func TestPreemption(t *testing.T) {
	Compare(t, Comparison[preemptionInput, preemptionResult]{
		Name: "preemption.HandleAdmissionFailure",
		Gen:  genPreemptionInput(),
		Ours: func(in preemptionInput) preemptionResult {
			var active []*pod.Pod
			for _, p := range in.ActivePods {
				active = append(active, ourPod(p))
			}
			var reasons []preemption.Reason
			for _, r := range in.Reasons {
				if r.Predicate != "" {
					reasons = append(reasons, &preemption.PredicateFailure{PredicateName: r.Predicate, PredicateDesc: r.Predicate + " mismatch"})
					continue
				}
				reasons = append(reasons, &preemption.InsufficientResource{ResourceName: pod.ResourceName(r.Resource),
					Requested: r.Requested, Used: r.Used, Capacity: r.Capacity})
			}
			d, err := preemption.HandleAdmissionFailure(ourPod(in.Preemptor), reasons, active)
			if err != nil {
				// Bad input (P2); the generator draws none, so this differs.
				return preemptionResult{Err: "invalid input: " + err.Error()}
			}
			var out preemptionResult
			for _, r := range d.Reasons {
				out.Reasons = append(out.Reasons, r.Error()+" | "+r.GetReason())
			}
			for _, e := range d.Evictions() {
				v := victim{UID: e.Pod.UID, Evicted: e.Evict, GracePeriodOverride: e.GracePeriodOverride, Status: victimStatus{Phase: string(e.Status.Phase), Reason: e.Status.Reason, Message: e.Status.Message},
					Events: []string{e.Event.Type + " " + e.Event.Reason + " " + e.Event.Message}}
				for _, c := range e.Status.Conditions {
					v.Status.Conditions = append(v.Status.Conditions, victimCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
				}
				out.Victims = append(out.Victims, v)
			}
			if d.Err != nil {
				out.Err = d.Err.Error()
			}
			return out
		},
		Theirs: func(in preemptionInput) preemptionResult {
			var active []*corev1.Pod
			for _, p := range in.ActivePods {
				active = append(active, upstreamPod(p))
			}
			var out preemptionResult
			events := eventLog{}
			kill := func(p *corev1.Pod, evicted bool, grace *int64, statusFn func(*corev1.PodStatus)) error {
				status := p.Status.DeepCopy()
				statusFn(status)
				v := victim{UID: string(p.UID), Evicted: evicted, GracePeriodOverride: grace, Status: victimStatus{Phase: string(status.Phase), Reason: status.Reason, Message: status.Message}}
				for _, c := range status.Conditions {
					v.Status.Conditions = append(v.Status.Conditions, victimCondition{Type: string(c.Type), Status: string(c.Status),
						Reason: c.Reason, Message: c.Message, LastProbeTimeSet: !c.LastProbeTime.IsZero()})
				}
				out.Victims = append(out.Victims, v)
				return nil
			}
			h := upstream.NewCriticalPodAdmissionHandler(func() []*corev1.Pod { return active }, kill, events)
			var reasons []lifecycle.PredicateFailureReason
			for _, r := range in.Reasons {
				if r.Predicate != "" {
					reasons = append(reasons, &lifecycle.PredicateFailureError{PredicateName: r.Predicate, PredicateDesc: r.Predicate + " mismatch"})
					continue
				}
				reasons = append(reasons, &lifecycle.InsufficientResourceError{ResourceName: r.Resource,
					Requested: r.Requested, Used: r.Used, Capacity: r.Capacity})
			}
			left, err := handleAdmissionFailure(context.Background(), h, upstreamPod(in.Preemptor), reasons)
			// Events are matched to the victims by uid; one on any other
			// object is left over and shows as a victim of its own.
			for i := range out.Victims {
				v := &out.Victims[i]
				v.Events = events[v.UID]
				delete(events, v.UID)
			}
			for _, uid := range slices.Sorted(maps.Keys(events)) {
				out.Victims = append(out.Victims, victim{UID: "event on a pod not killed: " + uid, Events: events[uid]})
			}
			for _, r := range left {
				// Both kinds upstream returns are errors as well.
				out.Reasons = append(out.Reasons, r.(error).Error()+" | "+r.GetReason())
			}
			if err != nil {
				out.Err = err.Error()
			}
			return out
		},
	})
}
