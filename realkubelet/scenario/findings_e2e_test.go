//go:build nodee2e

package scenario

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
	"github.com/nodeproof/nodeproof/realkubelet"
)

// SIM-F2 on the real kubelet, through the way in of kubernetes issue
// #138446: a running pod whose regular init container held a device (it
// has exited) is refused when the kubelet, killed with SIGKILL and started
// again, admits it anew before the plugin has registered again, and its
// running app container is killed. The plugin is stopped before the kill,
// so that the window before its new registration, which the sweep hits
// most of the time, lasts.
func TestFindingSIMRestartRejectsRunning(t *testing.T) {
	if why := realkubelet.Unavailable(); why != "" {
		t.Fatalf("this host cannot run a real kubelet: %s", why)
	}
	ctx := context.Background()
	n, err := realkubelet.Start(ctx, realkubelet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(n.LogTail())
		}
		assert.NoError(t, n.Stop())
	})
	plugin, err := testplugin.Start(testplugin.Config{
		Dir: n.DevicePluginDir, Endpoint: "nodeproof-dev.sock", ResourceName: Resource,
		Devices: testplugin.Healthy(Devices...), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	t.Cleanup(plugin.Stop)

	spec := PodSpec{Name: "p0", QOS: corev1.PodQOSBestEffort, Init: true, InitDevices: 1}
	require.NoError(t, n.WriteStaticPod(spec.Pod()))
	before, err := n.WaitPod(ctx, spec.Name, settleLimit, running)
	require.NoError(t, err)
	require.True(t, mainRunning(ctx, t, n))

	plugin.Stop()
	require.NoError(t, n.RestartKubelet(ctx))
	after, err := n.WaitPod(ctx, spec.Name, settleLimit, ended)
	require.NoError(t, err, "the pod ran on: SIM-F2 is not shown")
	assert.Equal(t, before.UID, after.UID)
	assert.Equal(t, "UnexpectedAdmissionError", after.Status.Reason)
	assert.Contains(t, after.Status.Message, "no healthy devices present; cannot allocate unhealthy devices "+Resource)
	// Its app container, which asked no device, is killed: CRI no longer
	// has it running.
	ctx, cancel := context.WithTimeout(ctx, settleLimit)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for mainRunning(ctx, t, n) {
		select {
		case <-ctx.Done():
			t.Fatal("the refused pod's app container still runs")
		case <-tick.C:
		}
	}
}

// D1 of docs/deviations.md on the real kubelet: the late-disconnect race
// of v1.36 (kubernetes issues #127803 and #121994, fixed on master by PR
// #135437). A plugin instance's ListAndWatch stream that ends after a new
// instance of the same resource registered makes the kubelet deregister
// the new one: it closes the new instance's stream, and nothing that
// instance reports reaches the node any more. The sweep meets it by chance
// (restart-plugin: the crashed instance's stream ends late); here the old
// instance, on a socket of its own, crashes only once the new one is
// watched, so the order is certain.
func TestD1LateDisconnectDropsSuccessor(t *testing.T) {
	if why := realkubelet.Unavailable(); why != "" {
		t.Fatalf("this host cannot run a real kubelet: %s", why)
	}
	ctx := context.Background()
	n, err := realkubelet.Start(ctx, realkubelet.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(n.LogTail())
		}
		assert.NoError(t, n.Stop())
	})
	start := func(endpoint string) *testplugin.Plugin {
		p, err := testplugin.Start(testplugin.Config{
			Dir: n.DevicePluginDir, Endpoint: endpoint, ResourceName: Resource,
			Devices: testplugin.Healthy(Devices...), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		require.NoError(t, err)
		t.Cleanup(p.Stop)
		return p
	}
	watched := func(p *testplugin.Plugin, streams int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, settleLimit)
		defer cancel()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for p.Watching() != streams {
			select {
			case <-ctx.Done():
				t.Fatalf("the plugin has %d ListAndWatch streams open, want %d", p.Watching(), streams)
			case <-tick.C:
			}
		}
	}
	old := start("old.sock")
	watched(old, 1)
	successor := start("new.sock")
	watched(successor, 1)

	old.Crash()
	watched(successor, 0)
	assert.Equal(t, 1, successor.Registrations(), "the successor registered once and was dropped without registering again")
}

// mainRunning says whether CRI lists a container named main running.
func mainRunning(ctx context.Context, t *testing.T, n *realkubelet.Node) bool {
	containers, err := n.Containerd.CRI.ListContainers(ctx)
	require.NoError(t, err)
	for _, c := range containers {
		if c.Name == "main" && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return true
		}
	}
	return false
}
