package testplugin

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/nodeproof/nodeproof/agent/deviceplugin"
)

// waitBound bounds every wait on the plugin: generous, as only a broken
// plugin gets near it.
const waitBound = 10 * time.Second

// kubelet accepts every registration on kubelet.sock in a directory of its
// own and hands each request over.
type kubelet struct {
	v1beta1.UnimplementedRegistrationServer
	dir    string
	regs   chan *v1beta1.RegisterRequest
	server *deviceplugin.RegistrationServer
}

func (k *kubelet) Register(_ context.Context, req *v1beta1.RegisterRequest) (*v1beta1.Empty, error) {
	k.regs <- req
	return &v1beta1.Empty{}, nil
}

// startKubelet serves kubelet.sock in a short temporary directory (a Unix
// socket address holds a little over 100 bytes, which t.TempDir may
// exceed) and stops it when the test ends.
func startKubelet(t *testing.T) *kubelet {
	dir, err := os.MkdirTemp("", "tp")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	k := &kubelet{dir: dir, regs: make(chan *v1beta1.RegisterRequest, 8)}
	k.serve(t)
	return k
}

func (k *kubelet) serve(t *testing.T) {
	server, err := deviceplugin.ServeRegistration(k.dir, k, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	k.server = server
	t.Cleanup(server.Stop)
}

// registration waits for the next Register.
func (k *kubelet) registration(t *testing.T) *v1beta1.RegisterRequest {
	t.Helper()
	select {
	case req := <-k.regs:
		return req
	case <-time.After(waitBound):
		require.FailNow(t, "no registration within the bound")
		return nil
	}
}

// plugin starts a test plugin of cfg in the kubelet's directory, takes its
// first registration and stops it when the test ends.
func (k *kubelet) plugin(t *testing.T, cfg Config) *Plugin {
	t.Helper()
	cfg.Dir = k.dir
	if cfg.Endpoint == "" {
		cfg.Endpoint = "p.sock"
	}
	cfg.ResourceName = "example.com/dev"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	p, err := Start(cfg)
	require.NoError(t, err)
	t.Cleanup(p.Stop)
	k.registration(t)
	return p
}

// client dials a plugin socket in the kubelet's directory.
func (k *kubelet) client(t *testing.T, endpoint string) v1beta1.DevicePluginClient {
	t.Helper()
	conn, err := deviceplugin.Dial(context.Background(), filepath.Join(k.dir, endpoint), waitBound)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return v1beta1.NewDevicePluginClient(conn)
}

func health(devs []*v1beta1.Device) map[string]string {
	out := map[string]string{}
	for _, d := range devs {
		out[d.GetID()] = d.GetHealth()
	}
	return out
}

func allocate(client v1beta1.DevicePluginClient, ids ...string) (*v1beta1.AllocateResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	return client.Allocate(ctx, &v1beta1.AllocateRequest{ContainerRequests: []*v1beta1.ContainerAllocateRequest{{DevicesIds: ids}}})
}

// TestDeviceFailure: the device works for AfterAllocates calls; the first
// later call that asks for it finds it Unhealthy and is refused, and
// ListAndWatch streams the change; the other devices still allocate.
func TestDeviceFailure(t *testing.T) {
	k := startKubelet(t)
	k.plugin(t, Config{Devices: Healthy("d0", "d1"), RejectUnknownIDs: true, DeviceFailure: &DeviceFailure{ID: "d1", AfterAllocates: 2}})
	client := k.client(t, "p.sock")
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	stream, err := client.ListAndWatch(ctx, &v1beta1.Empty{})
	require.NoError(t, err)
	list, err := stream.Recv()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"d0": v1beta1.Healthy, "d1": v1beta1.Healthy}, health(list.GetDevices()))

	for _, id := range []string{"d1", "d0", "d0"} {
		_, err := allocate(client, id)
		require.NoError(t, err, "Allocate(%s)", id)
	}
	_, err = allocate(client, "d1")
	assert.Equal(t, codes.InvalidArgument, status.Code(err), "the first call for d1 after AfterAllocates: %v", err)
	list, err = stream.Recv()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"d0": v1beta1.Healthy, "d1": v1beta1.Unhealthy}, health(list.GetDevices()))
	_, err = allocate(client, "d0")
	assert.NoError(t, err)
}

// TestConfigErrors: a knob that cannot work is an error naming the field
// and the rule.
func TestConfigErrors(t *testing.T) {
	base := Config{Dir: "/nonexistent", Endpoint: "p.sock", ResourceName: "example.com/dev", Devices: Healthy("d0")}
	for _, tc := range []struct {
		turn func(*Config)
		want string
	}{
		{func(c *Config) { c.DeviceFailure = &DeviceFailure{ID: "d9"} }, `Config.DeviceFailure.ID "d9": must be the ID of one of Config.Devices`},
		{func(c *Config) { c.DeviceFailure = &DeviceFailure{ID: "d0", AfterAllocates: -1} }, `Config.DeviceFailure.AfterAllocates -1: must not be negative`},
		{func(c *Config) { c.IDsPerHostDevice = -2 }, `Config.IDsPerHostDevice -2: must not be negative`},
	} {
		cfg := base
		tc.turn(&cfg)
		_, err := Start(cfg)
		assert.ErrorContains(t, err, tc.want)
	}
}

// TestReregisterEndpoint: after a kubelet restart (every socket removed,
// kubelet.sock served anew) the plugin serves and registers the new socket
// name, and Stop removes that socket.
func TestReregisterEndpoint(t *testing.T) {
	k := startKubelet(t)
	p := k.plugin(t, Config{Devices: Healthy("d0"), ReregisterEndpoint: "again.sock"})
	assert.Equal(t, "p.sock", p.Endpoint())

	k.server.Stop()
	require.NoError(t, deviceplugin.RemoveSockets(k.dir))
	k.serve(t)
	req := k.registration(t)
	assert.Equal(t, "again.sock", req.GetEndpoint())
	assert.Equal(t, "again.sock", p.Endpoint())
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	_, err := k.client(t, "again.sock").GetDevicePluginOptions(ctx, &v1beta1.Empty{})
	require.NoError(t, err)
	assert.NoFileExists(t, filepath.Join(k.dir, "p.sock"))

	p.Stop()
	assert.NoFileExists(t, filepath.Join(k.dir, "again.sock"), "Stop removes the socket it serves now")
}
