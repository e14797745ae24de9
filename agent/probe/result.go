package probe

import "fmt"

// Kind is a probe's verdict, with the names of upstream's probe.Result.
type Kind string

const (
	// Success: the target answered healthy.
	Success Kind = "success"
	// Warning: counted as Success by the kubelet, with a ProbeWarning
	// event; an HTTP 3xx that was not followed.
	Warning Kind = "warning"
	// Failure: the target answered unhealthy, did not answer in time or
	// refused the connection.
	Failure Kind = "failure"
	// Unknown: the probe could not be run; Err says why.
	Unknown Kind = "unknown"
)

// Result is one probe's outcome: upstream's (result, output, error).
type Result struct {
	Kind   Kind
	Output string
	// Err is set where upstream returns an error: the kubelet retries the
	// probe (three tries in all) and its worker then discards the outcome.
	Err error
}

// InputError is a probe spec or target that cannot be run. It names the
// field and the rule.
type InputError struct {
	Field string // e.g. "httpGet.port"
	Value string
	Rule  string
}

func (e *InputError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("probe: %s: %s", e.Field, e.Rule)
	}
	return fmt.Sprintf("probe: %s %q: %s", e.Field, e.Value, e.Rule)
}

// unknown is the outcome of a probe that could not run.
func unknown(err error) Result { return Result{Kind: Unknown, Err: err} }
