//go:build fuzzceiling

package crianswers

import "testing"

// FuzzEmptyByteBytes is FuzzCRIAnswers's same-binary ceiling: an empty target of
// its argument types in its test binary, so with the same coverage counters
// (cmd/fuzzspeed, docs/commands/fuzzspeed.md). It builds only with the
// fuzzceiling tag, so `make fuzz`, OSS-Fuzz and `go test ./...` never see it.
func FuzzEmptyByteBytes(f *testing.F) {
	f.Fuzz(func(t *testing.T, pick byte, data []byte) {})
}
