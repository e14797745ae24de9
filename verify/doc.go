// Package verify is the spine every kind of check in nodeproof shares: a
// Property (ID, kind, subsystem, statement, sources) describes an invariant
// of a suite, of the node simulation or of the admission checks, or a rule
// of the device plugin checker; a Check[S] adds when it applies to a state
// S and how it is checked (a function returning the violation), and Counts
// keeps how often each was checked and applied. CommandLine and Quote write
// every replay line with one shell quoting. It also holds the known
// findings: the contract properties that upstream's kubelet is known to
// break. It is pure (no I/O, clock or goroutines), held to core's rules,
// so that the simulation may use it too.
//
// A fidelity property says nodeproof's core does what upstream's kubelet
// does, bugs included; it is how the core earns the right to stand for
// upstream. A contract property says what Kubernetes promises its users,
// cited from the documentation or a KEP, never from upstream's code: it is
// the only kind that can find a bug in the kubelet, since the faithful core
// reproduces every one.
//
// A contract property that upstream is known to break (a finding, confirmed
// on upstream's own code) is expected to fail: a suite counts its breaches
// instead of failing, so that the known bug does not mask every other check,
// and `make findings` fails when a finding stops reproducing. A contract
// property that fails with no finding to explain it fails its suite.
package verify
