// Package pod holds the minimal pod model every nodeproof subsystem shares:
// pods, containers and their resource requests, the QoS class, and the
// effective pod requests and limits that the kubelet computes with sidecars,
// init containers, pod-level resources and overhead.
//
// Quantities are plain integers in fixed units so the core never parses
// Kubernetes quantities: cpu in millicores, memory, ephemeral storage and
// hugepages in bytes, every other resource (pods, extended resources) in
// whole units. agent/kube converts real manifests into these types after the
// API server's defaulting.
package pod
