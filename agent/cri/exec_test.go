package cri

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExecSyncSendsTimeoutInSeconds: the request carries the command and
// the timeout in whole seconds, as the kubelet sends it, and the answer's
// output and exit code come back unchanged.
func TestExecSyncSendsTimeoutInSeconds(t *testing.T) {
	f := &fakeRuntime{exec: &runtimeapi.ExecSyncResponse{Stdout: []byte("out"), Stderr: []byte("err"), ExitCode: 3}}
	c := serve(t, f, time.Minute)
	got, err := c.ExecSync(context.Background(), "c1", []string{"sh", "-c", "exit 3"}, 2500*time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, ExecResult{Stdout: []byte("out"), Stderr: []byte("err"), ExitCode: 3}, got)
	require.Len(t, f.execs, 1)
	assert.Equal(t, "c1", f.execs[0].ContainerId)
	assert.Equal(t, []string{"sh", "-c", "exit 3"}, f.execs[0].Cmd)
	assert.Equal(t, int64(2), f.execs[0].Timeout, "whole seconds, truncated")
}

// TestExecSyncTimeoutText: a runtime that answers DeadlineExceeded gives
// the kubelet's text, wrapping ErrCommandTimedOut; other errors stay the
// runtime's.
func TestExecSyncTimeoutText(t *testing.T) {
	f := &fakeRuntime{fail: map[string]error{"ExecSync": status.Error(codes.DeadlineExceeded, "timeout 1s exceeded")}}
	c := serve(t, f, time.Minute)
	_, err := c.ExecSync(context.Background(), "c1", []string{"sleep", "10"}, time.Second)
	require.ErrorIs(t, err, ErrCommandTimedOut)
	var rpcErr *RPCError
	require.ErrorAs(t, err, &rpcErr)
	assert.Equal(t, `command timed out: "sleep 10" timed out after 1s`, rpcErr.Err.Error())

	f.fail["ExecSync"] = status.Error(codes.NotFound, "container not found")
	_, err = c.ExecSync(context.Background(), "c1", []string{"true"}, time.Second)
	assert.False(t, errors.Is(err, ErrCommandTimedOut))
	assert.Equal(t, codes.NotFound, status.Code(err))
}

// TestExecSyncDeadlineIsClientTimeoutPlusCommandTimeout: a runtime that
// never answers costs the client's timeout plus the command's, not more.
func TestExecSyncDeadlineIsClientTimeoutPlusCommandTimeout(t *testing.T) {
	const timeout = 100 * time.Millisecond
	c := serve(t, &fakeRuntime{block: true}, timeout)
	start := time.Now()
	_, err := c.ExecSync(context.Background(), "c1", []string{"true"}, 0)
	assert.ErrorIs(t, err, ErrCommandTimedOut, "the client's own deadline is a timeout as well, as in the kubelet")
	assert.Less(t, time.Since(start), 10*timeout)
}

// TestExecSyncRejects names the field and the rule of bad input and of a
// bad answer.
func TestExecSyncRejects(t *testing.T) {
	c := serve(t, &fakeRuntime{exec: &runtimeapi.ExecSyncResponse{ExitCode: -1}}, time.Minute)
	ctx := context.Background()
	for name, tc := range map[string]struct {
		id      string
		cmd     []string
		timeout time.Duration
		field   string
	}{
		"no container":     {"", []string{"true"}, time.Second, "containerID"},
		"no command":       {"c1", nil, time.Second, "cmd"},
		"negative timeout": {"c1", []string{"true"}, -time.Second, "timeout"},
	} {
		_, err := c.ExecSync(ctx, tc.id, tc.cmd, tc.timeout)
		var inErr *InputError
		require.ErrorAs(t, err, &inErr, name)
		assert.Equal(t, tc.field, inErr.Field, name)
	}
	_, err := c.ExecSync(ctx, "c1", []string{"true"}, time.Second)
	assert.Equal(t, &ResponseError{RPC: "ExecSync", Field: "exit_code", Value: "-1", Rule: "must be between 0 and 255"}, err)
	_, err = FromExecSync(&runtimeapi.ExecSyncResponse{ExitCode: 256})
	assert.Equal(t, &ResponseError{RPC: "ExecSync", Field: "exit_code", Value: "256", Rule: "must be between 0 and 255"}, err)
	_, err = FromExecSync(nil)
	assert.Equal(t, &ResponseError{RPC: "ExecSync", Field: "response", Rule: "must be set"}, err)
}
