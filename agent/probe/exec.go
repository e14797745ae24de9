package probe

import (
	"context"
	"errors"
	"time"

	"github.com/nodeproof/nodeproof/agent/cri"
)

// runExec is upstream's exec probe through CRI ExecSync: exit 0 is
// Success, any other exit Failure, both with the command's stdout then
// stderr (not interleaved) cut at 10 KiB; a command that outlives the
// timeout is a Failure with the CRI client's text (ExecProbeTimeout, GA);
// any other error of the runtime is Unknown with the error.
func (p *Prober) runExec(ctx context.Context, action *ExecAction, target Target, timeout time.Duration) Result {
	switch {
	case p.exec == nil:
		return unknown(&InputError{Field: "exec", Rule: "needs a container runtime: this prober has none"})
	case target.ContainerID == "":
		return unknown(&InputError{Field: "target.containerID", Rule: "must not be empty for an exec probe"})
	}
	res, err := p.exec.ExecSync(ctx, target.ContainerID, action.Command, timeout)
	if err != nil {
		if errors.Is(err, cri.ErrCommandTimedOut) {
			return Result{Kind: Failure, Output: runtimeText(err)}
		}
		return unknown(err)
	}
	output := append(append([]byte{}, res.Stdout...), res.Stderr...)
	if len(output) > MaxOutputBytes {
		output = output[:MaxOutputBytes]
	}
	if res.ExitCode != 0 {
		return Result{Kind: Failure, Output: string(output)}
	}
	return Result{Kind: Success, Output: string(output)}
}

// runtimeText is the text of the CRI client's error without agent/cri's
// prefix, as the kubelet's prober sees it.
func runtimeText(err error) string {
	var rpcErr *cri.RPCError
	if errors.As(err, &rpcErr) {
		return rpcErr.Err.Error()
	}
	return err.Error()
}
