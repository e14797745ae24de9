// Package suites gathers every suite of properties: importing it registers
// them all, and its TestSuites runs each one as a subtest,
// TestSuites/<suite>, exactly as `nodeproof report` runs them in-process.
//
// Each suite lives in a package of its own under properties/, named for the
// subsystem it checks, and registers itself from init; the registry, the
// runner and the report's types stay in package properties, which imports
// none of them. This package is the one place that names them all, so a
// command or a test that reads properties.Suites imports it (for its side
// effect, as database/sql's drivers are imported) and sees every suite.
package suites
