// Command crashplugin is a device plugin that registers in the directory
// $PLUGIN_SOCK_DIR, lists one healthy device and exits with status 3 in the
// middle of its first Allocate: a plugin process that crashes after it
// registered, for plugin-check's --exec tests. (agent/deviceplugin/testplugin's
// crash fault stops its server but keeps its process.)
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

const endpoint = "crash.sock"

func main() {
	dir := os.Getenv("PLUGIN_SOCK_DIR")
	lis, err := net.Listen("unix", filepath.Join(dir, endpoint))
	if err != nil {
		fail(err)
	}
	server := grpc.NewServer()
	v1beta1.RegisterDevicePluginServer(server, plugin{})
	conn, err := grpc.NewClient("unix://"+filepath.Join(dir, "kubelet.sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	_, err = v1beta1.NewRegistrationClient(conn).Register(ctx,
		&v1beta1.RegisterRequest{Version: v1beta1.Version, Endpoint: endpoint, ResourceName: "example.com/crash"}, grpc.WaitForReady(true))
	cancel()
	if err != nil {
		fail(err)
	}
	fmt.Fprintln(os.Stderr, "crashplugin: registered")
	// The listener queued the kubelet's connections since it was made.
	if err := server.Serve(lis); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "crashplugin:", err)
	os.Exit(1)
}

type plugin struct {
	v1beta1.UnimplementedDevicePluginServer
}

func (plugin) GetDevicePluginOptions(context.Context, *v1beta1.Empty) (*v1beta1.DevicePluginOptions, error) {
	return &v1beta1.DevicePluginOptions{}, nil
}

func (plugin) ListAndWatch(_ *v1beta1.Empty, stream v1beta1.DevicePlugin_ListAndWatchServer) error {
	if err := stream.Send(&v1beta1.ListAndWatchResponse{Devices: []*v1beta1.Device{{ID: "d0", Health: v1beta1.Healthy}}}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}

func (plugin) Allocate(context.Context, *v1beta1.AllocateRequest) (*v1beta1.AllocateResponse, error) {
	fmt.Fprintln(os.Stderr, "crashplugin: crashing in Allocate")
	os.Exit(3)
	return nil, nil
}
