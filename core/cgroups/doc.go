// Package cgroups computes the kubelet's pod and QoS cgroup configuration
// (pkg/kubelet/cm in v1.36, spec/cgroups.md §5): CPU shares and quota,
// memory limits, hugetlb and pids limits, Memory QoS, the QoS tiers and the
// node-allocatable root, for a set of pods.
//
// It returns data only: a Hierarchy of cgroups, each with a ResourceConfig,
// and Values renders a config as the ordered file writes for cgroup v1 or
// v2. agent/cgroupfs performs the writes on a real cgroupfs.
//
// # API
//
//	cfg := cgroups.DefaultConfig()           // v1.36 defaults
//	cfg.Capacity = pod.ResourceList{"cpu": 4000, "memory": 16 << 30}
//	h, err := cgroups.Build(cfg, pods)       // kubepods, tiers, pods, containers
//	for _, cg := range h {
//	        files, err := cg.Config.Values(cgroups.V2)
//	        // write files, in order, to cg.Path under the cgroup root
//	}
//
// The pieces Build is made of are exported for tests and tools:
// MilliCPUToShares, MilliCPUToQuota (with the CustomCPUCFSQuotaPeriod gate
// as an argument), the inverse conversions, CPUWeightLinear (the kubelet's
// v2 weight) and CPUWeightQuadratic (the runtimes' newer container weight),
// HugePageLimits, ResourceConfigForPod (upstream's function) and
// Config.PodCgroupConfig (with the pod cgroup's creation extras: pids and
// zero hugetlb limits), Config.PodQOS (the class Build places a pod by:
// GetPodQOS under the PodLevelResources gate), ContainerConfig,
// QOSTierConfigs, NodeAllocatableConfig, NodeAllocatableAbsolute,
// ReportedAllocatable, ValidateNodeAllocatable and ParseQOSReserved.
// Names: KubepodsPath, PodPath, and the table in names.go for both drivers.
//
// # Contract
//
// Everything is a pure function of its arguments: no clock, goroutines,
// locks, I/O or randomness. Maps are read in sorted key order wherever the
// order shows. Input is validated (Config.Validate, the pods in Build) and
// bad input gets a *FieldError naming the field and the rule, in upstream's
// words where the kubelet has its own (the CFS period, --qos-reserved,
// reservations, node allocatable); nothing panics on input. Collections
// are bounded: at most MaxPodsBound pods, MaxContainersPerPod containers per
// pod, MaxHugePageSizes page sizes, and quantities within MaxMilliCPU and
// MaxQuantity, so every sum and product stays inside int64.
//
// Not modelled: the CPU manager's static policy (exclusive CPUs, the quota
// exemption and cpusets), in-place resize, the kube-reserved and
// system-reserved cgroups, cgroupsPerQOS=false, swap, and container-level
// Memory QoS (memory.high). docs/deviations.md lists the differences.
package cgroups
