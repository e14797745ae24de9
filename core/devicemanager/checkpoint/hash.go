package checkpoint

import (
	"slices"
	"strconv"
)

// FNV-32a parameters.
const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

// hashWriter renders the checksum input and hashes it as it goes, so
// Checksum never holds the rendering (which spells every byte of AllocResp in
// decimal). keep also collects the rendering, for HashInput.
type hashWriter struct {
	sum  uint32
	keep bool
	out  []byte
	numa []int64 // scratch for sorting NUMA keys
}

func newHashWriter(keep bool) *hashWriter {
	return &hashWriter{sum: fnvOffset, keep: keep}
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

// data renders d as go-spew does with "%#v" and the configuration
// {Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true,
// DisablePointerAddresses: true, DisableCapacities: true}. With that
// configuration spew prefixes the top value and every struct field with its
// type in parentheses, but not slice elements, map keys or map values; prints
// strings raw; sorts map keys (integers by value, strings by bytes); and
// prints a nil slice or map as <nil> but an empty one as [] or map[].
// names are the sorted keys of d.RegisteredDevices.
func (h *hashWriter) data(d Data, names []string) {
	h.str("(checkpoint.checkpointData){PodDeviceEntries:([]checkpoint.PodDevicesEntry)")
	if d.PodDeviceEntries == nil {
		h.str("<nil>")
	} else {
		h.byte('[')
		for i, e := range d.PodDeviceEntries {
			if i > 0 {
				h.byte(' ')
			}
			h.entry(e)
		}
		h.byte(']')
	}
	h.str(" RegisteredDevices:(map[string][]string)")
	if d.RegisteredDevices == nil {
		h.str("<nil>")
	} else {
		h.str("map[")
		for i, name := range names {
			if i > 0 {
				h.byte(' ')
			}
			h.str(name)
			h.byte(':')
			h.list(d.RegisteredDevices[name])
		}
		h.byte(']')
	}
	h.byte('}')
}

func (h *hashWriter) entry(e PodDevicesEntry) {
	h.str("{PodUID:(string)")
	h.str(e.PodUID)
	h.str(" ContainerName:(string)")
	h.str(e.ContainerName)
	h.str(" ResourceName:(string)")
	h.str(e.ResourceName)
	h.str(" DeviceIDs:(checkpoint.DevicesPerNUMA)")
	if e.DeviceIDs == nil {
		h.str("<nil>")
	} else {
		h.numa = h.numa[:0]
		for k := range e.DeviceIDs {
			h.numa = append(h.numa, k)
		}
		slices.Sort(h.numa)
		h.str("map[")
		for i, k := range h.numa {
			if i > 0 {
				h.byte(' ')
			}
			h.int(k)
			h.byte(':')
			h.list(e.DeviceIDs[k])
		}
		h.byte(']')
	}
	h.str(" AllocResp:([]uint8)")
	if e.AllocResp == nil {
		h.str("<nil>")
	} else {
		h.bytes(e.AllocResp)
	}
	h.byte('}')
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
