//go:build fuzzceiling

package manifests

import "testing"

// The same-binary ceilings of this package's targets: empty targets of their
// argument types in their test binary, so with the same coverage counters
// (cmd/fuzzspeed, docs/commands/fuzzspeed.md). They build only with the
// fuzzceiling tag, so `make fuzz`, OSS-Fuzz and `go test ./...` never see
// them.

// FuzzEmptyBytes is FuzzProbeSpecs's same-binary ceiling.
func FuzzEmptyBytes(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {})
}

// FuzzEmptyBytesBool is FuzzDecodeManifests's same-binary ceiling.
func FuzzEmptyBytesBool(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, skipUnknown bool) {})
}
