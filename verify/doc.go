// Package verify holds what every kind of check in nodeproof shares: the
// kind of a property (fidelity or contract) and the known findings, the
// contract properties that upstream's kubelet is known to break.
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
