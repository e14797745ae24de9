package verify

import "github.com/nodeproof/nodeproof/properties/cite"

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
		Promise: "A static pod marked as critical can't be evicted. Static pods do not support priorityClassName through " +
			"the API server, so the documentation tells their owners to set the priority field directly; a static pod " +
			"with priorityClassName system-cluster-critical and priority 2000000000 is marked as critical either way.",
		Sources: []cite.Source{
			cite.KubernetesDoc(critAddonPodsDoc, critAddonPods, ""),
			cite.KubernetesDoc(critAddonPodsDoc, critAddonPods, "Marking pod as critical"),
			cite.KubernetesDoc(nodePressureDoc, "Node-pressure Eviction", "Pod selection for kubelet eviction"),
		},
		Steps: []string{
			"The node runs a static pod (a manifest in the kubelet's manifest directory) with priorityClassName system-cluster-critical and priority 2000000000, requesting 200m cpu.",
			"A system-node-critical pod (priority 2000001000) is bound to the node and is short of 200m cpu.",
			"The kubelet's critical pod admission handler preempts the static pod: Failed, reason Preempting, and it is never restarted.",
		},
		Seed:         1,
		Confirmation: "conformance: TestFindingPRStaticCritical",
		Releases:     "to be read",
	},
	{
		ID:        "PR-F2",
		Title:     "the kubelet preempts a Guaranteed pod while a lower-priority pod that would free enough is spared",
		Subsystem: "preemption",
		Suite:     "preemption",
		Property:  "PR-C-GUARANTEED-LOWEST",
		Promise: "Guaranteed pods are guaranteed not to be killed until they exceed their limits or there are no " +
			"lower-priority Pods that can be preempted from the Node.",
		Sources: []cite.Source{cite.KubernetesDoc(podQoSDoc, "Pod Quality of Service Classes", "Guaranteed")},
		Steps: []string{
			"to be measured",
		},
		Seed:         1,
		Confirmation: "conformance: TestFindingPRGuaranteedLowest",
		Tracker:      []cite.Source{cite.Issue(135857).Noting("open"), cite.PR(135866).Noting("open")},
		Releases:     "to be read",
	},
}
