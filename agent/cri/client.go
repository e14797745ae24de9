package cri

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Client talks CRI to one runtime. Its methods are safe to call from several
// goroutines (gRPC serialises nothing the runtime does not).
type Client struct {
	conn    *grpc.ClientConn
	runtime runtimeapi.RuntimeServiceClient
	images  runtimeapi.ImageServiceClient
	timeout time.Duration
}

// New returns a client for the socket in opts. It does not connect: the
// first RPC does, within its timeout, so a runtime that starts later is
// still reached.
func New(opts Options) (*Client, error) {
	opts, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient("unix://"+opts.Socket,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageBytes), grpc.MaxCallSendMsgSize(maxMessageBytes)))
	if err != nil {
		return nil, &InputError{Field: "Options.Socket", Value: opts.Socket, Rule: err.Error()}
	}
	return &Client{
		conn:    conn,
		runtime: runtimeapi.NewRuntimeServiceClient(conn),
		images:  runtimeapi.NewImageServiceClient(conn),
		timeout: opts.Timeout,
	}, nil
}

// Close closes the connection; calls after it fail.
func (c *Client) Close() error { return c.conn.Close() }

// call runs one RPC under the client's timeout and wraps its error.
func call[Req, Resp any](ctx context.Context, c *Client, rpc string, f func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) (Resp, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := f(ctx, req)
	if err != nil {
		return resp, &RPCError{RPC: rpc, Err: err}
	}
	return resp, nil
}

// Version is the runtime's name and versions.
type Version struct {
	RuntimeName, RuntimeVersion, RuntimeAPIVersion string
}

// Version asks the runtime who it is; it is also the readiness probe: a
// runtime that answers it serves CRI.
func (c *Client) Version(ctx context.Context) (Version, error) {
	const rpc = "Version"
	resp, err := call(ctx, c, rpc, c.runtime.Version, &runtimeapi.VersionRequest{Version: "v1"})
	if err != nil {
		return Version{}, err
	}
	if resp.GetRuntimeName() == "" {
		return Version{}, &ResponseError{RPC: rpc, Field: "runtime_name", Rule: "must not be empty"}
	}
	return Version{RuntimeName: resp.RuntimeName, RuntimeVersion: resp.RuntimeVersion, RuntimeAPIVersion: resp.RuntimeApiVersion}, nil
}
