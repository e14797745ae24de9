// Package cgroups computes the kubelet's pod and QoS cgroup configuration
// (pkg/kubelet/cm in v1.36): CPU shares and quota, memory limits, hugetlb
// limits, the QoS tiers and the node-allocatable root, for a set of pods.
//
// It returns data only: a Hierarchy of cgroups, each with a ResourceConfig,
// and Values renders a config as the ordered file writes for cgroup v1 or v2.
// agent/cgroupfs performs the writes on a real cgroupfs.
package cgroups
