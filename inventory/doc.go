// Package inventory lists, per subsystem, what the source tree holds at each
// layer of verification: core packages, reference models, state-machine
// suites, fuzz targets, real-I/O integration tests, linearizability
// checks, conformance comparisons against upstream and mutants.
//
// The nodeproof binary cannot read the source tree it was built from, so
// the report's coverage matrix reads this checked-in list instead. A test
// regenerates the list from the tree (go test ./inventory -update) and
// fails when the two drift apart, so a new core/X package becomes a new row
// as soon as the list is regenerated.
package inventory
