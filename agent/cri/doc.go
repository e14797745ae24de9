// Package cri is the kubelet's side of the Container Runtime Interface
// (k8s.io/cri-api, runtime v1) over a runtime's Unix socket: the calls image
// garbage collection needs (ListImages, ImageStatus, RemoveImage,
// ImageFsInfo, ListContainers, ContainerStatus, ListPodSandbox) and the few
// that put an image in use (RunPodSandbox, CreateContainer, StartContainer
// and their Stop and Remove counterparts); and ExecSync, which exec probes
// run through, with the kubelet's timeout rules and text.
//
// Every answer is validated before it leaves the package: an image without
// an ID, a size no filesystem could hold, a container without an image
// reference or a list longer than MaxItems is a *ResponseError naming the
// RPC, the field and the rule, never a panic and never a half-read list. The
// kubelet itself trusts the runtime here; core/imagegc would otherwise turn
// a runtime's bug into an eviction decision.
//
// Every RPC runs under Options.Timeout (the kubelet's
// --runtime-request-timeout), whatever deadline the caller's context has.
//
// ImageFsStats is what the kubelet's stats provider hands image GC: the
// runtime's ImageFsInfo says where the images live and how many bytes it
// counts; the capacity and the available bytes are the filesystem's own,
// read with statfs on that mountpoint, as cAdvisor does.
package cri
