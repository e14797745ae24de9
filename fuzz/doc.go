// Package fuzz holds the fuzz targets and cross-checks that need the real
// libraries nodeproof's core imitates: go-spew for the checkpoint checksum,
// the k8s.io/kubelet protobuf types for ContainerAllocateResponse
// (FuzzAllocRespMatchesProtobuf), and the property suites for the state
// machine targets.
//
// Targets that fuzz a decoder of outside input live in lean subpackages
// (checkpointdecode, allocresp, registration, manifests, crianswers,
// httpprobe), and so do the admission and preemption targets (admission).
// Go's fuzzer clears the coverage counters of the whole test binary before
// every execution and copies and compares all of them after it; on an empty
// target that is ~44 % of the worker's time, and it grows with everything
// the binary links, called or not. So, in the decoder targets' packages:
//
//   - nothing is linked that the decoder and its oracle do not need: this
//     package links gRPC and protobuf (15 times the empty target's counters),
//     so a target here runs several times slower than in a package of its
//     own;
//   - no test of the package imports testify, whose assert package links
//     net/http: it tripled the counters of checkpointdecode and registration
//     (23,215 and 22,427 bytes against 8,887 and 10,463 without it; the empty
//     target has 5,383). Their tests compare with reflect.DeepEqual and report
//     with t.Fatalf; reflect, like testing, is not instrumented;
//   - a cross-check against a heavy library is a target apart from the
//     decoder's own (FuzzAllocRespMatchesProtobuf here, beside
//     allocresp.FuzzAllocRespUnmarshal).
//
// `make fuzz-speed` (cmd/fuzzspeed, docs/commands/fuzzspeed.md) measures
// each decoder target against the empty targets of package ceiling and the
// empty target of its argument types in its own package (ceiling_test.go,
// build tag fuzzceiling), which links what the target links.
package fuzz
