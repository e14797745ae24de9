// Package cgroupfs applies a cgroup hierarchy computed by core/cgroups to a
// real cgroup filesystem, reads the interface files back, and removes what it
// created: the imperative shell around core/cgroups.
//
// A Manager owns one root, a path prefix such as "nodeproof-test-1a2b" under
// each controller's mount (cgroup v1) or under the unified mount (cgroup v2).
// Every cgroup it creates lives below that root, so tests never touch the
// host's kubepods.
//
// The writes go through github.com/containerd/cgroups/v3: cgroup1 on legacy
// and hybrid hosts, cgroup2 on unified hosts (cgroups.Mode decides unless the
// caller picks a version). A ResourceConfig becomes runtime-spec
// LinuxResources on v1 and cgroup2.Resources on v2; the few values the
// library cannot express the way the kubelet's runc writes them (pids.max
// "max" on v1, memory.max "max" and the verbatim Unified files on v2) are
// written directly. On v2 cpu.weight is the kubelet's linear conversion of
// the shares, not the OCI runtimes' newer one (spec/cgroups.md §5.7).
//
// The manager writes only the controllers a ResourceConfig can set: cpu,
// memory, pids and hugetlb. A controller the host lacks (this testbed's
// hosts have no v1 hugetlb) is reported by Missing; Apply skips its limits,
// as the kubelet does, and Read and Verify answer with an *UnsupportedError
// for its files, so a caller can say why a value was not checked.
package cgroupfs
