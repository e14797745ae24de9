// Package realkubelet runs the kubelet itself, the v1.36.3 binary built
// from the Go module proxy, as a standalone node under test: no API server,
// static pods written into its manifest directory, a private containerd
// (agent/containerd) as its runtime, and observers that read what it shows
// from outside, through its real interfaces: the :10250 /pods endpoint, the
// PodResources gRPC API, the device manager's checkpoint file, the
// cgroupfs and CRI. It is how nodeproof's generated scenarios reach the
// real kubelet, and how the simulation's predictions are compared with a
// real node.
//
// A node keeps the host as it found it. Everything it writes is under one
// private directory: containerd's root, state and socket, the kubelet's
// root, cert, pod-log and volume-plugin directories, its manifests and its
// configuration. Its pods live under a cgroupRoot of its own, made in every
// cgroup v1 hierarchy and removed again. The kubelet runs in a private
// mount namespace, because some of what it touches is fixed whatever its
// flags say: the device plugin directory /var/lib/kubelet/device-plugins
// (bound there from the private directory, so plugins outside reach it
// through DevicePluginDir), /var/log/containers, /usr/libexec/kubernetes
// (/var/lib, /var/log and /usr/libexec are overlays inside the namespace,
// their writes landing in the private directory), and the kernel flags it
// rewrites to the values it wants (each covered, inside the namespace, by
// a read-only file holding that value, so it finds nothing to change).
// Stop kills the kubelet, containerd, its shims and containers, and removes
// the cgroups, mounts and files; HostState and Diff let a test prove that
// nothing is left.
//
// Waits end on observable conditions (healthz answering, the PodResources
// socket serving, a pod reaching a phase, a plugin's devices listed again),
// each with a bound that turns a hang into an error naming what hung.
package realkubelet
