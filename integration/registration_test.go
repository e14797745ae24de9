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
)

func TestRegistrationAndCapacity(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{})
	p := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1")})
	e.waitCapacity(2, 2)

	plugins := e.agent.Plugins()
	if len(plugins) != 1 || plugins[0].Resource != res || plugins[0].Socket != filepath.Join(e.dir, "p.sock") {
		t.Errorf("open connections %+v, want one to %s on p.sock", plugins, res)
	}
	if n := len(p.Calls(testplugin.GetDevicePluginOptions)); n != 1 {
		t.Errorf("GetDevicePluginOptions called %d times, want 1", n)
	}
	for _, f := range []struct {
		name string
		// forbidden are the permission bits nobody outside the node's
		// device plugin group may have.
		forbidden os.FileMode
	}{{e.dir, 0o027}, {filepath.Join(e.dir, "kubelet.sock"), 0o007}} {
		info, err := os.Stat(f.name)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm&f.forbidden != 0 {
			t.Errorf("%s has mode %v; bits %v must be clear", f.name, perm, f.forbidden)
		}
	}
	if e.readCheckpoint().RegisteredDevices[res] == nil {
		t.Errorf("the checkpoint does not record %s's devices after the first snapshot", res)
	}
}

// register sends one raw Register call to the agent, for requests a
// well-behaved plugin would never send.
func register(t *testing.T, dir string, req *v1beta1.RegisterRequest) error {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+filepath.Join(dir, "kubelet.sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
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
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Register returned %v, want an error containing %q", tc.name, err, tc.want)
		}
	}

	// Endpoints that lead out of the directory or to no socket.
	outside := filepath.Join(filepath.Dir(e.dir), "outside.sock")
	lis, err := net.Listen("unix", outside)
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	if err := os.Symlink(outside, filepath.Join(e.dir, "link.sock")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "file.sock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
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
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("endpoint %q: Register returned %v, want an error containing %q", tc.endpoint, err, tc.want)
		}
	}

	if got := e.agent.Plugins(); len(got) != 0 {
		t.Errorf("refused registrations left connections: %+v", got)
	}
	if c := e.agent.Capacity(); len(c.Capacity) != 0 {
		t.Errorf("refused registrations left capacity: %+v", c)
	}
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
	if got := allocated(p); len(got) != 1 || strings.Join(got[0], ",") != "d0" {
		t.Errorf("Allocate calls %v, want one for d0 (the rejected snapshot's d2 must not exist)", got)
	}
}

func TestPluginCrashThenGraceExpiry(t *testing.T) {
	e := newEnv(t, deviceplugin.Options{})
	p := e.plugin(testplugin.Config{Endpoint: "p.sock", Devices: testplugin.Healthy("d0", "d1")})
	e.waitCapacity(2, 2)

	p.Crash()
	e.waitPlugins(0)
	e.waitCapacity(2, 0)
	msg := e.admitFails(podWith("pod1", 1))
	if want := "no healthy devices present; cannot allocate unhealthy devices " + res; !strings.Contains(msg, want) {
		t.Errorf("admission while the plugin is down failed with %q, want %q", msg, want)
	}

	// The grace period is 5 minutes, compared strictly.
	e.clock.Advance(5 * time.Minute)
	e.waitCapacity(2, 0)
	e.clock.Advance(time.Nanosecond)
	c := e.agent.Capacity()
	if _, ok := c.Capacity[res]; ok || len(c.Deleted) != 1 || c.Deleted[0] != res {
		t.Errorf("after the grace period Capacity() = %+v, want %s deleted", c, res)
	}
	if c := e.agent.Capacity(); len(c.Capacity) != 0 || len(c.Deleted) != 0 {
		t.Errorf("the next Capacity() = %+v, want nothing left", c)
	}
	if _, ok := e.readCheckpoint().RegisteredDevices[res]; ok {
		t.Errorf("the checkpoint still registers %s after its deletion", res)
	}
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
	if left[0].Endpoint != both[1].Endpoint {
		t.Fatalf("after the old stream ended the open connection is %+v, want the replacement's %+v", left[0], both[1])
	}
	if c := e.agent.Capacity(); c.Capacity[res] != 3 || c.Allocatable[res] != 3 {
		t.Fatalf("after the old instance's late disconnect Capacity() = %+v, want 3 healthy devices", c)
	}
	e.admit(podWith("pod1", 1))
	if got := allocated(replacement); len(got) != 1 || got[0][0] != "b0" {
		t.Errorf("replacement's Allocate calls %v, want one for b0", got)
	}
	if got := allocated(old); len(got) != 0 {
		t.Errorf("the old instance got Allocate calls %v", got)
	}
}
