// Package cgroupfs applies a cgroup hierarchy computed by core/cgroups to a
// real cgroup filesystem, reads the interface files back, and removes what it
// created: the imperative shell around core/cgroups.
//
// A Manager owns one root, a path prefix such as "nodeproof-test-1a2b" under
// each controller's mount (cgroup v1) or under the unified mount (cgroup v2).
// Every cgroup it creates lives below that root, so tests never touch the
// host's kubepods.
//
// Every value the manager writes is core's: Apply renders each config with
// core/cgroups ResourceConfig.Values for the manager's version and writes
// those files, in that order, to the interface files. So on v2 cpu.weight
// is the kubelet's linear conversion for kubepods, the QoS tiers and the
// pods, and the runtimes' quadratic one for containers, as the config's
// Weight says (spec/cgroups.md §5.7); on v1 cpu.cfs_period_us comes before
// cpu.cfs_quota_us, and a period the kernel refuses against the old quota
// is written again after the quota, as runc does.
// github.com/containerd/cgroups/v3 finds the controllers (cgroups.Mode
// decides v1 or v2 unless the caller picks one), creates the cgroups in each
// v1 hierarchy, enables the controllers on v2 and moves processes.
//
// The manager writes only the controllers a ResourceConfig can set: cpu,
// memory, pids and hugetlb. A controller the host lacks (this testbed's
// hosts have no v1 hugetlb) is reported by Missing; Apply skips its limits,
// as the kubelet does, and Read and Verify answer with an *UnsupportedError
// for its files, so a caller can say why a value was not checked.
package cgroupfs
