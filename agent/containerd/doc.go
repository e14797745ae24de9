// Package containerd runs a real containerd of nodeproof's own: Debian's
// containerd and runc, started as a child process with a config, root,
// state, runc root and socket of its own under a temporary directory (never
// the host's socket), containerd's root on a tmpfs of a chosen size so that
// the image filesystem's capacity and availability are the kernel's own.
// Start waits, bounded, until the CRI socket answers Version; Stop always
// removes everything it started: the sandboxes and containers left in the
// runtime, containerd, its shims, the mounts, the cgroups below its own
// parent and the directory, then checks that no process, mount or cgroup
// is left.
//
// It also builds OCI images in Go (layers of chosen sizes, some shared, and
// a runnable one from busybox-static's binary) and imports them with
// `ctr images import` into the k8s.io namespace the CRI plugin serves, so
// nothing is pulled from a network. The sandbox (pause) image is one of
// these, named in containerd's config.
//
// The integration tests reach it through integration/containerdtest, which
// ties a containerd's life to a test; the real-kubelet harness
// (realkubelet) runs its node on one. It installs nothing: Unavailable says
// what a host lacks (root, containerd, ctr, runc, busybox-static).
package containerd
