// Package plugincheck checks a device plugin against the v1beta1 device
// plugin API contract by playing the kubelet: it serves kubelet.sock in a
// directory, waits for the plugin to register, dials the plugin's socket
// and drives it with the calls a kubelet makes, drawn by rapid.
//
// Every check (a CheckSpec, built on verify.Property) has an ID (PC-...), a
// one-sentence rule, sources (the api.proto comments and documentation it
// rests on, and for a kubelet check or advice the kubelet code that makes
// it matter) and a severity: Contract (the plugin breaks the API
// contract), Kubelet (the contract is silent but a kubelet would
// misbehave) or Advice (worth fixing, harmless to the kubelet). Checks lists them in a fixed order; a Finding
// names its check's ID in Check, and its Message does not repeat it.
//
// Registration, ListAndWatch and the kubelet restart are checked once per
// run. A smoke pass makes each call once and judges the answers; then
// GetPreferredAllocation, Allocate and PreStartContainer are rapid
// properties over sequences of kubelet calls, run in-process through
// properties.Run, so a failure comes back shrunk with a replay line. Each
// call draws its devices from the latest list the plugin streamed. What a
// kubelet accepts is no finding: a refusal of a device the plugin has since
// listed as unhealthy or dropped, a re-registration on a new socket, a
// device spec or mount repeated with the same host path; the order of the
// answers to several container requests, which the kubelet never sends in
// one call, is advice. Options.ShrinkTime bounds the shrinking of each
// failing case: past it, smaller cases are tried on the plugin's answers
// kept so far, so that a hung call is not waited out again at every
// attempt. Every
// failing check is reported: after a failure the properties run again with
// its check muted (Options.Mute: judged and counted, never stopping a case)
// until nothing new fails. A Finding's Message is the one-line verdict; its
// Steps are the calls that failed and Replay the command that repeats the
// case, with the seed and the muted checks. A Result counts, for each
// check, how often it ran and how often it had something to judge
// (Applied): a check that never applied said nothing.
//
// A plugin whose Launch watches it (Process.Launch, which starts a command
// line as nodeproof plugin-check --exec does) and exits after registering
// ends the run at once with one finding naming its exit status. A run whose
// context ends (SIGINT) is Interrupted, and the failures that causes are
// not findings.
//
// Check is for programs (nodeproof plugin-check); Run is for a plugin
// author's go test, and its replay lines are go test commands that pass
// the seed and the muted checks in the environment (SeedEnv, MuteEnv),
// which Check reads.
package plugincheck
