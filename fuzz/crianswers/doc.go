// Package crianswers fuzzes agent/cri's checks of the container runtime's
// answers: the bytes of a ListImages, ListContainers, ListPodSandbox,
// ContainerStatus or ImageFsInfo response, decoded as the gRPC client would,
// must give either values that keep the checks' promises or a
// *cri.ResponseError naming the RPC, the field and the rule; never a panic.
// It is a lean package of its own for the reason given in fuzz/doc.go.
package crianswers
