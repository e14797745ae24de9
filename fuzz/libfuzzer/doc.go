// Package libfuzzer prepares nodeproof's native Go fuzz targets for a
// libFuzzer build as OSS-Fuzz and ClusterFuzzLite make it
// (compile_native_go_fuzzer, which runs go-118-fuzz-build).
//
// It finds every target in the source tree by itself, so a new Fuzz function
// joins the build without a list to edit, and says of each whether
// go-118-fuzz-build can run it and, if not, why. It also turns a target's Go
// corpus files ("go test fuzz v1", one Go literal per argument) into the raw
// bytes a go-118-fuzz-build harness reads: that harness decodes its
// arguments from libFuzzer's input with go-fuzz-headers, so a Go corpus file
// given as is would be read as a length prefix and never reach the target.
package libfuzzer
