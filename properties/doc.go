// Package properties holds nodeproof's invariant registry and one rapid state
// machine suite per subsystem.
//
// Each suite drives a core package and its reference model from models/ with
// the same generated actions, compares them after every step and checks the
// suite's invariants. `go test ./properties/...` runs every suite with
// rapid.Check; `nodeproof report` runs the same suites in-process through Run,
// so the two can never disagree about what is checked.
//
// A violation message starts with the invariant ID, so the mutant runner and
// the report can attribute every failure to the invariant that caught it.
package properties
