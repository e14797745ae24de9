// Package propertiestest holds what the tests of suites and of the code
// that runs them share: small suites whose outcome the test chooses (the
// replay and report commands' tests), so that a run, a failure and its
// replay are cheap to produce, and the check that a subsystem's contract
// suite judges another system under test exactly as its registered suite
// judges core (JudgesAsRegistered).
package propertiestest
