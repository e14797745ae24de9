package cgroups

import (
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// invariants are the statements the suite checks after every step.
var invariants = []verify.Property{
	{
		ID:        Model,
		Subsystem: subsystem,
		Statement: "The core and the reference model give the same cgroups, in the same order, with the same files " +
			"and values, on cgroup v1 and v2 and with both drivers.",
		Sources: []cite.Source{
			cite.Code(cmHelpers, "ResourceConfigForPod"),
			cite.Code(cmQoS, "qosContainerManagerImpl.UpdateCgroups"),
			cite.Code(cmNodeAllocatable, "getCgroupConfigInternal"),
			cite.Code(cmCgroupManager, "getCPUWeight"),
			cite.Code(runtimeContainer, "kubeGenericRuntimeManager.calculateLinuxResources"),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        Seed,
		Subsystem: subsystem,
		Statement: "The seed's worked example (3 CPUs, 8 GiB, qos-reserved memory=100%, one pod per QoS class) gives " +
			"kubepods 3072 shares, burstable 2048, besteffort 2, the pods' and containers' shares it lists, " +
			"and tier memory limits of 7 GiB and 5 GiB.",
		Sources: []cite.Source{seed("QoS level cgroup"), seed(seedCPURequest)},
		Kind:    verify.Fidelity,
	},
	{
		ID:        SharesRange,
		Subsystem: subsystem,
		Statement: "Every cpu.shares written is within [2, 262144].",
		Sources:   []cite.Source{cite.Code(cmHelpers, "MilliCPUToShares")},
		Kind:      verify.Fidelity,
	},
	{
		ID:        QuotaFloor,
		Subsystem: subsystem,
		Statement: "As v1.36.3 does: every CFS quota written is -1 (pods without enforcement) or at least 1000µs, the " +
			"kernel's minimum, even where that exceeds the cpu limit (CG-C-CPU-LIMIT, finding CG-F1), and a " +
			"container without a cpu limit gets no quota.",
		Sources: []cite.Source{
			cite.Code(cmHelpers, "MilliCPUToQuota"),
			cite.Code(runtimeContainer, "kubeGenericRuntimeManager.calculateLinuxResources"),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        Period,
		Subsystem: subsystem,
		Statement: "Pod quotas are the limit over the configured period with CustomCPUCFSQuotaPeriod (over 100ms " +
			"without it) and pods report the configured period; containers get, and are computed over, the " +
			"configured period with the gate and 100ms without.",
		Sources: []cite.Source{
			cite.Code(cmHelpers, "MilliCPUToQuota"),
			cite.Code(cmHelpers, "ResourceConfigForPod"),
			cite.Code(runtimeContainer, "kubeGenericRuntimeManager.calculateLinuxResources"),
			cite.PR(136339),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        PodSum,
		Subsystem: subsystem,
		Statement: "For a Guaranteed or fully limited Burstable pod without regular init containers, overhead or " +
			"pod-level resources, the pod's shares, quota and memory limit are those of the summed requests " +
			"and limits of its running containers.",
		Sources: []cite.Source{seed("Pod level cgroup"), cite.Code(cmHelpers, "ResourceConfigForPod")},
		Kind:    verify.Fidelity,
	},
	{
		ID:        PartialLimits,
		Subsystem: subsystem,
		Statement: "A Burstable pod with an app container (or a regular init container not covered by an earlier " +
			"sidecar) lacking a cpu (memory) limit, and no pod-level cpu (memory) limit, gets no pod quota and " +
			"period (no memory limit).",
		Sources: []cite.Source{cite.Code(cmHelpers, "ResourceConfigForPod")},
		Kind:    verify.Fidelity,
	},
	{
		ID:        Sidecar,
		Subsystem: subsystem,
		Statement: "Without pod-level resources, a pod's shares, and its memory limit when it has one, are at least " +
			"those of its running containers' summed cpu requests (memory limits), sidecars included, plus " +
			"overhead.",
		Sources: []cite.Source{
			cite.Code(podResources, "PodRequests"),
			cite.Code(podResources, "PodLimits"),
			cite.KEP(753, "sidecar containers; the max-of-init formula before 1.28 under-counted sidecars"),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        BestEffort,
		Subsystem: subsystem,
		Statement: "BestEffort pods and the besteffort tier get 2 shares and neither quota nor memory limit on the " +
			"pod.",
		Sources: []cite.Source{
			seed("Besteffort pod cgroup"),
			cite.Code(cmHelpers, "ResourceConfigForPod"),
			cite.Code(cmQoS, "qosContainerManagerImpl.setCPUCgroupConfig"),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        TierOrder,
		Subsystem: subsystem,
		Statement: "With qos-reserved memory, besteffort limit ≤ burstable limit ≤ allocatable memory, each exactly " +
			"allocatable − Σ requests above it × P / 100 (each product divided on its own); without it the " +
			"tiers have no memory limit.",
		Sources: []cite.Source{
			seed("QoS level cgroup"),
			cite.Code(cmQoS, "qosContainerManagerImpl.setMemoryReserve"),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        TierMonotone,
		Subsystem: subsystem,
		Statement: "Admitting a pod never raises the burstable or besteffort memory limit.",
		Sources:   []cite.Source{cite.Code(cmQoS, "qosContainerManagerImpl.setMemoryReserve")},
		Kind:      verify.Fidelity,
	},
	{
		ID:        MemoryQoS,
		Subsystem: subsystem,
		Statement: "As v1.36.3 does: memory.min appears only on kubepods and Guaranteed pods, memory.low only on the " +
			"burstable tier and non-Guaranteed pods (never on kubepods, which voids it: CG-C-MEMORY-LOW, " +
			"finding CG-F2); with TieredReservation they hold the requests, with None the tiers hold 0 and " +
			"pods nothing, without Memory QoS nothing.",
		Sources: []cite.Source{
			cite.Code(cmHelpers, "ResourceConfigForPod"),
			cite.Code(cmQoS, "qosContainerManagerImpl.setMemoryQoS"),
			cite.PR(137584),
			cite.PR(137719),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        Weight,
		Subsystem: subsystem,
		Statement: "Every cgroup v2 cpu.weight is within [1, 10000] and weights are monotone in shares under each " +
			"formula (kubelet linear, runtime quadratic).",
		Sources: []cite.Source{
			cite.Code(cmCgroupManager, "getCPUWeight"),
			cite.CgroupsLibrary("utils.go", "ConvertCPUSharesToCgroupV2Value"),
			cite.Issue(131216),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        Contention,
		Subsystem: subsystem,
		Statement: "Under full CPU contention (" + contentionNote + "), every container gets at least its " +
			"cpu request, whenever every cpu request and the allocatable CPU are multiples of 125m, " +
			"allocatable is at most 256 CPUs, and at kubepods, the burstable tier " +
			"and every pod the busy children's shares (from their requests) sum to at most the parent's.",
		Sources: []cite.Source{seed(seedCPURequest)},
		Kind:    verify.Fidelity,
	},
	{
		ID:        Tree,
		Subsystem: subsystem,
		Statement: "Paths are unique, every cgroup's parent is listed before it (kubepods first), and each path is " +
			"the driver's name for it (systemd: '-' in a UID becomes '_', slices expand).",
		Sources: []cite.Source{
			cite.Code(cmCgroupManager, "CgroupName.ToSystemd"),
			cite.Code(cmPodContainer, "podContainerManagerImpl.GetPodContainerName"),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        Deterministic,
		Subsystem: subsystem,
		Statement: "Building twice from the same config and pods gives identical hierarchies and file writes.",
		Sources:   []cite.Source{cite.DeterminismContract},
		Kind:      verify.Fidelity,
	},
	{
		ID:        Errors,
		Subsystem: subsystem,
		Statement: "Valid input is accepted; bad config or pods get a *FieldError naming the field, with the " +
			"kubelet's message where it has one.",
		Sources: []cite.Source{
			cite.BadInput,
			cite.Code(kubeletConfigValidation, "ValidateKubeletConfiguration"),
			cite.Code(cmNodeAllocatable, "containerManagerImpl.validateNodeAllocatable"),
		},
		Kind: verify.Fidelity,
	},
	{
		ID:        ContractCPULimit,
		Subsystem: subsystem,
		Statement: "With cpuCFSQuota on, a container with a cpu limit is never allowed more CPU than its limit: the " +
			"CFS bandwidth its cgroup gets (quota over period) is at most the limit, for every " +
			"cpuCFSQuotaPeriod the configuration allows (1ms to 1s) (\"Containers may not use more CPU than is " +
			"specified in their cpu limit\").",
		Sources: []cite.Source{
			cite.KubernetesDoc(resourcesPage, "Resource Management for Pods and Containers", "Requests and limits"),
			cite.KubernetesDoc(kubeletConfig, "Kubelet Configuration (v1beta1): cpuCFSQuota, cpuCFSQuotaPeriod", ""),
		},
		Kind: verify.Contract,
	},
	{
		ID:        ContractMemoryLow,
		Subsystem: subsystem,
		Statement: "With Memory QoS and memoryReservationPolicy TieredReservation, a Burstable pod's memory request " +
			"is soft-protected by memory.low, and cgroup v2 protection is hierarchical (a parent at 0 wins): " +
			"the smallest memory.low from kubepods down to the pod's cgroup, which bounds the pod's effective " +
			"memory.low under node-wide reclaim, is at least the pod's memory request.",
		Sources: []cite.Source{
			cite.KEPSection(2570, memoryQoSKEP, "Mapping Rules"),
			cite.KEPSection(2570, memoryQoSKEP, "Feature Enablement and Rollback"),
			cite.KubernetesDoc(
				"concepts/workloads/pods/pod-qos/",
				"Pod Quality of Service Classes",
				"Memory QoS with cgroup v2",
			),
		},
		Kind: verify.Contract,
	},
}

// Pod and QoS cgroup invariant IDs.
const (
	Model          = "CG-MODEL"
	Seed           = "CG-SEED"
	SharesRange    = "CG-SHARES-RANGE"
	QuotaFloor     = "CG-QUOTA-FLOOR"
	Period         = "CG-PERIOD"
	PodSum         = "CG-POD-SUM"
	PartialLimits  = "CG-PARTIAL-LIMITS"
	Sidecar        = "CG-SIDECAR"
	BestEffort     = "CG-BESTEFFORT"
	TierOrder      = "CG-TIER-ORDER"
	TierMonotone   = "CG-TIER-MONOTONE"
	MemoryQoS      = "CG-MEMORY-QOS"
	Weight         = "CG-WEIGHT"
	Contention     = "CG-CONTENTION"
	Tree           = "CG-TREE"
	Deterministic  = "CG-DETERMINISTIC"
	Errors         = "CG-ERRORS"
	subsystem      = "cgroups"
	maxPods        = 8 // the machine's own bound: small nodes make full tiers common
	contentionNote = "CPU split among busy siblings in proportion to cpu.shares (cgroup v1), kubepods given its " +
		"allocatable CPU"
)

// Pod and QoS cgroup contract property IDs: what the Kubernetes
// documentation and KEPs promise users of pod cgroups.
const (
	ContractCPULimit  = "CG-C-CPU-LIMIT"
	ContractMemoryLow = "CG-C-MEMORY-LOW"
)

// Where the cgroup invariants come from: the v1.36.3 files that build pod,
// QoS-tier and node-allocatable cgroups and container resources, and the seed
// article on pod and QoS cgroups.
const (
	cmHelpers               = "pkg/kubelet/cm/helpers_linux.go"
	cmQoS                   = "pkg/kubelet/cm/qos_container_manager_linux.go"
	cmNodeAllocatable       = "pkg/kubelet/cm/node_container_manager_linux.go"
	cmCgroupManager         = "pkg/kubelet/cm/cgroup_manager_linux.go"
	cmPodContainer          = "pkg/kubelet/cm/pod_container_manager_linux.go"
	runtimeContainer        = "pkg/kubelet/kuberuntime/kuberuntime_container_linux.go"
	podResources            = "staging/src/k8s.io/component-helpers/resource/helpers.go"
	kubeletConfigValidation = "pkg/kubelet/apis/config/validation/validation.go"

	seedCPURequest = "How CPU requests are implemented"

	resourcesPage = "concepts/configuration/manage-resources-containers/"
	kubeletConfig = "reference/config-api/kubelet-config.v1beta1/"
	memoryQoSKEP  = "Support Memory QoS with cgroups v2"
)

func seed(section string) cite.Source { return cite.Seed("pod and QoS cgroups", section) }
