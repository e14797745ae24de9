//go:build fuzzceiling

package allocresp

import "testing"

// FuzzEmptyBytes is FuzzAllocRespUnmarshal's same-binary ceiling: an empty target
// of its argument types in its test binary, so with the same coverage
// counters (cmd/fuzzspeed, docs/commands/fuzzspeed.md). It builds only with
// the fuzzceiling tag, so `make fuzz`, OSS-Fuzz and `go test ./...` never
// see it.
func FuzzEmptyBytes(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {})
}
