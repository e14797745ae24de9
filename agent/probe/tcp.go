package probe

import (
	"context"
	"net"
	"strconv"
	"time"
)

// runTCP is upstream's TCP probe: a connection within the timeout is
// Success (closed at once), any dial error a Failure whose output is the
// error, such as "dial tcp 127.0.0.1:80: connect: connection refused".
func runTCP(ctx context.Context, action *TCPSocketAction, target Target, timeout time.Duration) Result {
	port, err := resolvePort("tcpSocket.port", action.Port, target.Ports)
	if err != nil {
		return unknown(err)
	}
	host := action.Host
	if host == "" {
		host = target.PodIP
	}
	conn, err := dialer(timeout).DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return Result{Kind: Failure, Output: err.Error()}
	}
	// A close error says nothing about the target's health; upstream only
	// logs it.
	_ = conn.Close()
	return Result{Kind: Success}
}
