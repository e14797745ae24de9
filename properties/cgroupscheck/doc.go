// Package cgroupscheck holds what the cgroups property suite and the
// cgroups fuzz target (fuzz/cgroups) both need to judge a node: the
// translation of core's config and pods into models/cgroups' own types, the
// comparison of core's rendered files with the model's, and the kubelet's
// resource admission that decides which nodes are in their steady state.
// Sharing them means a suite run and a fuzz run hold core to the model the
// same way.
//
// The package imports only core/ and models/ (no rapid, no testify in
// non-test files), because Go's fuzzer slows down with everything its test
// binary links (fuzz/doc.go).
package cgroupscheck
