package verify

import "github.com/nodeproof/nodeproof/verify/cite"

// cgroupsFindings are the known findings in the cgroups subsystem.
var cgroupsFindings = []Finding{
	{
		ID:        "CG-F1",
		Title:     "a cpu limit below 1ms of quota per CFS period is not enforced: the quota is raised to 1ms, up to a whole CPU with cpuCFSQuotaPeriod=1ms",
		Subsystem: "cgroups",
		Suite:     "cgroups",
		Property:  "CG-C-CPU-LIMIT",
		Promise: "A container may not use more CPU than its cpu limit: the kernel throttles it at the limit " +
			"(\"Containers may not use more CPU than is specified in their cpu limit\"), with cpuCFSQuota on and any " +
			"cpuCFSQuotaPeriod from 1ms to 1s.",
		Sources: []cite.Source{
			cite.KubernetesDoc("concepts/configuration/manage-resources-containers/", "Resource Management for Pods and Containers", "Requests and limits"),
			cite.KubernetesDoc("reference/config-api/kubelet-config.v1beta1/", "Kubelet Configuration (v1beta1): cpuCFSQuota, cpuCFSQuotaPeriod", ""),
		},
		Steps: []string{
			"Start a kubelet with cpuCFSQuota: true and the default cpuCFSQuotaPeriod of 100ms.",
			"Admit a Guaranteed pod whose one container has requests and limits cpu: 1m, memory: 32Mi.",
			"The container's cgroup gets cpu.max \"1000 100000\" (cfs_quota_us 1000, cfs_period_us 100000): 10m of CPU, ten times its 1m limit. " +
				"Every limit below 10m gets 10m; with cpuCFSQuotaPeriod: 1ms (allowed) every limit below 1 CPU, 500m say, gets a whole CPU.",
		},
		Seed:         2,
		Confirmation: "conformance: TestFindingCGQuotaFloorExceedsLimit",
		RealKubelet:  "realkubelet/scenario: TestFindingCGQuotaFloorOnNode",
		Releases:     "still present in v1.37.2 (read: pkg/kubelet/cm/helpers_linux.go MilliCPUToQuota, called by pkg/kubelet/kuberuntime/kuberuntime_container_linux.go calculateLinuxResources and cm.ResourceConfigForPod)",
	},
	{
		ID:        "CG-F2",
		Title:     "with Memory QoS TieredReservation, Burstable pods' memory.low is void under node-wide reclaim: kubepods itself has no memory.low",
		Subsystem: "cgroups",
		Suite:     "cgroups",
		Property:  "CG-C-MEMORY-LOW",
		Promise: "With memoryReservationPolicy TieredReservation, a Burstable pod's memory request is soft-protected by memory.low, " +
			"and the kubepods cgroup covers its children's protection (cgroup v2 protection is hierarchical: a parent at 0 wins).",
		Sources: []cite.Source{
			cite.KEPSection(2570, "Support Memory QoS with cgroups v2", "Mapping Rules"),
			cite.KEPSection(2570, "Support Memory QoS with cgroups v2", "Feature Enablement and Rollback"),
			cite.KubernetesDoc("concepts/workloads/pods/pod-qos/", "Pod Quality of Service Classes", "Memory QoS with cgroup v2"),
		},
		Steps: []string{
			"Start a kubelet on cgroup v2 with the MemoryQoS gate on and memoryReservationPolicy: TieredReservation.",
			"Admit a Burstable pod whose container requests memory 32Mi (and no limit).",
			"The pod's cgroup gets memory.low 33554432 and kubepods/burstable memory.low 33554432, but kubepods itself only memory.min " +
				"(and memory.low stays 0). The kernel bounds a cgroup's effective memory.low by its ancestors', so under node-wide " +
				"memory pressure the pod's request has no memory.low protection at all.",
		},
		Seed:         1,
		Confirmation: "conformance: TestFindingCGBurstableMemoryLowVoid",
		RealKubelet:  "not observable here: memory.low and Memory QoS exist only on cgroup v2, and the harness runs the kubelet on this machine's cgroup v1",
		Tracker:      []cite.Source{cite.PR(140267)},
		Releases:     "fixed in v1.37.2 by kubernetes PR #140267 (read: pkg/kubelet/cm/qos_container_manager_linux.go setMemoryQoS now sets memory.low on kubepods too)",
	},
}
