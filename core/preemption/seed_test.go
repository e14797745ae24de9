package preemption_test

import (
	"testing"

	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The worked scenario of seeds/003_b698ab5511f865a3.txt: a critical pod is
// short of resources, and the pods to evict are found class by class. Its
// two examples are the cases below: when part of the BestEffort pods frees
// enough, only BestEffort pods go; when every BestEffort pod and part of the
// Burstable ones are needed, all BestEffort pods go, some Burstable ones and
// no Guaranteed one. The seed also says the three passes and the order of
// the returned list "must not be swapped".
func TestSeedScenario(t *testing.T) {
	critical := upstreamPods()["cluster-critical"]
	be := func(name string) *pod.Pod { return testPod(name, nil, nil) }
	bu := func(name string, cpu int64) *pod.Pod { return testPod(name, pod.ResourceList{pod.CPU: cpu}, nil) }
	gu := func(name string, cpu int64) *pod.Pod {
		return testPod(name, pod.ResourceList{pod.CPU: cpu, pod.Memory: mi}, pod.ResourceList{pod.CPU: cpu, pod.Memory: mi})
	}
	pods := func(n int64) *preemption.InsufficientResource {
		return &preemption.InsufficientResource{ResourceName: pod.Pods, Requested: 1, Used: 10 + n - 1, Capacity: 10}
	}
	cpu := func(m int64) *preemption.InsufficientResource {
		return &preemption.InsufficientResource{ResourceName: pod.CPU, Requested: m, Used: 1000, Capacity: 1000}
	}
	tests := []struct {
		name    string
		running []*pod.Pod
		reasons []preemption.Reason
		want    []string
	}{
		{"some BestEffort pods suffice", []*pod.Pod{gu("g1", 100), be("be1"), bu("bu1", 100), be("be2"), be("be3")},
			[]preemption.Reason{pods(2)}, []string{"be3", "be2"}},
		{"all BestEffort and some Burstable", []*pod.Pod{gu("g1", 100), be("be1"), bu("bu1", 100), bu("bu2", 300), be("be2")},
			// The two Burstable pods tie on the one missing slot; the smaller
			// cpu request wins.
			[]preemption.Reason{pods(3)}, []string{"be2", "be1", "bu1"}},
		// The Guaranteed pass asks only for the 200m every Burstable pod
		// together cannot free and takes g2 (400m, distance 0); the Burstable
		// pass then needs 200m more and takes bu2 alone.
		{"Guaranteed only beyond all Burstable", []*pod.Pod{gu("g1", 100), gu("g2", 400), be("be1"), bu("bu1", 100), bu("bu2", 300)},
			[]preemption.Reason{cpu(600)}, []string{"bu2", "g2"}},
	}
	for _, tc := range tests {
		d, err := preemption.HandleAdmissionFailure(critical, tc.reasons, tc.running)
		require.NoError(t, err, "%s: %v %v", tc.name, err, d.Err)
		require.NoError(t, d.Err, "%s: %v %v", tc.name, err, d.Err)
		assert.Equal(t, tc.want, names(d.Victims), "%s: victims", tc.name)
	}
}

// TestObservation135857 pins the behaviour issue #135857 reports, which
// v1.36 has (the fix, PR #135866, is open): preemption chooses by QoS class
// and never compares the priorities of the pods it may preempt. A
// system-node-critical pod that needs one pod slot preempts a BestEffort
// system-cluster-critical pod rather than a Burstable pod of priority 0,
// and a high-priority Burstable pod rather than a low-priority Guaranteed
// one. PR-135857 asserts the same in the property suite.
func TestObservation135857(t *testing.T) {
	node := testPod("node-agent", pod.ResourceList{pod.CPU: 100}, nil)
	node.Priority, node.PriorityClassName = prio(preemption.SystemNodeCriticalPriority), preemption.SystemNodeCritical
	clusterCritical := testPod("dns", nil, nil)
	clusterCritical.Priority, clusterCritical.PriorityClassName = prio(preemption.SystemClusterCriticalPriority), preemption.SystemClusterCritical
	lowBurstable := testPod("batch", pod.ResourceList{pod.CPU: 100}, nil)
	lowBurstable.Priority = prio(0)
	slot := []preemption.Reason{&preemption.InsufficientResource{ResourceName: pod.Pods, Requested: 1, Used: 2, Capacity: 2}}

	d, err := preemption.HandleAdmissionFailure(node, slot, []*pod.Pod{lowBurstable, clusterCritical})
	require.NoError(t, err)
	require.NoError(t, d.Err)
	assert.Equal(t, []string{"dns"}, names(d.Victims), "victims (#135857)")

	highBurstable := testPod("web", pod.ResourceList{pod.CPU: 100}, nil)
	highBurstable.Priority = prio(1_000_000)
	lowGuaranteed := testPod("cache", pod.ResourceList{pod.CPU: 100, pod.Memory: mi}, pod.ResourceList{pod.CPU: 100, pod.Memory: mi})
	lowGuaranteed.Priority = prio(1)
	d, err = preemption.HandleAdmissionFailure(node, slot, []*pod.Pod{lowGuaranteed, highBurstable})
	require.NoError(t, err)
	require.NoError(t, d.Err)
	assert.Equal(t, []string{"web"}, names(d.Victims), "victims (#135857)")
}
