// Package probe runs the kubelet's container probes for real: HTTP GET,
// TCP connect, gRPC health (grpc.health.v1) and exec through CRI ExecSync.
// It is the imperative side of core/prober: a worker step there says
// "probe now" with the probe to run, a caller runs it here and feeds the
// outcome back.
//
// Each probe returns what upstream's pkg/probe returns, the triple
// (result, output, error), as one Result value: Kind is Success, Warning,
// Failure or Unknown, Output is upstream's text and Err the error that
// kubelet's prober.probe would retry and its worker would discard. Outcomes
// of the target (a refused connection, a timeout, a non-2xx status, a
// NOT_SERVING answer, a non-zero exit) are failures with upstream's texts
// and no error; Err is set only where upstream sets it (a port that does
// not resolve, a body that breaks off mid-read, an exec the runtime could
// not run).
//
// The v1.36 kubelet's choices are kept: HTTP probes send
// `User-Agent: kube-probe/1.36` and `Accept: */*` unless the probe sets
// them, use no proxy, no compression and no keep-alive (every probe is a
// new connection), skip TLS verification, follow redirects only to the
// same host name (at most 10 requests in the chain; a redirect elsewhere
// ends the chain and its 3xx is a Warning), and read at most 10 KiB of
// body; 2xx is Success, 3xx Warning, anything else Failure. Every
// connection lingers at most 1 s on close, as upstream's dialer sets it,
// so probes do not pile up sockets in TIME_WAIT. An exec probe's timeout
// is a Failure (ExecProbeTimeout is GA in v1.36).
//
// Prober.Answer is the one conversion of a Result into the prober.Outcome
// core/prober takes back; the Runner drives the core's workers with it, and
// PlayLive a core/prober/timeline against a real host on a Clock (the wall
// clock, or a test's).
//
// Bad input — no handler or more than one, a port outside 1 to 65535, a
// named port the container does not have, an invalid header name, a
// negative timeout, an empty command — is Unknown with an *InputError
// naming the field and the rule, as upstream's prober.probe returns
// Unknown with an error for a port it cannot resolve.
package probe
