// Package propertiestest holds suites for the tests of the code that runs
// suites (the replay and report commands): small, with an outcome the test
// chooses, so that a run, a failure and its replay are cheap to produce.
package propertiestest
