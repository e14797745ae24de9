// Package cgroups is `nodeproof cgroups -f FILE`: the pod and QoS cgroups,
// with every file value, a v1.36 kubelet keeps for the pods of a node file.
// agent/kube reads the file, sizes the node and plays its admission;
// core/cgroups builds the hierarchy; this package prints it as a tree or
// as JSON.
package cgroups
