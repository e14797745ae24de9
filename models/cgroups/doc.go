// Package cgroups is the reference model of the kubelet's pod and QoS
// cgroups: for a node and its pods it states, as straight-line arithmetic
// from spec/cgroups.md §5, every cgroup's path and the exact files and
// values written to it on cgroup v1 or v2.
//
// It has its own tiny pod type and never imports core/. Where core builds
// a ResourceConfig and renders it, the model writes the files directly, one
// rule per line, so a reader can hold it against the spec. It accepts only
// well-formed input (the properties suite checks core's rejection of bad
// input separately) and reports the node-allocatable validation error the
// kubelet gives.
package cgroups
