package integration

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/nodeproof/nodeproof/agent/deviceplugin"
	"github.com/nodeproof/nodeproof/agent/deviceplugin/testplugin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegistrationAndCapacity(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{})
	p := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1")})
	e.waitCapacity(2, 2)

	plugins := e.agent.Plugins()
	require.Len(t, plugins, 1, "open connections %+v, want one to %s on p.sock", plugins, res)
	assert.Equal(t, res, plugins[0].Resource, "open connections %+v, want one to %s on p.sock", plugins, res)
	assert.Equal(t, filepath.Join(e.dir, "p.sock"), plugins[0].Socket, "open connections %+v, want one to %s on p.sock", plugins, res)
	n := len(p.Calls(testplugin.GetDevicePluginOptions))
	assert.Equal(t, 1, n, "GetDevicePluginOptions called: times, want 1")
	for _, f := range []struct {
		name string
		// forbidden are the permission bits nobody outside the node's
		// device plugin group may have.
		forbidden os.FileMode
	}{{e.dir, 0o027}, {filepath.Join(e.dir, "kubelet.sock"), 0o007}} {
		info, err := os.Stat(f.name)
		require.NoError(t, err)
		perm := info.Mode().Perm()
		assert.Equal(t, os.FileMode(0), perm&f.forbidden, "%s has mode %v; bits %v must be clear", f.name, perm, f.forbidden)
	}
	assert.NotNil(t, e.readCheckpoint().RegisteredDevices[res], "the checkpoint does not record %s's devices after the first snapshot", res)
}

// register sends one raw Register call to the agent, for requests a
// well-behaved plugin would never send.
func register(t *testing.T, dir string, req *v1beta1.RegisterRequest) error {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+filepath.Join(dir, "kubelet.sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, err = v1beta1.NewRegistrationClient(conn).Register(ctx, req, grpc.WaitForReady(true))
	return err
}

func TestInvalidRegistrations(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{DialTimeout: 200 * time.Millisecond})

	// A plugin whose registration is refused gets upstream's text back.
	for _, tc := range []struct {
		name string
		cfg  testplugin.Config
		want string
	}{
		{"bad version", testplugin.Config{Endpoint: "v.sock", Version: "v1alpha1"},
			`requested API version "v1alpha1" is not supported by kubelet. Supported version is ["v1beta1"]`},
		{"no slash in name", testplugin.Config{Endpoint: "n.sock", ResourceName: "resource2"},
			`the ResourceName "resource2" is invalid`},
		{"kubernetes.io name", testplugin.Config{Endpoint: "k.sock", ResourceName: "kubernetes.io/x"},
			`the ResourceName "kubernetes.io/x" is invalid`},
	} {
		_, err := e.tryPlugin(tc.cfg)
		assert.ErrorContains(t, err, tc.want, "%s: Register returned %v, want an error containing %q", tc.name, err, tc.want)
	}

	// Endpoints that lead out of the directory or to no socket.
	outside := filepath.Join(filepath.Dir(e.dir), "outside.sock")
	lis, err := net.Listen("unix", outside)
	require.NoError(t, err)
	defer lis.Close()
	require.NoError(t, os.Symlink(outside, filepath.Join(e.dir, "link.sock")))
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "file.sock"), nil, 0o600))
	// A socket nobody listens on any more: the dial runs into its deadline.
	staleSocket(t, filepath.Join(e.dir, "stale.sock"))
	for _, tc := range []struct{ endpoint, want string }{
		{"../outside.sock", `must not contain ".."`},
		{outside, "not an absolute path"},
		{"sub/p.sock", "without a path separator"},
		{"link.sock", "is not a socket"},
		{"file.sock", "failed to dial device plugin: " + filepath.Join(e.dir, "file.sock") + " is not a socket"},
		{"stale.sock", "failed to dial device plugin: connection to " + filepath.Join(e.dir, "stale.sock")},
		{"missing.sock", "failed to dial device plugin: lstat " + filepath.Join(e.dir, "missing.sock")},
	} {
		err := register(t, e.dir, &v1beta1.RegisterRequest{Version: v1beta1.Version, Endpoint: tc.endpoint, ResourceName: res})
		assert.ErrorContains(t, err, tc.want, "endpoint %q: Register returned %v, want an error containing %q", tc.endpoint, err, tc.want)
	}

	assert.Empty(t, e.agent.Plugins(), "refused registrations left connections")
	c := e.agent.Capacity()
	assert.Empty(t, c.Capacity, "refused registrations left capacity: %+v", c)
}

func TestHealthFlipsAndBadSnapshots(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{})
	p := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1")})
	e.waitCapacity(2, 2)

	p.Update([]testplugin.Device{{ID: "d0", Health: v1beta1.Healthy}, {ID: "d1", Health: v1beta1.Unhealthy}})
	e.waitCapacity(2, 1)
	p.Update(testplugin.Healthy("d0", "d1"))
	e.waitCapacity(2, 2)
	p.Update(testplugin.Healthy("d0"))
	e.waitCapacity(1, 1)

	// A snapshot listing a device twice is rejected whole; the log record is
	// the event that says the agent has processed it.
	p.SetFault(testplugin.ListAndWatch, testplugin.Fault{Malformed: testplugin.DuplicateDeviceIDs})
	p.Update(testplugin.Healthy("d0", "d2"))
	e.eventually(func() string { return "the agent to reject the snapshot with d0 twice" }, func() bool {
		return e.logs.has(`rejected ListAndWatch snapshot`) && e.logs.has(`\"d0\" appears more than once`)
	})
	e.waitCapacity(1, 1)
	e.admit(podWith("pod1", 1))
	got := allocated(p)
	require.Len(t, got, 1, "Allocate calls %v, want one for d0 (the rejected snapshot's d2 must not exist)", got)
	assert.Equal(t, "d0", strings.Join(got[0], ","), "Allocate calls %v, want one for d0 (the rejected snapshot's d2 must not exist)", got)
}

func TestPluginCrashThenGraceExpiry(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{})
	p := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1")})
	e.waitCapacity(2, 2)

	p.Crash()
	e.waitPlugins(0)
	e.waitCapacity(2, 0)
	msg := e.admitFails(podWith("pod1", 1))
	want := "no healthy devices present; cannot allocate unhealthy devices " + res
	assert.Contains(t, msg, want, "admission while the plugin is down failed with %q, want %q", msg, want)

	// The grace period is 5 minutes, compared strictly.
	e.clock.Advance(5 * time.Minute)
	e.waitCapacity(2, 0)
	e.clock.Advance(time.Nanosecond)
	c := e.agent.Capacity()
	_, ok := c.Capacity[res]
	require.False(t, ok, "after the grace period Capacity() = %+v, want %s deleted", c, res)
	require.Len(t, c.Deleted, 1, "after the grace period Capacity() = %+v, want %s deleted", c, res)
	assert.Equal(t, res, c.Deleted[0], "after the grace period Capacity() = %+v, want %s deleted", c, res)
	c = e.agent.Capacity()
	require.Empty(t, c.Capacity, "the next Capacity() = %+v, want nothing left", c)
	assert.Empty(t, c.Deleted, "the next Capacity() = %+v, want nothing left", c)
	_, ok = e.readCheckpoint().RegisteredDevices[res]
	assert.False(t, ok, "the checkpoint still registers %s after its deletion", res)
}

// TestLateDisconnectOfOldInstance re-enacts #127803: a new plugin instance
// takes over the socket and registers while the old instance's
// ListAndWatch stream is still open; the old stream ends only afterwards.
// The old connection's end must not mark the new registration unhealthy.
func TestLateDisconnectOfOldInstance(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{})
	old := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("a0", "a1")})
	e.waitCapacity(2, 2)

	replacement := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("b0", "b1", "b2")})
	e.waitCapacity(3, 3)
	both := e.waitPlugins(2) // the old stream is still open: the ordering is forced

	old.Stop()
	left := e.waitPlugins(1)
	require.Equal(t, both[1].Endpoint, left[0].Endpoint, "after the old stream ended the open connection is %+v, want the replacement's %+v", left[0], both[1])
	c := e.agent.Capacity()
	require.Equal(t, int64(3), c.Capacity[res], "after the old instance's late disconnect Capacity() = %+v, want 3 healthy devices", c)
	require.Equal(t, int64(3), c.Allocatable[res], "after the old instance's late disconnect Capacity() = %+v, want 3 healthy devices", c)
	e.admit(podWith("pod1", 1))
	got := allocated(replacement)
	require.Len(t, got, 1, "replacement's Allocate calls %v, want one for b0", got)
	assert.Equal(t, "b0", got[0][0], "replacement's Allocate calls %v, want one for b0", got)
	got = allocated(old)
	assert.Empty(t, got, "the old instance got Allocate calls")
}
