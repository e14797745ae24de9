// Package admissioncheck holds the checks of the preemption and admission
// invariants, the generators of pods and failure reasons they run on, and
// the translation of core pods into models/preemption's own types.
//
// Every check returns an error whose text starts with nothing but the
// problem; the caller prefixes the invariant ID. The property suites in
// properties/ (preemption, admission) and the fuzz target in fuzz/admission
// share these checks, so a test, a fuzz run and the report judge the same
// statement the same way. The package is kept small, importing only core/,
// models/, verify/cite (standard library only) and rapid, because Go's
// fuzzer slows down with the size of the test binary.
package admissioncheck
