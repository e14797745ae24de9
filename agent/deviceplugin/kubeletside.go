package deviceplugin

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"google.golang.org/grpc"
	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/nodeproof/nodeproof/core/devicemanager"
)

// The pieces of the kubelet side that other kubelet stand-ins (the plugin
// checker) share with the Agent: serving kubelet.sock, confining a
// plugin's endpoint to the directory, dialing a plugin and cleaning the
// directory up as a starting kubelet does.

// RegistrationServer serves a Registration service on <dir>/kubelet.sock.
type RegistrationServer struct {
	server *grpc.Server
	socket string
	served sync.WaitGroup
}

// ServeRegistration creates dir (mode 0750) if missing and serves svc on
// <dir>/kubelet.sock, readable and writable by owner and group only. The
// socket must not exist yet (RemoveSockets clears a directory).
// Errors of the serving loop go to log (nil means slog.Default()).
func ServeRegistration(dir string, svc v1beta1.RegistrationServer, log *slog.Logger) (*RegistrationServer, error) {
	if log == nil {
		log = slog.Default()
	}
	sock, err := kubeletSocketPath(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	lis, err := net.Listen("unix", sock)
	if err != nil {
		return nil, err
	}
	// Plugins run as root or in the node's device plugin group; nobody else
	// may connect, let alone register a resource.
	if err := os.Chmod(sock, 0o660); err != nil {
		lis.Close()
		return nil, err
	}
	r := &RegistrationServer{server: grpc.NewServer(), socket: sock}
	v1beta1.RegisterRegistrationServer(r.server, svc)
	r.served.Add(1)
	go func() {
		defer r.served.Done()
		// Serve returns nil once Stop is called; any other end is an
		// accept failure that leaves the socket unserved.
		if err := r.server.Serve(lis); err != nil {
			log.Error("registration server stopped", "socket", sock, "err", err)
		}
	}()
	return r, nil
}

// kubeletSocketPath returns <dir>/kubelet.sock, or an error if the path
// does not fit a Unix socket address.
func kubeletSocketPath(dir string) (string, error) {
	sock := filepath.Join(dir, devicemanager.KubeletSocket)
	if len(sock) > maxSocketPath {
		return "", fmt.Errorf("socket path %s is %d bytes, over the %d a Unix socket address holds", sock, len(sock), maxSocketPath)
	}
	return sock, nil
}

// Socket is the path of the served kubelet.sock.
func (r *RegistrationServer) Socket() string { return r.socket }

// Stop closes the socket and every connection, without waiting for
// handlers in flight, and waits for the serving goroutine.
func (r *RegistrationServer) Stop() {
	r.server.Stop()
	r.served.Wait()
}

// RemoveSockets removes every socket in dir, as a starting kubelet does
// (upstream CleanupPluginDirectory); other files stay.
func RemoveSockets(dir string) error { return removeStaleSockets(dir) }

// EndpointPath resolves a registration's endpoint to a socket directly in
// dir, or says which rule the endpoint breaks.
func EndpointPath(dir, endpoint string) (string, error) { return endpointPath(dir, endpoint) }

// Dial connects to a plugin's socket and waits until the connection is
// ready, for at most timeout.
func Dial(ctx context.Context, socket string, timeout time.Duration) (*grpc.ClientConn, error) {
	return dial(ctx, socket, timeout)
}
