// Package allocresp fuzzes the hand-written decoder of the device plugin's
// ContainerAllocateResponse (core/devicemanager/allocresp) on its own: no
// panic, and whatever it accepts re-encodes to bytes that decode to the same
// value and encode to the same bytes again.
//
// It is a lean package of its own because Go's fuzzer compares the coverage
// counters of the whole test binary after every execution (fuzz/doc.go).
// The differential check against google.golang.org/protobuf, which links
// ten times this package's counters, is FuzzAllocRespMatchesProtobuf in
// package fuzz.
package allocresp
