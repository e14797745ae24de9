// Package properties holds nodeproof's invariant registry (Suite, Tally,
// Register, Suites, Lookup), the runner that checks a suite in-process
// (Run), the reading of rapid's fail files, the invariant catalogue and the
// search for known findings.
//
// The suites themselves live in one package per subsystem under
// properties/ (devicemanager, imagegc, prober, preemption, admission,
// cgroups, sim). Each drives a core package and its reference model from
// models/ with the same generated actions, compares them after every step
// and checks the suite's invariants, and registers itself from init. This
// package imports none of them; properties/suites imports them all and
// holds TestSuites, so that `go test ./properties/suites` and `nodeproof
// report`, which runs the same suites in-process through Run, can never
// disagree about what is checked.
//
// A violation message starts with the invariant ID, so the mutant runner and
// the report can attribute every failure to the invariant that caught it.
package properties
