package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/nodeproof/nodeproof/core/devicemanager"
)

// errFailedToDial is upstream's prefix for a plugin socket it cannot reach.
const errFailedToDial = "failed to dial device plugin:"

// registrar serves the Registration service on kubelet.sock.
type registrar struct {
	v1beta1.UnimplementedRegistrationServer
	agent *Agent
}

// Register validates a plugin's registration, connects to its socket and
// starts watching its devices. The error the plugin receives carries
// upstream's text where upstream has one.
func (r registrar) Register(ctx context.Context, req *v1beta1.RegisterRequest) (*v1beta1.Empty, error) {
	a := r.agent
	if !a.enter() {
		return nil, errors.New("the device plugin agent is stopping")
	}
	defer a.goroutines.Done()
	err := a.register(ctx, req)
	if err != nil {
		a.log.Error("rejected device plugin registration", "resource", req.GetResourceName(),
			"endpoint", req.GetEndpoint(), "version", req.GetVersion(), "err", err)
		return nil, err
	}
	a.log.Info("registered device plugin", "resource", req.GetResourceName(), "endpoint", req.GetEndpoint())
	return &v1beta1.Empty{}, nil
}

// enter counts a Register handler in, unless the agent is stopping.
func (a *Agent) enter() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return false
	}
	a.goroutines.Add(1)
	return true
}

func (a *Agent) register(ctx context.Context, req *v1beta1.RegisterRequest) error {
	if err := devicemanager.ValidateRegistration(devicemanager.RegisterRequest{
		Version: req.GetVersion(), Endpoint: req.GetEndpoint(), ResourceName: req.GetResourceName(),
	}); err != nil {
		return err
	}
	socket, err := endpointPath(a.opts.Dir, req.GetEndpoint())
	if err != nil {
		return err
	}
	return a.connect(ctx, req.GetResourceName(), socket)
}

// endpointPath resolves a registration's endpoint to a socket in dir.
// Upstream joins any endpoint to the directory and dials it; the agent
// accepts only the name of a socket directly in the directory, so a plugin
// cannot point the kubelet at a socket elsewhere (an absolute path, "..",
// a subdirectory or a symbolic link, any of which may lead outside).
func endpointPath(dir, endpoint string) (string, error) {
	switch {
	case endpoint == "":
		return "", errors.New("invalid endpoint: must not be empty")
	case filepath.IsAbs(endpoint):
		return "", fmt.Errorf("invalid endpoint %q: must be a socket name in the device plugin directory, not an absolute path", endpoint)
	case strings.Contains(endpoint, ".."):
		return "", fmt.Errorf("invalid endpoint %q: must not contain %q", endpoint, "..")
	case strings.ContainsRune(endpoint, filepath.Separator) || endpoint == ".":
		return "", fmt.Errorf("invalid endpoint %q: must be a socket name in the device plugin directory, without a path separator", endpoint)
	case endpoint == devicemanager.KubeletSocket:
		return "", fmt.Errorf("invalid endpoint %q: that is the kubelet's own socket", endpoint)
	}
	path := filepath.Join(dir, endpoint)
	info, err := os.Lstat(path)
	if err != nil {
		return "", fmt.Errorf("%s %v", errFailedToDial, err)
	}
	if info.Mode().Type() != fs.ModeSocket {
		return "", fmt.Errorf("%s %s is not a socket (mode %v)", errFailedToDial, path, info.Mode().Type())
	}
	return path, nil
}
