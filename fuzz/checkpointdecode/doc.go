// Package checkpointdecode fuzzes the decoder of kubelet_internal_checkpoint
// files with an oracle: no panic, it accepts exactly what the kubelet's
// reading accepts, accepted content re-encodes and decodes back, and a single
// changed byte is rejected unless the content stays the same.
//
// It is a package of its own, importing nothing but the checkpoint codec
// (not even testify), because Go's fuzzer compares the coverage counters of
// the whole test binary after every execution: next to the gRPC and
// protobuf code the cross-checks in package fuzz link, the same target runs
// about five times slower (fuzz/doc.go).
package checkpointdecode
