package cgroups

import "github.com/nodeproof/nodeproof/core/pod"

// Version is the cgroup filesystem version the values are rendered for.
type Version int

const (
	V1 Version = 1
	V2 Version = 2
)

// WeightFormula says how CPUShares becomes cgroup v2 cpu.weight. It depends
// on who writes the cgroup: the kubelet writes kubepods, the QoS tiers and
// the pods itself; the OCI runtime writes the containers (§5.7).
type WeightFormula int

const (
	// WeightLinear is the kubelet's getCPUWeight, which the v1.36 kubelet
	// uses for every cgroup it writes, and what runtimes before runc 1.3.2
	// and crun 1.23 used for containers. It is the zero value.
	WeightLinear WeightFormula = iota
	// WeightQuadratic is the runtimes' newer container formula
	// (CPUWeightQuadratic): 1024 shares → weight 100.
	WeightQuadratic
)

func (f WeightFormula) String() string {
	switch f {
	case WeightLinear:
		return "linear"
	case WeightQuadratic:
		return "quadratic"
	}
	return "WeightFormula(?)"
}

// ResourceConfig is the kubelet's ResourceConfig for one cgroup. A nil field
// is not set: the cgroup keeps whatever it has or inherits (upstream passes
// nil pointers for "no limit").
type ResourceConfig struct {
	CPUShares *uint64 // cgroup v1 cpu.shares; v2 converts it to cpu.weight
	CPUQuota  *int64  // microseconds per period; -1 means unlimited
	CPUPeriod *uint64 // microseconds
	Memory    *int64  // bytes
	// HugePageLimit maps a page size in bytes to a limit in bytes.
	HugePageLimit map[int64]int64
	PidsLimit     *int64
	// Unified holds cgroup v2 files written verbatim (memory.min, memory.low).
	Unified map[string]string
	// Weight is the formula Values uses for cpu.weight on v2. Build sets
	// WeightQuadratic (Config.ContainerCPUWeight) on containers, whose
	// cgroups the runtime writes; the zero value is the kubelet's formula.
	Weight WeightFormula
}

// File is one write to a cgroup's interface file.
type File struct {
	Name  string // e.g. "cpu.shares", "memory.max"
	Value string // exactly what is written, e.g. "2048", "max 100000"
}

// Kind says which part of the kubelet's hierarchy a cgroup is.
type Kind int

const (
	// KindNodeAllocatable is kubepods: the node-allocatable cgroup, which is
	// also the Guaranteed QoS tier (§5.5, §5.6).
	KindNodeAllocatable Kind = iota + 1
	// KindQOS is the burstable or besteffort tier.
	KindQOS
	// KindPod is a pod cgroup, pod<uid>.
	KindPod
	// KindContainer is a running container (app container or sidecar).
	KindContainer
)

func (k Kind) String() string {
	switch k {
	case KindNodeAllocatable:
		return "node-allocatable"
	case KindQOS:
		return "qos"
	case KindPod:
		return "pod"
	case KindContainer:
		return "container"
	}
	return "Kind(?)"
}

// Cgroup is one node of the hierarchy.
type Cgroup struct {
	// Path is relative to the cgroup root, slash separated, without a
	// leading slash: "kubepods", "kubepods/burstable/pod<uid>", or the
	// systemd driver's "kubepods.slice/kubepods-burstable.slice/...".
	Path   string
	Config ResourceConfig
	// Kind, QOS, PodUID and Container say what the cgroup is for, so that
	// checks need not parse paths. QOS is the tier for KindQOS
	// (Burstable or BestEffort), Guaranteed for kubepods, and the pod's
	// class for pods and containers (Config.PodQOS, under the config's
	// PodLevelResources gate); PodUID and Container are empty where they
	// do not apply.
	Kind      Kind
	QOS       pod.QOSClass
	PodUID    string
	Container string
}
