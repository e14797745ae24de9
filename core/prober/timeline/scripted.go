package timeline

import (
	"errors"
	"fmt"
	"time"

	"github.com/nodeproof/nodeproof/core/prober"
)

// Answer is the scripted target's answer to a request: when the probe
// ends and its outcome, from the pattern of the request's probe at the
// container's age. The texts are the handler's for that kind of answer
// (pkg/probe), with the pod IP the timeline gives.
func (o Outcomes) Answer(req Request) (time.Duration, prober.Outcome) {
	state := o.PatternFor(req.Run.Key.ContainerName, req.Run.Key.Type).At(req.Age)
	end := req.At
	h := req.Run.Probe.Handler
	switch state {
	case Healthy:
		return end, prober.Outcome{Result: prober.ProbeSuccess, Output: healthyText(h)}
	case Warning:
		return end, prober.Outcome{Result: prober.ProbeWarning, Output: warningText(h)}
	case Error:
		return end, prober.Outcome{Result: prober.ProbeUnknown, Err: errors.New("scripted error: the probe could not run")}
	case Timeout:
		return end + req.Run.Timeout, prober.Outcome{Result: prober.ProbeFailure, Output: timeoutText(req.Run)}
	default:
		return end, prober.Outcome{Result: prober.ProbeFailure, Output: failingText(h)}
	}
}

func healthyText(h prober.Handler) string {
	if h.GRPC != nil {
		return "service healthy"
	}
	return ""
}

func warningText(h prober.Handler) string {
	if h.HTTPGet != nil {
		return "Probe terminated redirects, Response body: "
	}
	return "scripted warning"
}

func failingText(h prober.Handler) string {
	switch {
	case h.HTTPGet != nil:
		return "HTTP probe failed with statuscode: 500"
	case h.TCPSocket != nil:
		return "dial tcp: connect: connection refused"
	case h.GRPC != nil:
		return `service unhealthy (responded with "NOT_SERVING")`
	default:
		return "command exited with status 1"
	}
}

func timeoutText(run prober.ProbeRun) string {
	h := run.Probe.Handler
	switch {
	case h.HTTPGet != nil:
		return "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
	case h.TCPSocket != nil:
		return "dial tcp: i/o timeout"
	case h.GRPC != nil:
		return fmt.Sprintf("timeout: health rpc did not complete within %v", run.Timeout)
	default:
		return prober.ExecTimeoutOutput(h.Exec.Command, run.Timeout)
	}
}

// Play runs the timeline to its end with the script answering every probe.
func Play(t *Timeline, o Outcomes) error {
	for {
		req, ok, err := t.Next()
		if err != nil || !ok {
			return err
		}
		end, out := o.Answer(req)
		if err := t.Done(req, end, out); err != nil {
			return err
		}
	}
}
