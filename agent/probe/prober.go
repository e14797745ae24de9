package probe

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/nodeproof/nodeproof/agent/cri"
)

// UserAgent is the v1.36 kubelet's, sent by HTTP and gRPC probes.
const UserAgent = "kube-probe/1.36"

// MaxOutputBytes bounds what a probe reads: an HTTP body, an exec
// command's output (10 KiB, as upstream).
const MaxOutputBytes = 10 << 10

// ExecRunner runs a command in a container: *cri.Client.
type ExecRunner interface {
	ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (cri.ExecResult, error)
}

// Prober runs probes. It is safe for concurrent use; one Prober serves
// every probe of a node, as the kubelet's does.
type Prober struct {
	transport *http.Transport
	exec      ExecRunner
}

// New returns a Prober. exec runs exec probes; nil makes them Unknown with
// an *InputError (a node without a runtime, such as `--live` against a
// host).
func New(exec ExecRunner) *Prober {
	return &Prober{
		transport: &http.Transport{
			// Probes check the endpoint, not its certificate.
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
			// Every probe is a new connection: a probe must see a server
			// that stopped accepting, not a kept-alive socket.
			DisableKeepAlives:   true,
			Proxy:               nil,
			DisableCompression:  true,
			DialContext:         dialer(0).DialContext,
			TLSHandshakeTimeout: 10 * time.Second,
			ForceAttemptHTTP2:   true,
		},
		exec: exec,
	}
}

// Close releases the Prober's idle connections (there are none with
// keep-alives off; it keeps the contract of a transport's owner).
func (p *Prober) Close() { p.transport.CloseIdleConnections() }

// Run runs the spec's probe against the target. ctx cancels a probe in
// flight (a stopped worker); the spec's timeout bounds it otherwise.
func (p *Prober) Run(ctx context.Context, spec Spec, target Target) Result {
	timeout, err := spec.check()
	if err != nil {
		return unknown(err)
	}
	switch {
	case spec.Exec != nil:
		return p.runExec(ctx, spec.Exec, target, timeout)
	case spec.HTTPGet != nil:
		return p.runHTTP(ctx, spec.HTTPGet, target, timeout)
	case spec.TCPSocket != nil:
		return runTCP(ctx, spec.TCPSocket, target, timeout)
	default:
		return runGRPC(ctx, spec.GRPC, target, timeout)
	}
}

// dialer is upstream's probe dialer: SO_LINGER on with 1 s, so a closed
// probe connection does not linger in TIME_WAIT and a node with many
// probes does not run out of ports.
func dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout: timeout,
		Control: func(_, _ string, c syscall.RawConn) error {
			var sockErr error
			err := c.Control(func(fd uintptr) {
				sockErr = syscall.SetsockoptLinger(int(fd), syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 1})
			})
			if err != nil {
				return err
			}
			return sockErr
		},
	}
}
