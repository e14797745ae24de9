package probe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

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

// ExcerptBytes is how much of a probe's output a line of text shows. The
// kubelet itself keeps a bounded output, MaxOutputBytes of an HTTP body or
// an exec command's output (10 KiB: spec/prober.md, "Body read ≤ 10 KiB");
// a line per probe on a terminal shows only its start.
const ExcerptBytes = 128

// lineBreaks are escaped in an excerpt, which stays on its line.
var lineBreaks = strings.NewReplacer("\r", `\r`, "\n", `\n`)

// Excerpt is the first ExcerptBytes of output, cut before a character that
// would not fit, with its line breaks escaped, followed by " (N more
// bytes)" when output is longer.
func Excerpt(output string) string {
	if len(output) <= ExcerptBytes {
		return lineBreaks.Replace(output)
	}
	n := ExcerptBytes
	for n > 0 && !utf8.RuneStart(output[n]) {
		n--
	}
	return fmt.Sprintf("%s (%d more bytes)", lineBreaks.Replace(output[:n]), len(output)-n)
}
