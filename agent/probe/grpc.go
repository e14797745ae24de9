package probe

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// runGRPC is upstream's gRPC probe: one context with the timeout for a
// blocking, insecure dial of the pod's IP and for Health/Check; every
// outcome is a result with upstream's text, never an error.
func runGRPC(ctx context.Context, action *GRPCAction, target Target, timeout time.Duration) Result {
	service := ""
	if action.Service != nil {
		service = *action.Service
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr := net.JoinHostPort(target.PodIP, strconv.Itoa(int(action.Port)))
	// The kubelet dials with the deprecated blocking DialContext: a probe
	// must know the server is there before it asks, and a dial that
	// never connects is a timeout of its own text.
	//lint:ignore SA1019 upstream's blocking dial (DialContext with WithBlock), kept for its errors
	conn, err := grpc.DialContext(ctx, addr,
		grpc.WithUserAgent(UserAgent),
		//lint:ignore SA1019 as above
		grpc.WithBlock(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return dialer(0).DialContext(ctx, "tcp", addr)
		}),
	)
	if err != nil {
		// Upstream compares the error itself, not what it wraps: only the
		// blocking dial's own deadline is the timeout text.
		if err == context.DeadlineExceeded {
			return Result{Kind: Failure, Output: fmt.Sprintf("timeout: failed to connect service %q within %v: %+v", addr, timeout, err)}
		}
		return Result{Kind: Failure, Output: fmt.Sprintf("error: failed to connect service at %q: %+v", addr, err)}
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(metadata.NewOutgoingContext(ctx, metadata.MD{}), &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		switch st, _ := status.FromError(err); st.Code() {
		case codes.Unimplemented:
			return Result{Kind: Failure, Output: fmt.Sprintf("error: this server does not implement the grpc health protocol (grpc.health.v1.Health): %s", st.Message())}
		case codes.DeadlineExceeded:
			return Result{Kind: Failure, Output: fmt.Sprintf("timeout: health rpc did not complete within %v", timeout)}
		}
		return Result{Kind: Failure, Output: fmt.Sprintf("error: health rpc probe failed: %+v", err)}
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return Result{Kind: Failure, Output: fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus().String())}
	}
	return Result{Kind: Success, Output: "service healthy"}
}
