package probe

import (
	"context"
	"errors"
	"strings"
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
	res, err := p.exec.ExecSync(ctx, target.ContainerID, expandCommand(action.Command, target.Env), timeout)
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

// expandCommand replaces $(NAME) in each argument with the value of the
// variable NAME of env (the last one of that name); a name env does not
// have stays "$(NAME)" and "$$" is a literal "$", as the kubelet's
// ExpandContainerCommandOnlyStatic.
func expandCommand(cmd []string, env []EnvVar) []string {
	values := make(map[string]string, len(env))
	for _, v := range env {
		values[v.Name] = v.Value
	}
	out := make([]string, len(cmd))
	for i, arg := range cmd {
		out[i] = expand(arg, values)
	}
	return out
}

func expand(s string, values map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 { // unclosed: kept as written
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := values[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default: // "$x" is kept; x is written on the next turn
			b.WriteByte('$')
		}
	}
	return b.String()
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
