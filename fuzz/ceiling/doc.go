// Package ceiling holds empty fuzz targets: the fuzzing engine's ceiling,
// the executions per second Go's fuzzer reaches when the target itself costs
// nothing. cmd/fuzzspeed runs each decoder target beside the empty target of
// the same argument types (the engine's cost of marshalling and mutating an
// input depends on them) and reports the ratio. These are the lean
// ceilings; each decoder target's package has the same-binary ones beside
// it (ceiling_test.go), which cost nothing either but link what the target
// links.
//
// The targets, lean and same-binary, build only with the fuzzceiling tag, so `make fuzz`, the
// OSS-Fuzz build and `go test ./...`, which find fuzz targets by listing
// them, do not spend time on targets that test nothing.
package ceiling
