package preemption_test

import (
	"fmt"
	"testing"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadInput checks that malformed input gets an error naming the field
// and the rule, never a panic or a decision.
func TestBadInput(t *testing.T) {
	all := upstreamPods()
	good := all["cluster-critical"]
	withRequest := func(q int64) *pod.Pod {
		p := testPod("x", pod.ResourceList{pod.CPU: q}, nil)
		return p
	}
	unknownQoS := testPod("q", nil, nil)
	unknownQoS.QOSClass = "Platinum"
	tooMany := testPod("many", nil, nil)
	for i := 0; i < preemption.MaxContainers; i++ {
		tooMany.InitContainers = append(tooMany.InitContainers, pod.Container{Name: "i"})
	}
	var nilReason *preemption.InsufficientResource
	tests := []struct {
		name      string
		preemptor *pod.Pod
		reasons   []preemption.Reason
		running   []*pod.Pod
		want      string
	}{
		{"nil preemptor", nil, nil, nil, "preemptor: must not be nil"},
		{"preemptor without UID", &pod.Pod{}, nil, nil, "preemptor.uid: must not be empty"},
		{"negative request", withRequest(-1), nil, nil, "preemptor.containers[0].requests[cpu]: -1 must not be negative"},
		{"huge request", good, nil, []*pod.Pod{withRequest(preemption.MaxQuantity + 1)}, "activePods[0].containers[0].requests[cpu]: 70368744177665 exceeds the bound of 70368744177664"},
		{"unknown QoS status", good, nil, []*pod.Pod{unknownQoS}, `activePods[0].qosClass: "Platinum" is not Guaranteed, Burstable or BestEffort`},
		{"too many containers", tooMany, nil, nil, "preemptor: 33 containers exceed the bound of 32"},
		{"nil active pod", good, nil, []*pod.Pod{all["burstable"], nil}, "activePods[1]: must not be nil"},
		{"duplicate UID", good, nil, []*pod.Pod{all["burstable"], all["guaranteed"], all["burstable"]}, `activePods[2].uid: "burstable" is also activePods[0]`},
		{"nil reason", good, []preemption.Reason{nil}, nil, "reasons[0]: must not be nil"},
		{"typed nil reason", good, []preemption.Reason{nilReason}, nil, "reasons[0]: must not be nil"},
		{"reason without resource", good, []preemption.Reason{&preemption.InsufficientResource{Requested: 1}}, nil, "reasons[0].resourceName: must not be empty"},
		{"negative used", good, []preemption.Reason{&preemption.InsufficientResource{ResourceName: "cpu", Used: -5}}, nil, "reasons[0].used: -5 must not be negative"},
	}
	for _, tc := range tests {
		d, err := preemption.HandleAdmissionFailure(tc.preemptor, tc.reasons, tc.running)
		assert.EqualError(t, err, tc.want, "%s: err = %v, want %q", tc.name, err, tc.want)
		require.Nil(t, d.Victims, "%s: a rejected input still produced a decision %+v", tc.name, d)
		require.Nil(t, d.Reasons, "%s: a rejected input still produced a decision %+v", tc.name, d)
		assert.NoError(t, d.Err, "%s: a rejected input still produced a decision %+v", tc.name, d)
	}
}

// TestInputAtTheBoundsIsAccepted checks the other side of each bound
// TestBadInput rejects: a quantity of exactly MaxQuantity, in a pod or in a
// reason, MaxContainers containers, MaxReasons reasons and MaxActivePods
// active pods are valid input.
func TestInputAtTheBoundsIsAccepted(t *testing.T) {
	preemptor := testPod("preemptor", pod.ResourceList{pod.CPU: preemption.MaxQuantity}, nil)
	for len(preemptor.InitContainers)+len(preemptor.Containers) < preemption.MaxContainers {
		preemptor.InitContainers = append(preemptor.InitContainers, pod.Container{Name: "i"})
	}
	preemptor.Priority, preemptor.PriorityClassName = prio(pod.SystemCriticalPriority), "system-node-critical"
	reasons := []preemption.Reason{&preemption.InsufficientResource{
		ResourceName: pod.CPU, Requested: preemption.MaxQuantity, Used: preemption.MaxQuantity, Capacity: preemption.MaxQuantity,
	}}
	for len(reasons) < preemption.MaxReasons {
		reasons = append(reasons, &preemption.PredicateFailure{PredicateName: "NodeAffinity"})
	}
	running := []*pod.Pod{testPod("big", pod.ResourceList{pod.CPU: preemption.MaxQuantity}, nil)}
	for len(running) < preemption.MaxActivePods {
		running = append(running, testPod(fmt.Sprintf("p%d", len(running)), nil, nil))
	}
	_, err := preemption.HandleAdmissionFailure(preemptor, reasons, running)
	require.NoError(t, err)
	_, err = preemption.HandleAdmissionFailure(preemptor, reasons, append(running, testPod("over", nil, nil)))
	assert.EqualError(t, err, "activePods: 1025 pods exceed the bound of 1024")
}
