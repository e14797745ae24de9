// Package report is the nodeproof report command: its flags, their
// validation and the reading of the result files to include, before any
// work; then it runs the suites, the simulation and the linearizability
// histories through reportview, writes index.html, report.md and
// report.json, and exits 1 when anything the report shows failed. With
// --merge it writes the report of a campaign's shards instead.
//
// The report itself (its schema, verdict and renderings) is the library
// reportview; this package only turns a command line into a call of it.
package report
