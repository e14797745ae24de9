// Package cgroups fuzzes the kubelet's pod and QoS cgroup configuration
// (core/cgroups): the fuzzer's bytes become a node's kubelet config and the
// pods on it, Build turns them into the cgroup hierarchy, and every input
// must get a hierarchy that agrees with models/cgroups, or an error naming
// what is wrong with it.
//
// It is a lean package of its own, without rapid or testify, for the
// reasons given in fuzz/doc.go, and its target takes plain bytes so that
// OSS-Fuzz's go-118-fuzz-build can build it (docs/fuzzing.md).
package cgroups
