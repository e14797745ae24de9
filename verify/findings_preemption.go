package verify

import "github.com/nodeproof/nodeproof/verify/cite"

// Documentation pages the preemption findings cite, relative to
// https://kubernetes.io/docs/.
const (
	critAddonPodsDoc = "tasks/administer-cluster/guaranteed-scheduling-critical-addon-pods/"
	critAddonPods    = "Guaranteed Scheduling For Critical Add-On Pods"
	nodePressureDoc  = "concepts/scheduling-eviction/node-pressure-eviction/"
	podQoSDoc        = "concepts/workloads/pods/pod-qos/"
)

// preemptionFindings are the known findings in the preemption subsystem.
var preemptionFindings = []Finding{
	{
		ID:        "PR-F1",
		Title:     "the kubelet preempts a static pod marked as critical to admit a pod of higher priority",
		Subsystem: "preemption",
		Suite:     "preemption",
		Property:  "PR-C-STATIC-CRITICAL",
		Promise: "A static pod marked as critical can't be evicted. A pod is marked as critical with priorityClassName " +
			"system-cluster-critical or system-node-critical; a static pod, which does not support the priorityClassName " +
			"field, is to have its priority field set directly.",
		Sources: []cite.Source{
			cite.KubernetesDoc(critAddonPodsDoc, critAddonPods, ""),
			cite.KubernetesDoc(critAddonPodsDoc, critAddonPods, "Marking pod as critical"),
			cite.KubernetesDoc(nodePressureDoc, "Node-pressure Eviction", "Pod selection for kubelet eviction"),
		},
		Steps: []string{
			"The node runs four pods: a static pod (config source file) whose priority field is set to 2000000000, " +
				"requesting 150m cpu and 128Mi memory, and three pods from the API server with no priority.",
			"A pod of priority 2000001000 (system-node-critical) is bound to the node and fails the fit, 150m cpu " +
				"and 100Mi memory short. The critical pod admission handler preempts the static pod: it is killed as " +
				"evicted, Failed with reason Preempting, and the critical pod is admitted.",
		},
		Seed:         1,
		Confirmation: "conformance: TestFindingPRStaticCritical",
		RealKubelet:  "realkubelet/scenario: TestFindingPRStaticCriticalOnNode",
		Releases: "still present in v1.37.2 (read: pkg/kubelet/types/pod_update.go Preemptable, unchanged, and " +
			"pkg/kubelet/preemption/preemption.go getPodsToPreempt, unchanged but for resize requests, which it leaves to the scheduler)",
	},
	{
		ID:        "PR-F2",
		Title:     "the kubelet preempts a Guaranteed pod while a lower-priority pod that would free enough is spared",
		Subsystem: "preemption",
		Suite:     "preemption",
		Property:  "PR-C-GUARANTEED-LOWEST",
		Promise: "Pods that are Guaranteed are guaranteed not to be killed until they exceed their limits or there " +
			"are no lower-priority Pods that can be preempted from the Node.",
		Sources: []cite.Source{cite.KubernetesDoc(podQoSDoc, "Pod Quality of Service Classes", "Guaranteed")},
		Steps: []string{
			"The node runs three pods from the API server: a Burstable pod of 50m cpu and no priority, a Guaranteed " +
				"pod of 200m cpu and 128Mi memory and no priority (zero), and a Guaranteed pod of 100m cpu and 128Mi " +
				"memory at priority 5.",
			"A critical pod (a static pod) fails the fit, 150m cpu and 100Mi memory short. The critical pod admission " +
				"handler preempts the Burstable pod and the priority-5 Guaranteed pod, and spares the priority-0 " +
				"Guaranteed pod, which alone would have freed 200m cpu and 128Mi memory.",
		},
		Seed:         8,
		Confirmation: "conformance: TestFindingPRGuaranteedLowest",
		RealKubelet:  "realkubelet/scenario: TestFindingPRGuaranteedLowestOnNode",
		Tracker:      []cite.Source{cite.Issue(135857).Noting("open"), cite.PR(135866).Noting("open")},
		Releases: "still present in v1.37.2 (read: pkg/kubelet/preemption/preemption.go getPodsToPreempt and " +
			"getPodsToPreemptByDistance, unchanged)",
	},
}
