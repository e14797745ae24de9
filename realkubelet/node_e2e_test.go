//go:build nodee2e

// The tests that run the real kubelet. They are built only with the
// nodee2e tag (make node-e2e, which builds the kubelet first), so that
// go test ./... neither starts a build of minutes nor skips them: asked
// for, they run or fail.

package realkubelet

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
	"github.com/nodeproof/nodeproof/core/devicemanager/checkpoint"
)

// podLimit bounds a static pod's way from manifest to Running (the
// kubelet reads the directory every second; a pod took 1.3-1.5 s here).
const podLimit = 60 * time.Second

// startNode starts a node for t; the cleanup stops it and fails t on
// anything left.
func startNode(t *testing.T) *Node {
	t.Helper()
	requireNode(t)
	began := time.Now()
	n, err := Start(context.Background(), Options{})
	require.NoError(t, err)
	t.Logf("node started, kubelet ready, in %v", time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(n.LogTail())
		}
		assert.NoError(t, n.Stop())
	})
	return n
}

// busyboxPod is a static pod of one busybox container sleeping: on the
// host network (there is no CNI), killed at once when it goes (busybox
// ignores SIGTERM).
func busyboxPod(name string, limits corev1.ResourceList) *corev1.Pod {
	zero := int64(0)
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			HostNetwork:                   true,
			TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{{
				Name:            "main",
				Image:           BusyboxImageName,
				ImagePullPolicy: corev1.PullNever,
				Command:         []string{"/bin/sleep", "3600"},
				Resources:       corev1.ResourceRequirements{Limits: limits, Requests: limits},
			}},
		},
	}
}

func running(p corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].Ready
}

func TestStaticPodRuns(t *testing.T) {
	n := startNode(t)
	ctx := context.Background()

	written := time.Now()
	require.NoError(t, n.WriteStaticPod(busyboxPod("sleeper", corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("100m"),
		corev1.ResourceMemory: resource.MustParse("32Mi"),
	})))
	pod, err := n.WaitPod(ctx, "sleeper", podLimit, running)
	require.NoError(t, err)
	t.Logf("static pod Running %v after its manifest", time.Since(written).Round(time.Millisecond))
	assert.Equal(t, corev1.PodQOSGuaranteed, pod.Status.QOSClass)
	assert.Zero(t, pod.Status.ContainerStatuses[0].RestartCount)

	// The kubelet asked containerd for one sandbox and one container, both
	// running, and wrote the pod's limits into its cgroup.
	sandboxes, err := n.Containerd.CRI.ListPodSandbox(ctx)
	require.NoError(t, err)
	require.Len(t, sandboxes, 1)
	assert.Equal(t, StaticPodName("sleeper"), sandboxes[0].Name)
	containers, err := n.Containerd.CRI.ListContainers(ctx)
	require.NoError(t, err)
	require.Len(t, containers, 1)
	assert.Equal(t, "main", containers[0].Name)
	limit, err := n.CgroupValue("memory", PodCgroup(pod), "memory.limit_in_bytes")
	require.NoError(t, err)
	assert.Equal(t, "33554432", limit)
	quota, err := n.CgroupValue("cpu", PodCgroup(pod), "cpu.cfs_quota_us")
	require.NoError(t, err)
	assert.Equal(t, "10000", quota)

	// Its manifest gone, the kubelet kills the pod and forgets it.
	require.NoError(t, n.RemoveStaticPod("sleeper"))
	require.NoError(t, waitGone(ctx, n, "sleeper"))
}

// waitGone waits until /pods no longer lists the pod.
func waitGone(ctx context.Context, n *Node, name string) error {
	ctx, cancel := context.WithTimeout(ctx, podLimit)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if _, found, err := n.Pod(ctx, name); err == nil && !found {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.New("pod " + name + " still listed")
		case <-tick.C:
		}
	}
}

func TestDevicesSurviveKubeletKill(t *testing.T) {
	n := startNode(t)
	ctx := context.Background()
	const resourceName = "nodeproof.io/dev"
	plugin, err := testplugin.Start(testplugin.Config{
		Dir:          n.DevicePluginDir,
		Endpoint:     "nodeproof-dev.sock",
		ResourceName: resourceName,
		Devices:      testplugin.Healthy("d0", "d1", "d2"),
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	t.Cleanup(plugin.Stop)
	require.NoError(t, n.waitReady(ctx, []string{resourceName}))
	require.Equal(t, 1, plugin.Registrations())

	require.NoError(t, n.WriteStaticPod(busyboxPod("holder", corev1.ResourceList{
		resourceName: resource.MustParse("2"),
	})))
	pod, err := n.WaitPod(ctx, "holder", podLimit, running)
	require.NoError(t, err)
	held, err := n.ContainerDevices(ctx, "holder", "main")
	require.NoError(t, err)
	require.Len(t, held[resourceName], 2, "PodResources List: %v", held)
	require.Len(t, plugin.Calls(testplugin.Allocate), 1)

	// The checkpoint holds the same allocation.
	before, err := n.Checkpoint()
	require.NoError(t, err)
	require.Len(t, before.PodDeviceEntries, 1)
	entry := before.PodDeviceEntries[0]
	assert.Equal(t, string(pod.UID), entry.PodUID)
	assert.Equal(t, "main", entry.ContainerName)
	assert.ElementsMatch(t, held[resourceName], flatten(entry.DeviceIDs))
	assert.ElementsMatch(t, []string{"d0", "d1", "d2"}, before.RegisteredDevices[resourceName])

	// kill -9; the container keeps running; the kubelet comes back, the
	// plugin registers again and the allocation is restored, not redone.
	began := time.Now()
	require.NoError(t, n.RestartKubelet(ctx, resourceName))
	t.Logf("kill -9 to healthz and the plugin registered again: %v", time.Since(began).Round(time.Millisecond))
	// The plugin registered once at its start and once when the restarted
	// kubelet created kubelet.sock anew.
	assert.Equal(t, 2, plugin.Registrations())
	// The killed kubelet's stream ends as its connection closes; the new
	// kubelet's stays open.
	assert.Eventually(t, func() bool { return plugin.Watching() == 1 }, podLimit, pollEvery, "ListAndWatch streams open: %d", plugin.Watching())
	// The restarted kubelet lists the pod once its file source has read
	// the manifest again; from then on, PodResources shows its devices.
	pod, err = n.WaitPod(ctx, "holder", podLimit, running)
	require.NoError(t, err)
	assert.Zero(t, pod.Status.ContainerStatuses[0].RestartCount)
	after, err := n.ContainerDevices(ctx, "holder", "main")
	require.NoError(t, err)
	assert.Equal(t, held, after)
	restored, err := n.Checkpoint()
	require.NoError(t, err)
	assert.Equal(t, before.PodDeviceEntries, restored.PodDeviceEntries)
	assert.Len(t, plugin.Calls(testplugin.Allocate), 1, "the restarted kubelet allocated again")
}

// A pod asking for more devices than the plugin has is admitted by the
// predicates (the kubelet drops extended resources from its fit check) and
// refused by the device manager: /pods shows it Failed with the reason
// UnexpectedAdmissionError, no Allocate reaches the plugin, the checkpoint
// holds no allocation and no sandbox was made.
func TestTooManyDevicesRejected(t *testing.T) {
	n := startNode(t)
	ctx := context.Background()
	const resourceName = "nodeproof.io/dev"
	plugin, err := testplugin.Start(testplugin.Config{
		Dir:          n.DevicePluginDir,
		Endpoint:     "nodeproof-dev.sock",
		ResourceName: resourceName,
		Devices:      testplugin.Healthy("d0", "d1"),
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	t.Cleanup(plugin.Stop)
	require.NoError(t, n.waitReady(ctx, []string{resourceName}))

	require.NoError(t, n.WriteStaticPod(busyboxPod("greedy", corev1.ResourceList{
		resourceName: resource.MustParse("3"),
	})))
	pod, err := n.WaitPod(ctx, "greedy", podLimit, func(p corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	require.NoError(t, err)
	assert.Equal(t, "UnexpectedAdmissionError", pod.Status.Reason)
	assert.Contains(t, pod.Status.Message, "Requested: 3, Available: 2")
	assert.Empty(t, plugin.Calls(testplugin.Allocate))
	cp, err := n.Checkpoint()
	require.NoError(t, err)
	assert.Empty(t, cp.PodDeviceEntries)
	sandboxes, err := n.Containerd.CRI.ListPodSandbox(ctx)
	require.NoError(t, err)
	assert.Empty(t, sandboxes)
}

// TestHostUnchanged starts a node, runs a pod and a kubelet restart on it,
// stops it, and compares the host before and after. While the node runs,
// the kubelet's own view differs (its device plugin directory holds
// kubelet.sock) and the host's does not.
func TestHostUnchanged(t *testing.T) {
	requireNode(t)
	before, err := CaptureHost()
	require.NoError(t, err)
	ctx := context.Background()
	n, err := Start(ctx, Options{})
	require.NoError(t, err)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			assert.NoError(t, n.Stop())
		}
	})

	require.FileExists(t, filepath.Join(n.DevicePluginDir, "kubelet.sock"))
	assert.NoDirExists(t, DevicePluginPath, "the kubelet's device plugin directory is visible on the host")
	during, err := CaptureHost()
	require.NoError(t, err)
	assert.Equal(t, before.KernelFlags, during.KernelFlags)
	assert.Equal(t, []int{HealthzPort, ServerPort}, during.Listening)

	require.NoError(t, n.WriteStaticPod(busyboxPod("visitor", nil)))
	_, err = n.WaitPod(ctx, "visitor", podLimit, running)
	require.NoError(t, err)
	// A kubelet that dies by itself (here, killed behind the harness's
	// back) starts again, into a new namespace.
	require.NoError(t, n.proc.cmd.Process.Kill())
	select {
	case <-n.proc.exited:
	case <-time.After(stopLimit):
		t.Fatal("the killed kubelet was not reaped")
	}
	require.NoError(t, n.StartKubelet(ctx))
	_, err = n.WaitPod(ctx, "visitor", podLimit, running)
	require.NoError(t, err)
	ownContainerd := n.Containerd.Dir

	stopped = true
	require.NoError(t, n.Stop())
	after, err := CaptureHost()
	require.NoError(t, err)
	assert.Empty(t, Diff(before, after, ownContainerd))
}

// A kubelet that exits at once fails Start with what it said, and the
// failed Start leaves the host as it was.
func TestFailedStartLeavesNothing(t *testing.T) {
	requireNode(t)
	before, err := CaptureHost()
	require.NoError(t, err)
	fake := filepath.Join(t.TempDir(), "kubelet")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho no kubelet here >&2\nexit 3\n"), 0o755))
	n, err := Start(context.Background(), Options{Kubelet: fake})
	require.Error(t, err)
	assert.Nil(t, n)
	assert.Contains(t, err.Error(), "the kubelet exited before it was ready: exit status 3")
	assert.Contains(t, err.Error(), "no kubelet here")
	after, err := CaptureHost()
	require.NoError(t, err)
	assert.Empty(t, Diff(before, after, ""))
}

func TestBinaryIsTheRelease(t *testing.T) {
	bin, err := Find()
	require.NoError(t, err)
	out, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	assert.Equal(t, "Kubernetes "+Version+"\n", string(out))
}

// requireNode fails t, naming what is missing, unless this host can run
// a node and the kubelet is built.
func requireNode(t *testing.T) {
	t.Helper()
	if why := Unavailable(); why != "" {
		t.Fatalf("this host cannot run a real kubelet: %s", why)
	}
	if _, err := Find(); err != nil {
		t.Fatalf("%v (make node-e2e builds it first)", err)
	}
}

// flatten lists a checkpoint entry's devices over every NUMA node.
func flatten(d checkpoint.DevicesPerNUMA) []string {
	var ids []string
	for _, list := range d {
		ids = append(ids, list...)
	}
	return ids
}
