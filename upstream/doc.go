// Package upstream runs the conformance module against the kubelet
// releases the Go module proxy serves, and turns what each release's tests
// say into the release matrix: for every confirmed finding, present,
// absent or not run per release; for every comparison of nodeproof's core
// with upstream, agrees or differs.
//
// One source tree serves every release: the conformance module's go.mod
// pins the release nodeproof's core models (Modelled), and each other
// release has a module file of its own (conformance/releases/<v>.mod,
// passed to the go command as -modfile) and a build tag that selects the
// small shims where upstream's API changed. A finding test logs a Verdict
// line on a release other than the modelled one instead of failing, so a
// fix reads as the finding's absence while a harness that cannot drive the
// release still fails.
//
// Fidelity and contract stay apart here too: a comparison that differs on
// another release is a behaviour change between releases (the core models
// v1.36), not a bug; a finding absent on a release is a broken promise that
// release keeps.
package upstream
