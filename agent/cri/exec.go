package cri

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ErrCommandTimedOut marks an ExecSync whose command outlived its timeout:
// the runtime killed it and answered DeadlineExceeded. The kubelet's CRI
// client wraps the same condition in an error of the same text, which the
// v1.36 exec probe reports as a failure (ExecProbeTimeout is GA).
var ErrCommandTimedOut = errors.New("command timed out")

// MaxExitCode is the largest exit status ExecSync may report: a Linux
// process exits with 0 to 255, a signal's death is reported as 128+n.
const MaxExitCode = 255

// ExecResult is what a command run with ExecSync left behind.
type ExecResult struct {
	Stdout, Stderr []byte
	ExitCode       int32
}

// ExecSync runs cmd in the container and waits for it, as the kubelet's
// exec probes and lifecycle hooks do. The runtime enforces timeout (sent
// in whole seconds, as the kubelet sends it; zero means none); the RPC's
// own deadline is the client's timeout plus timeout, so the runtime has
// time to kill the command and answer. A command that outlives timeout
// gives an error wrapping ErrCommandTimedOut with the kubelet's text,
// `command timed out: "<cmd>" timed out after <timeout>`. A non-zero exit
// is not an error: it is in ExecResult.ExitCode.
func (c *Client) ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) (ExecResult, error) {
	const rpc = "ExecSync"
	switch {
	case containerID == "":
		return ExecResult{}, &InputError{Field: "containerID", Rule: "must not be empty"}
	case len(cmd) == 0:
		return ExecResult{}, &InputError{Field: "cmd", Rule: "must not be empty"}
	case timeout < 0:
		return ExecResult{}, &InputError{Field: "timeout", Value: timeout.String(), Rule: "must not be negative"}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout+timeout)
	defer cancel()
	resp, err := c.runtime.ExecSync(ctx, &runtimeapi.ExecSyncRequest{
		ContainerId: containerID, Cmd: cmd, Timeout: int64(timeout.Seconds()),
	})
	if err != nil {
		if status.Code(err) == codes.DeadlineExceeded {
			err = fmt.Errorf("%w: %q timed out after %s", ErrCommandTimedOut, strings.Join(cmd, " "), timeout)
		}
		return ExecResult{}, &RPCError{RPC: rpc, Err: err}
	}
	return FromExecSync(resp)
}

// FromExecSync checks an ExecSync answer: an exit code a Linux process can
// have (0 to MaxExitCode). Output sizes are bounded by the gRPC message
// limit already.
func FromExecSync(resp *runtimeapi.ExecSyncResponse) (ExecResult, error) {
	const rpc = "ExecSync"
	if resp == nil {
		return ExecResult{}, &ResponseError{RPC: rpc, Field: "response", Rule: "must be set"}
	}
	if code := resp.GetExitCode(); code < 0 || code > MaxExitCode {
		return ExecResult{}, &ResponseError{RPC: rpc, Field: "exit_code", Value: fmt.Sprint(code), Rule: fmt.Sprintf("must be between 0 and %d", MaxExitCode)}
	}
	return ExecResult{Stdout: resp.GetStdout(), Stderr: resp.GetStderr(), ExitCode: resp.GetExitCode()}, nil
}
