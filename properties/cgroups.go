package properties

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/nodeproof/nodeproof/core/cgroups"
	"github.com/nodeproof/nodeproof/core/pod"
	model "github.com/nodeproof/nodeproof/models/cgroups"
	"github.com/nodeproof/nodeproof/properties/cgroupscheck"
	"github.com/nodeproof/nodeproof/verify"
	"github.com/nodeproof/nodeproof/verify/cite"
)

// Pod and QoS cgroup invariant IDs.
const (
	CGModel          = "CG-MODEL"
	CGSeed           = "CG-SEED"
	CGSharesRange    = "CG-SHARES-RANGE"
	CGQuotaFloor     = "CG-QUOTA-FLOOR"
	CGPeriod         = "CG-PERIOD"
	CGPodSum         = "CG-POD-SUM"
	CGPartialLimits  = "CG-PARTIAL-LIMITS"
	CGSidecar        = "CG-SIDECAR"
	CGBestEffort     = "CG-BESTEFFORT"
	CGTierOrder      = "CG-TIER-ORDER"
	CGTierMonotone   = "CG-TIER-MONOTONE"
	CGMemoryQoS      = "CG-MEMORY-QOS"
	CGWeight         = "CG-WEIGHT"
	CGContention     = "CG-CONTENTION"
	CGTree           = "CG-TREE"
	CGDeterministic  = "CG-DETERMINISTIC"
	CGErrors         = "CG-ERRORS"
	cgSubsystem      = "cgroups"
	cgMaxPods        = 8 // the machine's own bound: small nodes make full tiers common
	cgContentionNote = "CPU split among busy siblings in proportion to cpu.shares (cgroup v1), kubepods given its allocatable CPU"
)

// Pod and QoS cgroup contract property IDs: what the Kubernetes
// documentation and KEPs promise users of pod cgroups.
const (
	CGCCPULimit  = "CG-C-CPU-LIMIT"
	CGCMemoryLow = "CG-C-MEMORY-LOW"
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

	cgSeedCPURequest = "How CPU requests are implemented"

	cgResourcesPage = "concepts/configuration/manage-resources-containers/"
	cgKubeletConfig = "reference/config-api/kubelet-config.v1beta1/"
	cgMemoryQoSKEP  = "Support Memory QoS with cgroups v2"
)

func cgSeed(section string) cite.Source { return cite.Seed("pod and QoS cgroups", section) }

func init() {
	Register(Suite{
		Name:      "cgroups",
		Subsystem: cgSubsystem,
		Invariants: []verify.Property{
			{ID: CGModel, Subsystem: cgSubsystem, Statement: "The core and the reference model give the same cgroups, in the same order, with the same files and values, on cgroup v1 and v2 and with both drivers.", Sources: []cite.Source{cite.Code(cmHelpers, "ResourceConfigForPod"), cite.Code(cmQoS, "qosContainerManagerImpl.UpdateCgroups"), cite.Code(cmNodeAllocatable, "getCgroupConfigInternal"), cite.Code(cmCgroupManager, "getCPUWeight"), cite.Code(runtimeContainer, "kubeGenericRuntimeManager.calculateLinuxResources")}, Kind: verify.Fidelity},
			{ID: CGSeed, Subsystem: cgSubsystem, Statement: "The seed's worked example (3 CPUs, 8 GiB, qos-reserved memory=100%, one pod per QoS class) gives kubepods 3072 shares, burstable 2048, besteffort 2, the pods' and containers' shares it lists, and tier memory limits of 7 GiB and 5 GiB.", Sources: []cite.Source{cgSeed("QoS level cgroup"), cgSeed(cgSeedCPURequest)}, Kind: verify.Fidelity},
			{ID: CGSharesRange, Subsystem: cgSubsystem, Statement: "Every cpu.shares written is within [2, 262144].", Sources: []cite.Source{cite.Code(cmHelpers, "MilliCPUToShares")}, Kind: verify.Fidelity},
			{ID: CGQuotaFloor, Subsystem: cgSubsystem, Statement: "As v1.36.3 does: every CFS quota written is -1 (pods without enforcement) or at least 1000µs, the kernel's minimum, even where that exceeds the cpu limit (CG-C-CPU-LIMIT, finding CG-F1), and a container without a cpu limit gets no quota.", Sources: []cite.Source{cite.Code(cmHelpers, "MilliCPUToQuota"), cite.Code(runtimeContainer, "kubeGenericRuntimeManager.calculateLinuxResources")}, Kind: verify.Fidelity},
			{ID: CGPeriod, Subsystem: cgSubsystem, Statement: "Pod quotas are the limit over the configured period with CustomCPUCFSQuotaPeriod (over 100ms without it) and pods report the configured period; containers get, and are computed over, the configured period with the gate and 100ms without.", Sources: []cite.Source{cite.Code(cmHelpers, "MilliCPUToQuota"), cite.Code(cmHelpers, "ResourceConfigForPod"), cite.Code(runtimeContainer, "kubeGenericRuntimeManager.calculateLinuxResources"), cite.PR(136339)}, Kind: verify.Fidelity},
			{ID: CGPodSum, Subsystem: cgSubsystem, Statement: "For a Guaranteed or fully limited Burstable pod without regular init containers, overhead or pod-level resources, the pod's shares, quota and memory limit are those of the summed requests and limits of its running containers.", Sources: []cite.Source{cgSeed("Pod level cgroup"), cite.Code(cmHelpers, "ResourceConfigForPod")}, Kind: verify.Fidelity},
			{ID: CGPartialLimits, Subsystem: cgSubsystem, Statement: "A Burstable pod with an app container (or a regular init container not covered by an earlier sidecar) lacking a cpu (memory) limit, and no pod-level cpu (memory) limit, gets no pod quota and period (no memory limit).", Sources: []cite.Source{cite.Code(cmHelpers, "ResourceConfigForPod")}, Kind: verify.Fidelity},
			{ID: CGSidecar, Subsystem: cgSubsystem, Statement: "Without pod-level resources, a pod's shares, and its memory limit when it has one, are at least those of its running containers' summed cpu requests (memory limits), sidecars included, plus overhead.", Sources: []cite.Source{cite.Code(podResources, "PodRequests"), cite.Code(podResources, "PodLimits"), cite.KEP(753, "sidecar containers; the max-of-init formula before 1.28 under-counted sidecars")}, Kind: verify.Fidelity},
			{ID: CGBestEffort, Subsystem: cgSubsystem, Statement: "BestEffort pods and the besteffort tier get 2 shares and neither quota nor memory limit on the pod.", Sources: []cite.Source{cgSeed("Besteffort pod cgroup"), cite.Code(cmHelpers, "ResourceConfigForPod"), cite.Code(cmQoS, "qosContainerManagerImpl.setCPUCgroupConfig")}, Kind: verify.Fidelity},
			{ID: CGTierOrder, Subsystem: cgSubsystem, Statement: "With qos-reserved memory, besteffort limit ≤ burstable limit ≤ allocatable memory, each exactly allocatable − Σ requests above it × P / 100 (each product divided on its own); without it the tiers have no memory limit.", Sources: []cite.Source{cgSeed("QoS level cgroup"), cite.Code(cmQoS, "qosContainerManagerImpl.setMemoryReserve")}, Kind: verify.Fidelity},
			{ID: CGTierMonotone, Subsystem: cgSubsystem, Statement: "Admitting a pod never raises the burstable or besteffort memory limit.", Sources: []cite.Source{cite.Code(cmQoS, "qosContainerManagerImpl.setMemoryReserve")}, Kind: verify.Fidelity},
			{ID: CGMemoryQoS, Subsystem: cgSubsystem, Statement: "As v1.36.3 does: memory.min appears only on kubepods and Guaranteed pods, memory.low only on the burstable tier and non-Guaranteed pods (never on kubepods, which voids it: CG-C-MEMORY-LOW, finding CG-F2); with TieredReservation they hold the requests, with None the tiers hold 0 and pods nothing, without Memory QoS nothing.", Sources: []cite.Source{cite.Code(cmHelpers, "ResourceConfigForPod"), cite.Code(cmQoS, "qosContainerManagerImpl.setMemoryQoS"), cite.PR(137584), cite.PR(137719)}, Kind: verify.Fidelity},
			{ID: CGWeight, Subsystem: cgSubsystem, Statement: "Every cgroup v2 cpu.weight is within [1, 10000] and weights are monotone in shares under each formula (kubelet linear, runtime quadratic).", Sources: []cite.Source{cite.Code(cmCgroupManager, "getCPUWeight"), cite.CgroupsLibrary("utils.go", "ConvertCPUSharesToCgroupV2Value"), cite.Issue(131216)}, Kind: verify.Fidelity},
			{ID: CGContention, Subsystem: cgSubsystem, Statement: "Under full CPU contention (" + cgContentionNote + "), every container gets at least its cpu request, whenever every cpu request and the allocatable CPU are multiples of 125m, allocatable is at most 256 CPUs, and at kubepods, the burstable tier and every pod the busy children's shares (from their requests) sum to at most the parent's.", Sources: []cite.Source{cgSeed(cgSeedCPURequest)}, Kind: verify.Fidelity},
			{ID: CGTree, Subsystem: cgSubsystem, Statement: "Paths are unique, every cgroup's parent is listed before it (kubepods first), and each path is the driver's name for it (systemd: '-' in a UID becomes '_', slices expand).", Sources: []cite.Source{cite.Code(cmCgroupManager, "CgroupName.ToSystemd"), cite.Code(cmPodContainer, "podContainerManagerImpl.GetPodContainerName")}, Kind: verify.Fidelity},
			{ID: CGDeterministic, Subsystem: cgSubsystem, Statement: "Building twice from the same config and pods gives identical hierarchies and file writes.", Sources: []cite.Source{cite.DeterminismContract}, Kind: verify.Fidelity},
			{ID: CGErrors, Subsystem: cgSubsystem, Statement: "Valid input is accepted; bad config or pods get a *FieldError naming the field, with the kubelet's message where it has one.", Sources: []cite.Source{cite.BadInput, cite.Code(kubeletConfigValidation, "ValidateKubeletConfiguration"), cite.Code(cmNodeAllocatable, "containerManagerImpl.validateNodeAllocatable")}, Kind: verify.Fidelity},
			{ID: CGCCPULimit, Subsystem: cgSubsystem, Statement: "With cpuCFSQuota on, a container with a cpu limit is never allowed more CPU than its limit: the CFS bandwidth its cgroup gets (quota over period) is at most the limit, for every cpuCFSQuotaPeriod the configuration allows (1ms to 1s) (\"Containers may not use more CPU than is specified in their cpu limit\").", Sources: []cite.Source{cite.KubernetesDoc(cgResourcesPage, "Resource Management for Pods and Containers", "Requests and limits"), cite.KubernetesDoc(cgKubeletConfig, "Kubelet Configuration (v1beta1): cpuCFSQuota, cpuCFSQuotaPeriod", "")}, Kind: verify.Contract},
			{ID: CGCMemoryLow, Subsystem: cgSubsystem, Statement: "With Memory QoS and memoryReservationPolicy TieredReservation, a Burstable pod's memory request is soft-protected by memory.low, and cgroup v2 protection is hierarchical (a parent at 0 wins): the smallest memory.low from kubepods down to the pod's cgroup, which bounds the pod's effective memory.low under node-wide reclaim, is at least the pod's memory request.", Sources: []cite.Source{cite.KEPSection(2570, cgMemoryQoSKEP, "Mapping Rules"), cite.KEPSection(2570, cgMemoryQoSKEP, "Feature Enablement and Rollback"), cite.KubernetesDoc("concepts/workloads/pods/pod-qos/", "Pod Quality of Service Classes", "Memory QoS with cgroup v2")}, Kind: verify.Contract},
		},
		Property: func(t *rapid.T, tally *Tally) { newCGMachine(t, tally).run() },
	})
}

// cgMachine plays a node: a kubelet config and the pods admitted to it.
// Every step changes one of them; the check after it builds the hierarchy
// and holds it against the model and the invariants.
type cgMachine struct {
	t     *rapid.T
	tally *Tally
	step  int

	cfg  cgroups.Config
	pods []*pod.Pod
	uid  int
	// podLevelGate is fixed per case. With the gate off no pod sets
	// pod-level resources (the kubelet would not admit it), but some carry
	// an empty spec.resources, which a static pod manifest or an API server
	// with the gate on keeps and the kubelet admits; only the kubelet's
	// gate then says whether it decides the QoS class.
	podLevelGate bool
	// oddQuantities lets the generator draw cpu quantities that are not
	// multiples of 125m, which leave the contention invariant's domain.
	oddQuantities bool
	// spec holds each pod in the model's terms for the current check, so
	// that the checks state their expectations independently of core/pod.
	spec map[string]model.Pod
	// dirty is set by every step that changed the node or its pods.
	dirty bool
}

func newCGMachine(t *rapid.T, tally *Tally) *cgMachine {
	m := &cgMachine{t: t, tally: tally, dirty: true}
	m.podLevelGate = rapid.IntRange(0, 3).Draw(t, "podLevelGate") > 0
	m.oddQuantities = rapid.Bool().Draw(t, "oddQuantities")
	m.cfg = m.drawConfig(t)
	// The node is part of every counterexample, so it is the first step.
	t.Logf("step 0: start %s", cgConfigSpec{m.cfg})
	m.checkSeed()
	return m
}

func (m *cgMachine) run() {
	m.t.Repeat(map[string]func(*rapid.T){
		"addPod":       m.addPod,
		"removePod":    m.removePod,
		"changeConfig": m.changeConfig,
		"badConfig":    m.badConfig,
		"badPod":       m.badPod,
		"":             m.check,
	})
}

func (m *cgMachine) begin(action, format string, args ...any) {
	m.step++
	m.tally.Action(action)
	m.t.Logf("step %d: %s "+format, append([]any{m.step, action}, args...)...)
}

func (m *cgMachine) fail(id, format string, args ...any) {
	m.t.Fatalf("%s: "+format, append([]any{id}, args...)...)
}

// --- generators -------------------------------------------------------------

const (
	cgMi = int64(1) << 20
	cgGi = int64(1) << 30
)

func (m *cgMachine) drawConfig(t *rapid.T) cgroups.Config {
	c := cgroups.DefaultConfig()
	c.PodLevelResources = m.podLevelGate
	c.CgroupDriver = rapid.SampledFrom([]cgroups.Driver{cgroups.DriverCgroupfs, cgroups.DriverSystemd}).Draw(t, "driver")
	c.CgroupRoot = rapid.SampledFrom([]string{"/", "/", "/custom", "/node-a/pods"}).Draw(t, "cgroupRoot")
	cpus := []int64{1000, 2000, 3000, 4000, 8000, 16000, 64000, 300000}
	if m.oddQuantities {
		cpus = append(cpus, 3500, 1999, 7)
	}
	c.Capacity = pod.ResourceList{
		pod.CPU:    rapid.SampledFrom(cpus).Draw(t, "cpu"),
		pod.Memory: rapid.SampledFrom([]int64{2 * cgGi, 4 * cgGi, 8 * cgGi, 16 * cgGi, 64 * cgGi, 5*cgGi + 12345}).Draw(t, "memory"),
	}
	if rapid.Bool().Draw(t, "pid") {
		c.Capacity[cgroups.PIDs] = rapid.SampledFrom([]int64{4096, 32768}).Draw(t, "pids")
	}
	if rapid.Bool().Draw(t, "storage") {
		c.Capacity[pod.EphemeralStorage] = 100 * cgGi
	}
	c.HugePageSizes = nil
	if rapid.Bool().Draw(t, "huge2Mi") {
		c.HugePageSizes = append(c.HugePageSizes, 2*cgMi)
		c.Capacity["hugepages-2Mi"] = rapid.SampledFrom([]int64{0, 64 * cgMi, 512 * cgMi}).Draw(t, "huge2MiCapacity")
	}
	if rapid.Bool().Draw(t, "huge1Gi") {
		c.HugePageSizes = append(c.HugePageSizes, cgGi)
	}
	c.SystemReserved = pod.ResourceList{}
	c.KubeReserved = pod.ResourceList{}
	for _, l := range []pod.ResourceList{c.SystemReserved, c.KubeReserved} {
		if cpu := rapid.SampledFrom([]int64{0, 0, 125, 500, 1000}).Draw(t, "reservedCPU"); cpu > 0 {
			l[pod.CPU] = cpu
		}
		if mem := rapid.SampledFrom([]int64{0, 0, 256 * cgMi, cgGi}).Draw(t, "reservedMemory"); mem > 0 {
			l[pod.Memory] = mem
		}
		if rapid.IntRange(0, 3).Draw(t, "reservedPID") == 0 {
			l[cgroups.PIDs] = 100
		}
	}
	if !rapid.Bool().Draw(t, "defaultEviction") {
		c.HardEviction = nil
	}
	// A reservation above capacity is the badConfig action's business.
	if cgroups.ValidateNodeAllocatable(c) != nil {
		c.SystemReserved, c.KubeReserved = pod.ResourceList{}, pod.ResourceList{}
	}
	c.EnforceNodeAllocatablePods = rapid.IntRange(0, 4).Draw(t, "enforcePods") > 0
	c.CPUCFSQuota = rapid.IntRange(0, 4).Draw(t, "cpuCFSQuota") > 0
	c.CustomCPUCFSQuotaPeriod = rapid.IntRange(0, 3).Draw(t, "periodGate") > 0
	if c.CustomCPUCFSQuotaPeriod {
		c.CPUCFSQuotaPeriod = rapid.SampledFrom([]time.Duration{100 * time.Millisecond, 50 * time.Millisecond, 10 * time.Millisecond,
			time.Millisecond, 1500 * time.Microsecond, time.Second}).Draw(t, "period")
	}
	if rapid.Bool().Draw(t, "qosReserved") {
		p := rapid.SampledFrom([]int64{0, 33, 50, 100}).Draw(t, "qosReservedPercent")
		c.QOSReservedMemoryPercent = &p
	}
	c.MemoryQoS = rapid.Bool().Draw(t, "memoryQoS")
	c.MemoryReservationPolicy = rapid.SampledFrom([]cgroups.MemoryReservationPolicy{cgroups.ReservationNone, cgroups.ReservationTiered}).Draw(t, "reservationPolicy")
	c.PodPidsLimit = rapid.SampledFrom([]int64{-1, 0, 1024}).Draw(t, "podPidsLimit")
	c.ContainerCPUWeight = rapid.SampledFrom([]cgroups.WeightFormula{cgroups.WeightQuadratic, cgroups.WeightLinear}).Draw(t, "containerWeight")
	return c
}

func (m *cgMachine) drawCPU(t *rapid.T, label string) int64 {
	if m.oddQuantities && rapid.IntRange(0, 3).Draw(t, label+"Odd") == 0 {
		return rapid.SampledFrom([]int64{1, 5, 10, 99, 333, 1001}).Draw(t, label)
	}
	return rapid.SampledFrom([]int64{125, 250, 500, 750, 1000, 1500, 2000}).Draw(t, label)
}

func drawMemory(t *rapid.T, label string) int64 {
	return rapid.SampledFrom([]int64{32 * cgMi, 64 * cgMi, 256 * cgMi, cgGi, 100_000_000}).Draw(t, label)
}

// drawContainer draws one container of a pod of the given shape; requests
// never exceed limits, as API validation requires.
func (m *cgMachine) drawContainer(t *rapid.T, name, shape string) pod.Container {
	c := pod.Container{Name: name, Requests: pod.ResourceList{}, Limits: pod.ResourceList{}}
	switch shape {
	case "guaranteed":
		cpu, mem := m.drawCPU(t, "cpu"), drawMemory(t, "memory")
		c.Requests[pod.CPU], c.Limits[pod.CPU] = cpu, cpu
		c.Requests[pod.Memory], c.Limits[pod.Memory] = mem, mem
	case "limited":
		for _, r := range []pod.ResourceName{pod.CPU, pod.Memory} {
			var limit int64
			if r == pod.CPU {
				limit = m.drawCPU(t, "cpuLimit")
			} else {
				limit = drawMemory(t, "memoryLimit")
			}
			c.Limits[r] = limit
			switch rapid.IntRange(0, 2).Draw(t, "requestOf"+string(r)) {
			case 0: // defaulted to the limit
			case 1:
				c.Requests[r] = limit
			case 2:
				if half := limit / 2; r != pod.CPU || half%125 == 0 || m.oddQuantities {
					c.Requests[r] = half
				}
			}
		}
	case "partial", "podLevel":
		for _, r := range []pod.ResourceName{pod.CPU, pod.Memory} {
			switch rapid.IntRange(0, 3).Draw(t, "partial"+string(r)) {
			case 1:
				if r == pod.CPU {
					c.Requests[r] = m.drawCPU(t, "cpu")
				} else {
					c.Requests[r] = drawMemory(t, "memory")
				}
			case 2:
				if r == pod.CPU {
					c.Limits[r] = m.drawCPU(t, "cpuLimit")
				} else {
					c.Limits[r] = drawMemory(t, "memoryLimit")
				}
			case 3:
				if r == pod.CPU {
					v := m.drawCPU(t, "cpu")
					c.Requests[r], c.Limits[r] = v, 2*v
				} else {
					v := drawMemory(t, "memory")
					c.Requests[r], c.Limits[r] = v, 2*v
				}
			}
		}
	}
	if shape != "besteffort" && m.hostHas(2*cgMi) && rapid.IntRange(0, 4).Draw(t, "hugepages") == 0 {
		hp := rapid.SampledFrom([]int64{2 * cgMi, 4 * cgMi}).Draw(t, "hugepagesBytes")
		c.Requests["hugepages-2Mi"], c.Limits["hugepages-2Mi"] = hp, hp
		if c.Requests[pod.Memory] == 0 && c.Requests[pod.CPU] == 0 {
			c.Requests[pod.Memory] = 32 * cgMi
		}
	}
	return c
}

func (m *cgMachine) hostHas(size int64) bool {
	for _, s := range m.cfg.HugePageSizes {
		if s == size {
			return true
		}
	}
	return false
}

func (m *cgMachine) drawPod(t *rapid.T) *pod.Pod {
	shapes := []string{"guaranteed", "limited", "partial", "besteffort"}
	if m.podLevelGate {
		shapes = append(shapes, "podLevel")
	}
	shape := rapid.SampledFrom(shapes).Draw(t, "shape")
	m.uid++
	// UIDs with dashes exercise the systemd escaping.
	p := &pod.Pod{UID: fmt.Sprintf("%04x-uid-%d", m.uid*2654435761%65536, m.uid), Name: fmt.Sprintf("p%d", m.uid), Namespace: "default", Phase: pod.Running}
	for i := range rapid.IntRange(0, 2).Draw(t, "initContainers") {
		c := m.drawContainer(t, fmt.Sprintf("init-%d", i), shape)
		if rapid.Bool().Draw(t, "sidecar") {
			c.RestartPolicy = pod.RestartAlways
		}
		p.InitContainers = append(p.InitContainers, c)
	}
	for i := range rapid.IntRange(1, 3).Draw(t, "appContainers") {
		p.Containers = append(p.Containers, m.drawContainer(t, fmt.Sprintf("app-%d", i), shape))
	}
	if shape != "besteffort" && rapid.IntRange(0, 3).Draw(t, "overhead") == 0 {
		p.Overhead = pod.ResourceList{pod.CPU: rapid.SampledFrom([]int64{125, 250}).Draw(t, "overheadCPU"), pod.Memory: 32 * cgMi}
	}
	if !m.podLevelGate && rapid.IntRange(0, 3).Draw(t, "emptyPodResources") == 0 {
		// With the gate on an empty spec.resources would make the pod
		// BestEffort whatever its containers request (spec §4.3), which
		// CG-CONTENTION's domain does not allow for.
		p.Resources = &pod.Resources{}
	}
	if shape == "podLevel" {
		// API validation: pod-level requests cover the containers' aggregate
		// and limits cover requests.
		agg := p.EffectiveRequests(pod.Options{ExcludeOverhead: true, SkipPodLevelResources: true})
		cpu := agg[pod.CPU] + rapid.SampledFrom([]int64{0, 125, 500, 1000}).Draw(t, "podCPUExtra")
		mem := agg[pod.Memory] + rapid.SampledFrom([]int64{0, 64 * cgMi, cgGi}).Draw(t, "podMemoryExtra")
		if cpu == 0 {
			cpu = 125
		}
		if mem == 0 {
			mem = 64 * cgMi
		}
		p.Resources = &pod.Resources{Requests: pod.ResourceList{pod.CPU: cpu, pod.Memory: mem}}
		switch rapid.IntRange(0, 3).Draw(t, "podLimits") {
		case 1: // Guaranteed at pod level
			p.Resources.Limits = pod.ResourceList{pod.CPU: cpu, pod.Memory: mem}
		case 2:
			p.Resources.Limits = pod.ResourceList{pod.CPU: 2 * cpu}
		case 3:
			p.Resources.Limits = pod.ResourceList{pod.Memory: 2 * mem}
		}
		// A container may not declare more than the pod allows.
		for _, cs := range [][]pod.Container{p.InitContainers, p.Containers} {
			for i := range cs {
				for name, limit := range p.Resources.Limits {
					if cs[i].Limits[name] > limit {
						cs[i].Limits[name] = limit
						if cs[i].Requests[name] > limit {
							cs[i].Requests[name] = limit
						}
					}
				}
			}
		}
	}
	p.ApplyDefaults()
	return p
}

// cgPodSpec describes a pod in a step, with its class under the
// PodLevelResources gate.
type cgPodSpec struct {
	p    *pod.Pod
	gate bool
}

func (s cgPodSpec) String() string {
	p := s.p
	var parts []string
	for _, c := range p.InitContainers {
		kind := "init"
		if c.IsSidecar() {
			kind = "sidecar"
		}
		parts = append(parts, fmt.Sprintf("%s(%s) req=%s lim=%s", c.Name, kind, c.Requests, c.Limits))
	}
	for _, c := range p.Containers {
		parts = append(parts, fmt.Sprintf("%s req=%s lim=%s", c.Name, c.Requests, c.Limits))
	}
	out := fmt.Sprintf("%s %s [%s]", p.UID, p.QOSWith(pod.Options{SkipPodLevelResources: !s.gate}), strings.Join(parts, "; "))
	if len(p.Overhead) > 0 {
		out += " overhead=" + p.Overhead.String()
	}
	if p.Resources != nil {
		out += fmt.Sprintf(" pod-level req=%s lim=%s", p.Resources.Requests, p.Resources.Limits)
	}
	return out
}

type cgConfigSpec struct{ c cgroups.Config }

func (s cgConfigSpec) String() string {
	c := s.c
	qr := "off"
	if c.QOSReservedMemoryPercent != nil {
		qr = fmt.Sprintf("%d%%", *c.QOSReservedMemoryPercent)
	}
	return fmt.Sprintf("driver=%s root=%s capacity=%s system=%s kube=%s eviction=%d enforcePods=%t cfsQuota=%t period=%s gate=%t podLevel=%t qosReserved=%s memoryQoS=%t/%s hugepages=%v pids=%d weight=%s",
		c.CgroupDriver, c.CgroupRoot, c.Capacity, c.SystemReserved, c.KubeReserved, len(c.HardEviction), c.EnforceNodeAllocatablePods,
		c.CPUCFSQuota, c.CPUCFSQuotaPeriod, c.CustomCPUCFSQuotaPeriod, c.PodLevelResources, qr, c.MemoryQoS, c.MemoryReservationPolicy,
		c.HugePageSizes, c.PodPidsLimit, c.ContainerCPUWeight)
}

// --- actions ----------------------------------------------------------------

func (m *cgMachine) addPod(t *rapid.T) {
	p := m.drawPod(t)
	next := append(append([]*pod.Pod(nil), m.pods...), p)
	if len(next) > cgMaxPods || !cgroupscheck.Fits(m.cfg, next) {
		m.begin("addPod", "%s: rejected (does not fit)", cgPodSpec{p, m.cfg.PodLevelResources})
		return
	}
	m.begin("addPod", "%s", cgPodSpec{p, m.cfg.PodLevelResources})
	before, err := cgroups.QOSTierConfigs(m.cfg, m.pods)
	if err != nil {
		m.fail(CGErrors, "QoS tiers of valid pods: %v", err)
	}
	after, err := cgroups.QOSTierConfigs(m.cfg, next)
	if err != nil {
		m.fail(CGErrors, "QoS tiers of valid pods: %v", err)
	}
	// CG-TIER-MONOTONE applies when a tier has a memory limit (qos-reserved
	// memory) that the admission could raise.
	m.tally.Check(CGTierMonotone, before.Burstable.Memory != nil || before.BestEffort.Memory != nil)
	for _, tier := range []struct {
		name          string
		before, after *int64
	}{{"burstable", before.Burstable.Memory, after.Burstable.Memory}, {"besteffort", before.BestEffort.Memory, after.BestEffort.Memory}} {
		if (tier.before == nil) != (tier.after == nil) || tier.before != nil && *tier.after > *tier.before {
			m.fail(CGTierMonotone, "admitting %s raised the %s memory limit from %s to %s", p.UID, tier.name, fmtPtr(tier.before), fmtPtr(tier.after))
		}
	}
	m.pods = next
	m.dirty = true
}

func fmtPtr[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

func (m *cgMachine) removePod(t *rapid.T) {
	if len(m.pods) == 0 {
		m.addPod(t)
		return
	}
	i := rapid.IntRange(0, len(m.pods)-1).Draw(t, "pod")
	m.begin("removePod", "%s", m.pods[i].UID)
	m.pods = append(m.pods[:i:i], m.pods[i+1:]...)
	m.dirty = true
}

// changeConfig restarts the kubelet with a new configuration on a clean
// node; pods that no longer fit are evicted.
func (m *cgMachine) changeConfig(t *rapid.T) {
	c := m.drawConfig(t)
	evicted := 0
	for len(m.pods) > 0 && !cgroupscheck.Fits(c, m.pods) {
		m.pods = m.pods[:len(m.pods)-1]
		evicted++
	}
	// Pods asking for a page size the new host lacks cannot run there.
	kept := m.pods[:0]
	for _, p := range m.pods {
		if m.hostHasAll(c, p) {
			kept = append(kept, p)
		} else {
			evicted++
		}
	}
	m.pods = kept
	m.cfg = c
	m.dirty = true
	m.begin("changeConfig", "%s (evicted %d)", cgConfigSpec{c}, evicted)
}

func (m *cgMachine) hostHasAll(c cgroups.Config, p *pod.Pod) bool {
	has := map[int64]bool{}
	for _, s := range c.HugePageSizes {
		has[s] = true
	}
	ok := true
	visit := func(l pod.ResourceList) {
		for name := range l {
			if pod.IsHugePages(name) {
				size, err := cgroups.HugePageSizeFromResourceName(name)
				ok = ok && err == nil && has[size]
			}
		}
	}
	for _, c := range append(append([]pod.Container(nil), p.InitContainers...), p.Containers...) {
		visit(c.Requests)
		visit(c.Limits)
	}
	return ok
}

// badConfig breaks one field and expects Build to say which, in the
// kubelet's words where it has them; the node keeps its old config.
func (m *cgMachine) badConfig(t *rapid.T) {
	c := m.cfg
	c.Capacity = m.cfg.Capacity.Clone()
	c.SystemReserved = m.cfg.SystemReserved.Clone()
	var field, want string
	switch rapid.IntRange(0, 6).Draw(t, "fault") {
	case 0:
		c.CustomCPUCFSQuotaPeriod = true
		c.CPUCFSQuotaPeriod = rapid.SampledFrom([]time.Duration{999 * time.Microsecond, 1001 * time.Millisecond, 0}).Draw(t, "period")
		field, want = "cpuCFSQuotaPeriod", fmt.Sprintf("invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) %v must be between 1ms and 1sec, inclusive", c.CPUCFSQuotaPeriod)
	case 1:
		c.CustomCPUCFSQuotaPeriod = false
		c.CPUCFSQuotaPeriod = 50 * time.Millisecond
		field, want = "cpuCFSQuotaPeriod", "invalid configuration: cpuCFSQuotaPeriod (--cpu-cfs-quota-period) 50ms requires feature gate CustomCPUCFSQuotaPeriod"
	case 2:
		p := rapid.SampledFrom([]int64{-1, 101, 1000}).Draw(t, "percent")
		c.QOSReservedMemoryPercent = &p
		field, want = "qosReserved[memory]", fmt.Sprintf(`failed to parse percentage "%d%%" for "memory" resource: percentage must be between 0 and 100`, p)
	case 3:
		c.SystemReserved[pod.CPU] = c.Capacity[pod.CPU] + 1
		field = "nodeAllocatable"
	case 4:
		c.SystemReserved[pod.Memory] = -rapid.Int64Range(1, cgGi).Draw(t, "negative")
		field, want = "systemReserved[memory]", fmt.Sprintf(`resource quantity for "memory" cannot be negative: %d`, c.SystemReserved[pod.Memory])
	case 5:
		c.HugePageSizes = []int64{3 * cgMi}
		delete(c.Capacity, "hugepages-2Mi")
		field = "hugePageSizes[0]"
	case 6:
		c.CgroupDriver = "docker"
		field = "cgroupDriver"
	}
	m.begin("badConfig", "%s", field)
	_, err := cgroups.Build(c, m.pods)
	if field == "nodeAllocatable" {
		mod, _ := cgroupscheck.ModelInput(c, m.pods)
		merr := model.Validate(mod)
		if merr == nil {
			m.fail(CGModel, "the model accepts reservations above capacity %s", c.SystemReserved)
		}
		want = merr.Error()
	}
	m.expectError(err, field, want)
}

// badPod adds one malformed pod (or one too many) and expects Build to name
// the field; the node keeps its pods.
func (m *cgMachine) badPod(t *rapid.T) {
	p := m.drawPod(t)
	pods := append(append([]*pod.Pod(nil), m.pods...), p)
	c := m.cfg
	field := fmt.Sprintf("pods[%d]", len(m.pods))
	want := ""
	switch rapid.IntRange(0, 5).Draw(t, "fault") {
	case 0:
		p.Containers[0].Requests[pod.CPU] = -rapid.Int64Range(1, 1000).Draw(t, "negative")
		field += ".containers[0].requests[cpu]"
		want = fmt.Sprintf("%s: %d must not be negative", field, p.Containers[0].Requests[pod.CPU])
	case 1:
		p.Containers = append(p.Containers, p.Containers[0])
		field += fmt.Sprintf(".containers[%d].name", len(p.Containers)-1)
	case 2:
		p.UID = rapid.SampledFrom([]string{"", "../x", "a/b", "-a"}).Draw(t, "uid")
		field += ".uid"
	case 3:
		for _, cs := range [][]pod.Container{p.InitContainers, p.Containers} {
			for i := range cs {
				delete(cs[i].Requests, "hugepages-2Mi")
				delete(cs[i].Limits, "hugepages-2Mi")
			}
		}
		p.Containers[0].Limits["hugepages-2Mi"] = 2 * cgMi
		p.Containers[0].Requests["hugepages-2Mi"] = 2 * cgMi
		c.HugePageSizes = []int64{cgGi}
		c.Capacity = m.cfg.Capacity.Clone()
		delete(c.Capacity, "hugepages-2Mi")
		// Only this pod: the node's pods may use 2Mi pages themselves.
		// Requests are checked before limits.
		pods = []*pod.Pod{p}
		field = "pods[0].containers[0].requests[hugepages-2Mi]"
		want = field + ": page size 2MB is not one of the host's hugePageSizes"
	case 4:
		if len(m.pods) == 0 {
			pods = []*pod.Pod{p, p}
			field = "pods[1].uid"
		} else {
			p.UID = m.pods[0].UID
			field += ".uid"
		}
	case 5:
		c.MaxPods = len(pods) - 1
		if c.MaxPods == 0 {
			c.MaxPods = 1
			pods = append(pods, p)
		}
		field = "pods"
		want = fmt.Sprintf("pods: %d pods exceed maxPods %d", len(pods), c.MaxPods)
	}
	m.begin("badPod", "%s: %s", field, cgPodSpec{p, m.cfg.PodLevelResources})
	_, err := cgroups.Build(c, pods)
	m.expectError(err, field, want)
}

func (m *cgMachine) expectError(err error, field, want string) {
	// Bad input always has a field to name, so CG-ERRORS applies.
	m.tally.Check(CGErrors, true)
	var fe *cgroups.FieldError
	if !errors.As(err, &fe) {
		m.fail(CGErrors, "want an error naming %s, got %v (%T)", field, err, err)
	}
	if fe.Field != field {
		m.fail(CGErrors, "want an error naming %s, got field %q: %v", field, fe.Field, err)
	}
	if want != "" && err.Error() != want {
		m.fail(CGErrors, "error message\n  got:  %s\n  want: %s", err, want)
	}
}
