package allocresp

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/nodeproof/nodeproof/core/devicemanager/allocresp"
)

// FuzzAllocRespUnmarshal holds Unmarshal to its own encoder on arbitrary
// bytes: it never panics, and what it accepts Marshal writes as bytes that
// Unmarshal reads back as the same value and Marshal writes again unchanged.
// Whether it accepts exactly what protobuf accepts is
// FuzzAllocRespMatchesProtobuf's question (package fuzz). The seed corpus is
// in testdata/fuzz/FuzzAllocRespUnmarshal.
func FuzzAllocRespUnmarshal(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := allocresp.Unmarshal(b)
		if err != nil {
			return
		}
		// Plain checks, not testify: fuzz/doc.go says why.
		out := allocresp.Marshal(got)
		again, err := allocresp.Unmarshal(out)
		if err != nil {
			t.Fatalf("Unmarshal(% x) accepted; its encoding % x does not decode: %v", b, out, err)
		}
		if !reflect.DeepEqual(got, again) {
			t.Fatalf("Unmarshal(% x) accepted; its encoding % x decodes as other content:\n got %#v\nwant %#v", b, out, again, got)
		}
		if out2 := allocresp.Marshal(again); !bytes.Equal(out, out2) {
			t.Fatalf("Unmarshal(% x): Marshal is not stable: % x, then % x", b, out, out2)
		}
	})
}
