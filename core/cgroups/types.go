package cgroups

// Version is the cgroup filesystem version the values are rendered for.
type Version int

const (
	V1 Version = 1
	V2 Version = 2
)

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
}

// File is one write to a cgroup's interface file.
type File struct {
	Name  string // e.g. "cpu.shares", "memory.max"
	Value string // exactly what is written, e.g. "2048", "max 100000"
}

// Cgroup is one node of the hierarchy.
type Cgroup struct {
	// Path is relative to the cgroup root, slash separated, without a
	// leading slash: "kubepods", "kubepods/burstable/pod<uid>", or the
	// systemd driver's "kubepods.slice/kubepods-burstable.slice/...".
	Path   string
	Config ResourceConfig
}
