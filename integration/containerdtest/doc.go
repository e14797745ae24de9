// Package containerdtest ties a real containerd (agent/containerd) to a
// test: Start skips the test with the reason a host cannot run one (not
// root; containerd, ctr, runc or busybox-static not installed), fails it
// when the containerd does not start, and registers a cleanup that stops
// everything and fails the test if any process, mount, cgroup or goroutine
// is left. The image builders and options are agent/containerd's, named
// here too so that a test needs one import.
package containerdtest
