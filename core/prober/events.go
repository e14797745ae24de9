package prober

import (
	"fmt"
	"strings"
	"time"
)

// Event types and the reasons of pkg/kubelet/events the prober and the
// container killer record.
const (
	EventTypeNormal  = "Normal"
	EventTypeWarning = "Warning"

	ReasonUnhealthy    = "Unhealthy"    // events.ContainerUnhealthy
	ReasonProbeWarning = "ProbeWarning" // events.ContainerProbeWarning
	ReasonKilling      = "Killing"      // events.KillingContainer
)

// Event is a Kubernetes event recorded on a container of a pod.
type Event struct {
	PodUID, ContainerName string
	Type, Reason, Message string
}

// ProbeResult is what one run of a probe handler returns (pkg/probe.Result).
type ProbeResult string

// The handler results. A Warning counts as Success (an HTTP 3xx).
const (
	ProbeSuccess ProbeResult = "success"
	ProbeWarning ProbeResult = "warning"
	ProbeFailure ProbeResult = "failure"
	ProbeUnknown ProbeResult = "unknown"
)

// Outcome is what the caller reports after running a probe: the handler's
// result and output, or an error (a port that does not resolve, an exec
// that could not start: anything but a verdict on the container). A timeout
// is a verdict: Failure with upstream's text (ExecTimeoutOutput for exec;
// the transport error's text for HTTP, TCP and gRPC).
type Outcome struct {
	Result ProbeResult
	Output string
	Err    error
}

// ExecTimeoutOutput is the output of an exec probe that ran past its
// timeout (the CRI client's ErrCommandTimedOut wrapped with the command
// joined by spaces and the timeout), the text of its Failure.
func ExecTimeoutOutput(command []string, timeout time.Duration) string {
	return fmt.Sprintf("command timed out: %q timed out after %s", strings.Join(command, " "), timeout)
}

// KillMessage is the message of the Killing event (Normal) the runtime
// manager records when it kills a running container whose cached liveness
// or startup result is Failure: "Container <name> failed liveness probe",
// with ", will be restarted" when it will be started again (the pod's
// restart policy is not Never, or the container's own policy, when set, is
// not Never). t is Liveness or Startup; liveness is checked first.
func KillMessage(containerName string, t ProbeType, restart bool) string {
	msg := fmt.Sprintf("Container %s failed %s probe", containerName, strings.ToLower(t.String()))
	if restart {
		msg += ", will be restarted"
	}
	return msg
}

// probeEvents returns the event upstream's prober.probe records for a final
// outcome (after its retries) and the result it hands to the worker.
func probeEvents(key WorkerKey, out Outcome) (Result, []Event) {
	ev := func(typ, reason, format string, args ...any) []Event {
		return []Event{{PodUID: key.PodUID, ContainerName: key.ContainerName, Type: typ, Reason: reason, Message: fmt.Sprintf(format, args...)}}
	}
	if out.Err != nil {
		return Failure, ev(EventTypeWarning, ReasonUnhealthy, "%s probe errored and resulted in %s state: %s", key.Type, out.Result, out.Err)
	}
	switch out.Result {
	case ProbeSuccess:
		return Success, nil
	case ProbeWarning:
		return Success, ev(EventTypeWarning, ReasonProbeWarning, "%s probe warning: %s", key.Type, out.Output)
	case ProbeFailure:
		return Failure, ev(EventTypeWarning, ReasonUnhealthy, "%s probe failed: %s", key.Type, out.Output)
	default: // Unknown without an error
		return Failure, nil
	}
}
