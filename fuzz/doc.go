// Package fuzz holds the fuzz targets and cross-checks that need the real
// libraries nodeproof's core imitates: go-spew for the checkpoint checksum,
// the k8s.io/kubelet protobuf types for ContainerAllocateResponse, and the
// property suites for the state machine target.
//
// Targets that fuzz a decoder of outside input live in lean subpackages
// (checkpointdecode, registration, manifests, crianswers, httpprobe), and so do the admission and
// preemption targets (admission): Go's fuzzer slows down with the size of the
// instrumented test binary, and this package links gRPC and protobuf.
package fuzz
