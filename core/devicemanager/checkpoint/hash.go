package checkpoint

import "strconv"

// FNV-32a parameters.
const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

// hashWriter hashes the checksum input as it is rendered, so Checksum never
// holds the rendering (which spells every byte of AllocResp in decimal).
// keep also collects the rendering, for HashInput.
//
// The rendering is go-spew's "%#v" with k8s.io/utils/dump.ForHash's
// configuration {Indent: " ", SortKeys: true, DisableMethods: true,
// SpewKeys: true, DisablePointerAddresses: true, DisableCapacities: true}.
// With it spew prefixes the top value and every struct field with its type
// in parentheses, but not slice elements, map keys or map values; prints
// strings raw; sorts map keys (integers by value, strings by bytes); and
// prints a nil slice or map as <nil> but an empty one as [] or map[].
type hashWriter struct {
	sum  uint32 // starts at fnvOffset
	keep bool
	out  []byte
}

func (h *hashWriter) str(s string) {
	if h.keep {
		h.out = append(h.out, s...)
	}
	sum := h.sum
	for i := 0; i < len(s); i++ {
		sum = (sum ^ uint32(s[i])) * fnvPrime
	}
	h.sum = sum
}

func (h *hashWriter) byte(c byte) {
	if h.keep {
		h.out = append(h.out, c)
	}
	h.sum = (h.sum ^ uint32(c)) * fnvPrime
}

func (h *hashWriter) int(k int64) {
	var num [20]byte
	for _, c := range strconv.AppendInt(num[:0], k, 10) {
		h.byte(c)
	}
}

// bytes renders a non-nil []uint8's elements in decimal, as "[10 1 255]".
// This is the bulk of a typical checksum input, so it hashes the digits in
// one loop, where the table lookups overlap FNV's serial chain of
// multiplications.
func (h *hashWriter) bytes(b []byte) {
	if len(b) == 0 {
		h.str("[]")
		return
	}
	if h.keep {
		h.out = append(h.out, '[')
		for i, c := range b {
			if i > 0 {
				h.out = append(h.out, ' ')
			}
			d := &decimal[c]
			h.out = append(h.out, d[:d[3]]...)
		}
		h.out = append(h.out, ']')
	}
	sum := (h.sum ^ '[') * fnvPrime
	for i, c := range b {
		if i > 0 {
			sum = (sum ^ ' ') * fnvPrime
		}
		d := &decimal[c]
		sum = (sum ^ uint32(d[0])) * fnvPrime
		if d[3] > 1 {
			sum = (sum ^ uint32(d[1])) * fnvPrime
			if d[3] > 2 {
				sum = (sum ^ uint32(d[2])) * fnvPrime
			}
		}
	}
	h.sum = (sum ^ ']') * fnvPrime
}

func (h *hashWriter) list(ids []string) {
	if ids == nil {
		h.str("<nil>")
		return
	}
	h.byte('[')
	for i, id := range ids {
		if i > 0 {
			h.byte(' ')
		}
		h.str(id)
	}
	h.byte(']')
}

// decimal holds each byte value's decimal digits, left-aligned, with their
// count in the last element.
var decimal = func() (t [256][4]byte) {
	for i := range t {
		s := strconv.Itoa(i)
		copy(t[i][:3], s)
		t[i][3] = byte(len(s))
	}
	return t
}()
