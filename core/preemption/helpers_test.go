package preemption_test

import (
	"github.com/nodeproof/nodeproof/core/pod"
	"github.com/nodeproof/nodeproof/core/preemption"
)

// Quantities as upstream's tests write them: cpu in millicores, memory in Mi.
const mi = int64(1 << 20)

func prio(v int32) *int32 { return &v }

// testPod is a pod with one app container, the shape upstream's
// preemption_test.go uses (getPodWithResources).
func testPod(name string, requests, limits pod.ResourceList) *pod.Pod {
	return &pod.Pod{
		UID: name, Name: name, Namespace: "default",
		Annotations: map[string]string{},
		Containers:  []pod.Container{{Name: name + "-container", Requests: requests, Limits: limits}},
	}
}

func cpuMem(cpu, memMi int64) pod.ResourceList {
	return pod.ResourceList{pod.CPU: cpu, pod.Memory: memMi * mi}
}

// upstreamPods are getTestPods() of upstream's preemption_test.go.
func upstreamPods() map[string]*pod.Pod {
	all := map[string]*pod.Pod{
		"tiny":                    testPod("tiny", pod.ResourceList{pod.CPU: 1, pod.Memory: mi}, nil),
		"bestEffort":              testPod("bestEffort", nil, nil),
		"cluster-critical":        testPod("cluster-critical", cpuMem(100, 100), nil),
		"node-critical":           testPod("node-critical", cpuMem(100, 100), nil),
		"burstable":               testPod("burstable", cpuMem(100, 100), nil),
		"guaranteed":              testPod("guaranteed", cpuMem(100, 100), cpuMem(100, 100)),
		"high-request-burstable":  testPod("high-request-burstable", cpuMem(300, 300), nil),
		"high-request-guaranteed": testPod("high-request-guaranteed", cpuMem(300, 300), cpuMem(300, 300)),
	}
	cc := all["cluster-critical"]
	cc.Namespace, cc.PriorityClassName, cc.Priority = "kube-system", "system-cluster-critical", prio(pod.SystemCriticalPriority)
	nc := all["node-critical"]
	nc.Namespace, nc.PriorityClassName, nc.Priority = "kube-system", "system-node-critical", prio(pod.SystemCriticalPriority+100)
	return all
}

// upstreamReasons gives the insufficient-resource reasons whose amounts are
// getAdmissionRequirementList(cpu, memory, pods) of upstream's tests: zero
// amounts are left out, and Used = Capacity = 0 makes the amount Requested.
func upstreamReasons(cpu, memMi, pods int64) []preemption.Reason {
	var out []preemption.Reason
	if cpu > 0 {
		out = append(out, &preemption.InsufficientResource{ResourceName: pod.CPU, Requested: cpu})
	}
	if memMi > 0 {
		out = append(out, &preemption.InsufficientResource{ResourceName: pod.Memory, Requested: memMi * mi})
	}
	if pods > 0 {
		out = append(out, &preemption.InsufficientResource{ResourceName: pod.Pods, Requested: pods})
	}
	return out
}

// upstreamReqs is getAdmissionRequirementList(cpu, memory, pods) itself.
func upstreamReqs(cpu, memMi, pods int64) preemption.Requirements {
	var out preemption.Requirements
	for _, r := range upstreamReasons(cpu, memMi, pods) {
		ir := r.(*preemption.InsufficientResource)
		out = append(out, preemption.Requirement{Resource: ir.ResourceName, Quantity: ir.InsufficientAmount()})
	}
	return out
}

func names(pods []*pod.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}
