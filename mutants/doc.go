// Package mutants loads nodeproof's seeded bugs and measures whether the tests
// catch them. It is the measure of the tests' power: a test suite that lets a
// known bug through is not checking what it claims.
//
// A mutant is a file mutants/<subsystem>-<slug>.patch: a header of comment
// lines naming the bug, its upstream source, the checks expected to catch it
// (the "Invariant" field: invariant IDs or test functions, separated by
// commas) and the packages whose tests should fail, optionally a "Tests"
// field (a go test -run regexp, so a mutant only one suite can kill runs that
// suite alone), followed by a unified diff in `git diff` form. Load parses
// them; Check confirms that the packages and checks exist and that a Tests
// pattern selects a test function of the packages; Baseline runs a package
// set's tests, with the same -run selection, on the unpatched tree; Run
// applies one mutant and runs the tests.
//
// A kill is earned, not assumed. A failing go test counts only when one of
// the header's checks failed (otherwise the mutant is misattributed: the
// claim about which check guards the behaviour is wrong), the failure is not
// a build failure (go build skips _test.go files, go test does not) nor a
// timeout, and the killing test, re-run alone with the rapid seed it printed,
// fails again. The seed and that command are part of the result. A baseline
// that fails makes every later failure meaningless, so the command stops
// there.
//
// Run works on a scratch copy of the repository rather than with go build's
// -overlay. A copy is what a developer would get by applying the patch, so
// every kind of change works: new or deleted files, go.mod, testdata and
// files read at test time (an overlay only replaces what the compiler reads,
// while tests would still read the unpatched testdata). The copy holds the
// files `git ls-files -co --exclude-standard` lists, so uncommitted work is
// included and build output is not; outside a git work tree every file is
// copied. Builds and tests run with -trimpath: the build cache then keys
// packages by content instead of directory, so although each mutant gets a
// fresh directory only the packages the patch touches are compiled again.
package mutants
