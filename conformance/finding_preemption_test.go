package conformance

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/apis/core/v1/helper/qos"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	upstream "k8s.io/kubernetes/pkg/kubelet/preemption"
	schedulerframework "k8s.io/kubernetes/pkg/scheduler/framework"
)

// The findings of the preemption subsystem (verify/findings_preemption.go),
// confirmed on the v1.36.3 kubelet's own admission path: the predicate admit
// handler (lifecycle.NewPredicateAdmitHandler), which runs the resource fit
// and, when it fails, the critical pod admission handler
// (preemption.NewCriticalPodAdmissionHandler), exactly as NewMainKubelet wires
// them. Only the kill and the node lookup are the test's. Each test passes
// while upstream breaks the promise and fails once upstream keeps it.

const prFindingNode = "node-1"

// prKubeletPod is a pod as the kubelet holds it: bound to the node, with the
// config source annotation the kubelet's pod config adds ("api" for a pod
// from the API server, "file" for a static pod), one container with
// requests (and limits equal to them when guaranteed), and a priority.
func prKubeletPod(name, source string, priority *int32, class string, cpu, memory string, guaranteed bool) *corev1.Pod {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	c := corev1.Container{Name: "main", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{Requests: req}}
	if guaranteed {
		c.Resources.Limits = req.DeepCopy()
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", UID: types.UID("uid-" + name),
			Annotations: map[string]string{"kubernetes.io/config.source": source}},
		Spec: corev1.PodSpec{NodeName: prFindingNode, Priority: priority, PriorityClassName: class, Containers: []corev1.Container{c}},
	}
	if source != "api" {
		// A static pod's manifest is read from the kubelet's manifest
		// directory; its mirror pod is what the API server shows.
		p.Name += "-" + prFindingNode
	}
	return upstreamPod(p)
}

func prPriority(v int32) *int32 { return &v }

// prAdmission is one pod's admission by upstream's predicate admit handler
// on a node of the given allocatable running the given pods.
type prAdmission struct {
	Result lifecycle.PodAdmitResult
	// Killed are the pods the critical pod admission handler killed, in
	// order, with the status each kill gave them.
	Killed   []*corev1.Pod
	Statuses []corev1.PodStatus
}

// prAdmitOnNode runs upstream's predicate admit handler with the critical pod
// admission handler for pod, on a node of allocatable running running.
// Every kill succeeds, and a killed pod leaves the node's active pods, as
// the pod workers would make it.
func prAdmitOnNode(t *testing.T, allocatable corev1.ResourceList, running []*corev1.Pod, pod *corev1.Pod) prAdmission {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: prFindingNode},
		Status: corev1.NodeStatus{Capacity: allocatable, Allocatable: allocatable}}
	active := append([]*corev1.Pod(nil), running...)
	var out prAdmission
	kill := func(p *corev1.Pod, evicted bool, _ *int64, statusFn func(*corev1.PodStatus)) error {
		status := p.Status.DeepCopy()
		statusFn(status)
		out.Killed = append(out.Killed, p)
		out.Statuses = append(out.Statuses, *status)
		assert.True(t, evicted, "upstream kills a preempted pod as evicted")
		for i, a := range active {
			if a.UID == p.UID {
				active = append(active[:i], active[i+1:]...)
				break
			}
		}
		return nil
	}
	critical := upstream.NewCriticalPodAdmissionHandler(func() []*corev1.Pod { return active }, kill, eventLog{})
	handler := lifecycle.NewPredicateAdmitHandler(
		func(context.Context, bool) (*corev1.Node, error) { return node, nil },
		critical,
		// No device plugins on this node: nothing to update.
		func(*schedulerframework.NodeInfo, *lifecycle.PodAdmitAttributes) error { return nil },
	)
	out.Result = admit(context.Background(), handler, addAttributes(pod, running))
	return out
}

func prKilledNames(a prAdmission) []string {
	var names []string
	for _, p := range a.Killed {
		names = append(names, p.Name)
	}
	return names
}

// TestFindingPRStaticCritical confirms PR-F1 (PR-C-STATIC-CRITICAL). The
// promise: "A static pod marked as critical can't be evicted"
// (https://kubernetes.io/docs/tasks/administer-cluster/guaranteed-scheduling-critical-addon-pods/);
// a pod is marked as critical by priorityClassName system-cluster-critical
// or system-node-critical (section "Marking pod as critical"), and a static
// pod's owner sets its priority field directly
// (https://kubernetes.io/docs/concepts/scheduling-eviction/node-pressure-eviction/#pod-selection-for-kubelet-eviction).
//
// The node runs one static pod marked as critical both ways
// (system-cluster-critical, priority 2000000000); a system-node-critical pod
// (priority 2000001000) arrives short of cpu. Upstream's critical pod
// admission handler preempts the static pod, because it compares the two
// critical pods' priorities and never asks whether the victim is static.
// The test passes while the bug is present.
func TestFindingPRStaticCritical(t *testing.T) {
	allocatable := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi"), corev1.ResourcePods: resource.MustParse("110")}
	static := prKubeletPod("static-proxy", "file", prPriority(2_000_000_000), "system-cluster-critical", "800m", "256Mi", false)
	arriving := prKubeletPod("node-agent", "api", prPriority(2_000_001_000), "system-node-critical", "400m", "128Mi", false)

	got := prAdmitOnNode(t, allocatable, []*corev1.Pod{static}, arriving)

	require.True(t, got.Result.Admit, "the node-critical pod is admitted: %+v", got.Result)
	if !assert.Equal(bugOutcome(t, "PR-F1"), []string{static.Name}, prKilledNames(got), "the static pod marked as critical is the victim") {
		return
	}
	assert.Equal(t, corev1.PodFailed, got.Statuses[0].Phase)
	assert.Equal(t, "Preempting", got.Statuses[0].Reason)
}

// TestFindingPRGuaranteedLowest confirms PR-F2 (PR-C-GUARANTEED-LOWEST).
// The promise: Guaranteed pods "are guaranteed not to be killed until they
// exceed their limits or there are no lower-priority Pods that can be
// preempted from the Node"
// (https://kubernetes.io/docs/concepts/workloads/pods/pod-qos/#guaranteed).
//
// The node runs two Guaranteed pods that stay within their limits, "batch"
// at priority 0 and "db" at priority 1000000, each of 400m cpu; a
// system-node-critical pod arrives 100m short of cpu. Either pod frees
// enough. Upstream's critical pod admission handler picks within the
// Guaranteed class by distance to the shortfall and then by the smaller
// memory request, never by priority (#135857), so it kills "db", the
// higher-priority pod, and spares "batch", a lower-priority pod it could
// have preempted. The pods' order does not matter: db wins the tie-break
// either way. The test passes while the bug is present.
func TestFindingPRGuaranteedLowest(t *testing.T) {
	allocatable := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi"), corev1.ResourcePods: resource.MustParse("110")}
	batch := prKubeletPod("batch", "api", prPriority(0), "", "400m", "512Mi", true)
	db := prKubeletPod("db", "api", prPriority(1_000_000), "high-priority", "400m", "256Mi", true)
	arriving := prKubeletPod("node-agent", "api", prPriority(2_000_001_000), "system-node-critical", "300m", "128Mi", false)

	bug := bugOutcome(t, "PR-F2")
	for _, running := range [][]*corev1.Pod{{batch, db}, {db, batch}} {
		got := prAdmitOnNode(t, allocatable, running, arriving)

		require.True(t, got.Result.Admit, "the node-critical pod is admitted: %+v", got.Result)
		if !assert.Equal(bug, []string{"db"}, prKilledNames(got), "the higher-priority Guaranteed pod is the victim, the lower-priority one is spared") {
			continue
		}
		assert.Equal(t, corev1.PodQOSGuaranteed, qos.GetPodQOS(got.Killed[0]), "the victim is Guaranteed")
		assert.Equal(t, corev1.PodQOSGuaranteed, qos.GetPodQOS(batch), "the pod spared is Guaranteed too")
	}
}
