//go:build fuzzceiling

package ceiling

import "testing"

// FuzzEmptyBytes is the ceiling of the targets of one []byte.
func FuzzEmptyBytes(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {})
}

// FuzzEmptyThreeStrings is the ceiling of FuzzRegisterRequest's (version,
// endpoint, name).
func FuzzEmptyThreeStrings(f *testing.F) {
	f.Fuzz(func(t *testing.T, a, b, c string) {})
}

// FuzzEmptyByteBytes is the ceiling of FuzzCRIAnswers's (pick, data).
func FuzzEmptyByteBytes(f *testing.F) {
	f.Fuzz(func(t *testing.T, pick byte, data []byte) {})
}

// FuzzEmptyStringsBytes is the ceiling of FuzzHTTPProbeResponse's (status,
// headers, body).
func FuzzEmptyStringsBytes(f *testing.F) {
	f.Fuzz(func(t *testing.T, a, b string, data []byte) {})
}

// FuzzEmptyBytesBool is the ceiling of FuzzDecodeManifests's (data,
// skipUnknown).
func FuzzEmptyBytesBool(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, skipUnknown bool) {})
}
