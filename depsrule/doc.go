// Package depsrule enforces nodeproof's dependency rules and the determinism
// contract of core/ (see DESIGN.md) with a test, so that a violation fails
// `go test ./...` instead of waiting for a reviewer to notice it.
//
// The test parses every Go file under core/, sim/ (the node simulation, under
// core's contract), verify/ (the checks the simulation evaluates, under the
// same contract) and models/ with go/parser and inspects imports and syntax
// only. It also keeps the commands under cmd/ thin: their non-test files
// import only the standard library and cli/..., where each command lives.
// It needs no type information, which keeps
// it fast and free of dependencies beyond the standard library. The package
// has no code outside its test: nothing else should depend on it.
package depsrule
