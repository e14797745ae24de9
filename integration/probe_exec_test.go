package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nodeproof/nodeproof/agent/probe"
	"github.com/nodeproof/nodeproof/integration/containerdtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbeExecInContainerd runs exec probes through CRI ExecSync in a
// real container (busybox-static) of a real containerd: exit 0 and non-zero
// with their output (stdout then stderr, cut at 10 KiB), a command that
// hangs past its timeout (a Failure with the kubelet's text, and the
// runtime kills it), and a container that does not exist or a command the
// image lacks (Unknown with the runtime's error, which the kubelet
// discards).
func TestProbeExecInContainerd(t *testing.T) {
	ctrd := containerdtest.Start(t, containerdtest.Options{})
	ctx := context.Background()
	bb, err := containerdtest.BusyboxLayer()
	require.NoError(t, err)
	app := containerdtest.Image{Name: "nodeproof.test/probed:1", Layers: []containerdtest.Layer{bb}}
	ctrd.Import(app)
	pod, err := ctrd.RunPod(ctx, "probed", app.Name, "/bin/sleep", "3600")
	require.NoError(t, err)
	p := probe.New(ctrd.CRI)
	t.Cleanup(p.Close)
	target := probe.Target{ContainerID: pod.ContainerID}
	run := func(timeoutSeconds int32, cmd ...string) probe.Result {
		return p.Run(ctx, probe.Spec{Exec: &probe.ExecAction{Command: cmd}, TimeoutSeconds: timeoutSeconds}, target)
	}

	assert.Equal(t, probe.Result{Kind: probe.Success, Output: "out\nerr\n"}, run(1, "/bin/sh", "-c", "echo err >&2; echo out"))
	assert.Equal(t, probe.Result{Kind: probe.Failure, Output: "not ready\n"}, run(1, "/bin/sh", "-c", "echo not ready; exit 3"))

	// 3,000 lines of 11 bytes: the output is cut at 10 KiB.
	long := run(5, "/bin/sh", "-c", `i=0; while [ $i -lt 3000 ]; do echo 0123456789; i=$((i+1)); done`)
	assert.Equal(t, probe.Result{Kind: probe.Success, Output: strings.Repeat("0123456789\n", 3000)[:probe.MaxOutputBytes]}, long)

	start := time.Now()
	hung := run(1, "/bin/sleep", "30")
	elapsed := time.Since(start)
	assert.Equal(t, probe.Result{Kind: probe.Failure, Output: `command timed out: "/bin/sleep 30" timed out after 1s`}, hung)
	assert.GreaterOrEqual(t, elapsed, time.Second)
	assert.Less(t, elapsed, waitLimit, "the runtime ends the command at its timeout, not when it would end")

	// The container is still there to probe after the hung command.
	assert.Equal(t, probe.Result{Kind: probe.Success, Output: ""}, run(1, "/bin/sh", "-c", "exit 0"))

	gone := p.Run(ctx, probe.Spec{Exec: &probe.ExecAction{Command: []string{"/bin/sh", "-c", "true"}}}, probe.Target{ContainerID: "no-such-container"})
	assert.Equal(t, probe.Unknown, gone.Kind)
	assert.Equal(t, codes.NotFound, status.Code(gone.Err), "%v", gone.Err)

	// containerd 1.6 does not run a missing binary as exit 127: runc fails
	// the exec and ExecSync is an error, so the kubelet's exec probe is
	// Unknown with the error, retried and then discarded by the worker: a
	// probe naming a missing command never changes the container's result.
	missing := run(1, "/bin/no-such-command")
	assert.Equal(t, probe.Unknown, missing.Kind)
	assert.Equal(t, codes.Unknown, status.Code(missing.Err), "%v", missing.Err)
	assert.ErrorContains(t, missing.Err, `exec: "/bin/no-such-command": stat /bin/no-such-command: no such file or directory`)
	require.NoError(t, ctrd.RemovePod(ctx, pod))
}
